"""Agent Skills: read a skills folder into :class:`Skill` objects, each a subfolder with a ``SKILL.md``.

Layer: core (agent), below :mod:`knime_mcp.agent.skill_tools`, which offers them to the model. The format is the open
Agent Skills specification (agentskills.io, ``spec/agent-skills-spec.md`` in github.com/anthropics/skills): YAML front
matter with ``name`` and ``description`` (and optional ``license``, ``compatibility``, ``metadata``,
``allowed-tools``), the instructions below it, other files beside it. A folder is not trusted to be well formed: a
subfolder that breaks the specification (no or bad front matter, a name it forbids or that differs from the folder's,
a description too long) is left out with a warning naming it and why; links that lead out of the skills folder or
out of a skill's own folder are never followed; files are read only up to a size cap. Nothing in a skill is run
unless a person allows the skills' scripts (:mod:`knime_mcp.agent.skill_scripts`).

    skills, warnings = load_skills(Path("~/skills").expanduser())
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from knime_mcp.errors import ConfigError, ToolCallError

__all__ = [
    "MAX_FILE_BYTES", "MAX_LISTED_FILES", "MAX_SKILLS", "MAX_SKILL_MD_BYTES", "SKILL_FILE", "Skill", "load_skills",
]  # fmt: skip

SKILL_FILE = "SKILL.md"
MAX_SKILL_MD_BYTES = 256 * 1024
"""A larger ``SKILL.md`` is refused: the specification recommends under 500 lines, and the model reads it whole."""
MAX_FILE_BYTES = 1024 * 1024
"""The largest file of a skill the model may read; the tool output cap then cuts what reaches it."""
MAX_SKILLS = 100
"""Skills offered at most: every one costs its description in every model call."""
MAX_LISTED_FILES = 200
"""Files of one skill listed at most, so that a skill holding a whole tree cannot flood the model's context."""

_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_MAX_NAME = 64
_MAX_DESCRIPTION = 1024
_MAX_COMPATIBILITY = 500
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)^---[ \t]*\r?$\n?", re.DOTALL | re.MULTILINE)


@dataclass(frozen=True, kw_only=True)
class Skill:
    """One valid skill: what the model is told of it up front, and what it reads when it chooses the skill."""

    name: str
    description: str
    folder: Path
    """The skill's folder, resolved (links followed): every file read must lie inside it."""
    instructions: str
    """The body of ``SKILL.md`` below its front matter."""
    compatibility: str | None = None

    def files(self) -> tuple[list[str], bool]:
        """The skill's files (not ``SKILL.md``) as paths relative to its folder, sorted, and whether the listing was
        cut at :data:`MAX_LISTED_FILES`. Hidden files and folders and links that lead out of the folder are left
        out; links are not followed into folders (``os.walk`` does not)."""
        found: list[str] = []
        for root, folders, names in os.walk(self.folder):
            folders[:] = sorted(name for name in folders if not name.startswith("."))
            for name in sorted(names):
                path = Path(root, name)
                if name.startswith(".") or path == self.folder / SKILL_FILE or not self._inside(path):
                    continue
                if len(found) == MAX_LISTED_FILES:
                    return found, True
                found.append(path.relative_to(self.folder).as_posix())
        return found, False

    def read(self, relative: str) -> bytes:
        """The bytes of one file of the skill, by its path relative to the skill's folder; a path :meth:`path`
        refuses, or a file over :data:`MAX_FILE_BYTES`, is a tool error."""
        path = self.path(relative)
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ToolCallError(
                f"The file {relative!r} of the skill {self.name!r} is {size:,} bytes, over the {MAX_FILE_BYTES:,}-byte "
                "limit for skill files: not read.",
                hint="Work without it, and tell the user the file is too large to read.",
            )
        return path.read_bytes()

    def path(self, relative: str) -> Path:
        """One file of the skill by its path relative to the skill's folder, resolved; a path leading out of it
        (``..``, an absolute path, a link) or to no file is a tool error."""
        hint = f"Call load_skill with {self.name!r} to list its files, and pass one of those paths."
        parts = PurePosixPath(relative.replace("\\", "/"))
        if not relative.strip() or parts.is_absolute() or ".." in parts.parts or re.match(r"^[A-Za-z]:", relative):
            raise ToolCallError(
                f"{relative!r} is not a path inside the skill {self.name!r}: give a path relative to its folder.",
                hint=hint,
            )
        path = self.folder.joinpath(*parts.parts)
        if not self._inside(path):
            raise ToolCallError(f"{relative!r} leads out of the skill {self.name!r}'s folder: refused.", hint=hint)
        if not path.is_file():
            raise ToolCallError(f"The skill {self.name!r} has no file {relative!r}.", hint=hint)
        return path.resolve()

    def _inside(self, path: Path) -> bool:
        return path.resolve().is_relative_to(self.folder)


def load_skills(folder: str | os.PathLike[str]) -> tuple[list[Skill], list[str]]:
    """The valid skills of ``folder`` (its subfolders holding a ``SKILL.md``), by name, and a warning for every
    subfolder left out; a folder that does not exist is a :class:`ConfigError`."""
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise ConfigError(
            f"The skills folder {str(root)!r} does not exist or is not a folder.",
            hint="Choose a folder whose subfolders each hold a SKILL.md, or leave the skills folder empty.",
        )
    root = root.resolve()
    skills: list[Skill] = []
    warnings: list[str] = []
    for entry in sorted(root.iterdir()):
        if entry.name.startswith(".") or not entry.is_dir():
            continue
        try:
            skill = _skill(root, entry)
        except _Invalid as problem:
            warnings.append(f"Skill folder {entry.name!r} left out: {problem}")
            continue
        if len(skills) == MAX_SKILLS:
            warnings.append(f"Only the first {MAX_SKILLS} skills (by folder name) are offered; the rest are left out.")
            break
        skills.append(skill)
    if not skills:
        warnings.append(f"The skills folder {str(root)!r} holds no valid skills (subfolders with a SKILL.md).")
    return skills, warnings


class _Invalid(Exception):
    """Why a subfolder is not a skill, said after its name."""


def _skill(root: Path, entry: Path) -> Skill:
    folder = entry.resolve()
    if not folder.is_relative_to(root) or folder == root:
        raise _Invalid("it is a link that leads out of the skills folder.")
    skill_md = entry / SKILL_FILE
    if not skill_md.is_file():
        raise _Invalid(f"it has no {SKILL_FILE}.")
    if not skill_md.resolve().is_relative_to(folder):
        raise _Invalid(f"its {SKILL_FILE} is a link that leads out of its folder.")
    if (size := skill_md.stat().st_size) > MAX_SKILL_MD_BYTES:
        raise _Invalid(f"its {SKILL_FILE} is {size:,} bytes, over the {MAX_SKILL_MD_BYTES:,}-byte limit.")
    try:
        text = skill_md.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise _Invalid(f"its {SKILL_FILE} is not UTF-8 text.") from None
    fields, instructions = _front_matter(text)
    name = _text(fields, "name", _MAX_NAME)
    if not _NAME.fullmatch(name):
        raise _Invalid(
            f"its name {name!r} is not one the specification allows (lowercase letters, digits and single hyphens, "
            "not at the start or end)."
        )
    if name != entry.name:
        raise _Invalid(f"its name {name!r} differs from its folder's name; the specification asks them to match.")
    compatibility = None if fields.get("compatibility") is None else _text(fields, "compatibility", _MAX_COMPATIBILITY)
    if "metadata" in fields and not isinstance(fields["metadata"], Mapping):
        raise _Invalid("its metadata is not a mapping of keys to values.")
    return Skill(
        name=name,
        description=" ".join(_text(fields, "description", _MAX_DESCRIPTION).split()),
        folder=folder,
        instructions=instructions.strip(),
        compatibility=compatibility,
    )


def _front_matter(text: str) -> tuple[dict[str, Any], str]:
    """The front matter's fields and the instructions below it."""
    import yaml

    match = _FRONT_MATTER.match(text)
    if match is None:
        raise _Invalid(f"its {SKILL_FILE} has no front matter (YAML between two '---' lines at its top).")
    try:
        fields = yaml.safe_load(match[1])
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" (line {where.line + 2} of {SKILL_FILE})" if where is not None else ""
        raise _Invalid(f"its front matter is not valid YAML{line}: {getattr(exc, 'problem', None) or exc}.") from None
    if not isinstance(fields, dict):
        raise _Invalid("its front matter is not a mapping of fields (name: ..., description: ...).")
    return fields, text[match.end() :]


def _text(fields: Mapping[str, Any], key: str, limit: int) -> str:
    value = fields.get(key)
    if not isinstance(value, str) or not value.strip():
        raise _Invalid(f"its front matter has no {key} (text, required by the specification).")
    if len(value) > limit:
        raise _Invalid(f"its {key} has {len(value):,} characters; the specification allows at most {limit:,}.")
    return value.strip()
