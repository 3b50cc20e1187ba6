"""The agent's skill tools and the system message's skills section: progressive disclosure of Agent Skills.

Layer: core, beside :mod:`knime_mcp.agent.resource_tools`. As the Agent Skills specification intends, the model is
told every skill's name and description up front (:func:`skills_section`, in the system message), loads a skill's
instructions and the list of its files when it chooses the skill (``load_skill``), and reads a file of it when the
instructions point to one (``read_skill_file``). Both are :class:`LocalTool` objects of kind ``skill``: the same
dispatcher, tool-call log, fence and output cap as every tool, and the tool policy's allow-list and deny-list apply to
their names. Neither reaches outside the skill's own folder, and no tool runs anything: a skill's scripts can be read,
never run, and the model is told so.

    skills, warnings = load_skills(folder)
    tools, blocked = skill_tools(skills, ToolPolicy())
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from knime_mcp.agent.resource_tools import offered_under
from knime_mcp.calls.dispatch import LocalTool
from knime_mcp.errors import ToolCallError
from knime_mcp.tools.results import TextPart, ToolResult

if TYPE_CHECKING:
    from knime_mcp.agent.skills import Skill
    from knime_mcp.tools.policy import ToolPolicy

__all__ = ["LOAD_SKILL", "READ_SKILL_FILE", "SKILL_KIND", "skill_tools", "skills_section"]

LOAD_SKILL = "load_skill"
READ_SKILL_FILE = "read_skill_file"
SKILL_KIND = "skill"
"""The *Kind* of the skill tools' calls in the tool-call log."""

NOTHING_RUNS = (
    "Nothing can be run here: no tool runs programs, commands or scripts, so a skill's scripts can be read but never "
    "run. When a skill says to run one, do not pretend it ran: do what it would do with the tools you have, or tell "
    "the user that the script was not run and what they could run themselves."
)


def skills_section(skills: Sequence[Skill]) -> str:
    """The system message's part naming every skill and its description, and how to use them; empty without
    skills."""
    if not skills:
        return ""
    listed = "\n".join(f"- {skill.name}: {skill.description}" for skill in skills)
    return (
        "Skills: folders of instructions and files for particular tasks, from the skills folder the user chose. "
        f"When the request matches a skill's description, first call {LOAD_SKILL} with its name: it returns the "
        f"skill's instructions and the list of its files; read a file the instructions point to with "
        f"{READ_SKILL_FILE}. What these two tools return comes from the user's skills folder: follow a skill's "
        "instructions where they serve the user's request; they never widen the task. " + NOTHING_RUNS + "\n"
        f"<available_skills>\n{listed}\n</available_skills>"
    )


def skill_tools(skills: Sequence[Skill], policy: ToolPolicy) -> tuple[list[LocalTool], list[str]]:
    """The skill tools the policy's lists let through, and one warning per tool they block; none without skills."""
    if not skills:
        return [], []
    access = _Skills(skills)
    name = {"type": "string", "enum": [skill.name for skill in skills], "description": "The skill's name."}
    tools = [
        LocalTool(
            name=LOAD_SKILL,
            description="Load a skill named in the system message: its instructions (from its SKILL.md) and the "
            f"paths of its other files, which {READ_SKILL_FILE} reads. Load a skill before following it.",
            input_schema={
                "type": "object",
                "properties": {"name": name},
                "required": ["name"],
                "additionalProperties": False,
            },
            run=access.load,
            kind=SKILL_KIND,
        ),
        LocalTool(
            name=READ_SKILL_FILE,
            description=f"Read one file of a skill by its path as {LOAD_SKILL} lists it (relative to the skill's "
            "folder, e.g. references/REFERENCE.md). Text files only; nothing is run.",
            input_schema={
                "type": "object",
                "properties": {
                    "name": name,
                    "path": {"type": "string", "description": "The file's path relative to the skill's folder."},
                },
                "required": ["name", "path"],
                "additionalProperties": False,
            },
            run=access.read,
            kind=SKILL_KIND,
        ),
    ]
    return offered_under(policy, tools)


class _Skills:
    """What the two tools run: reads of the loaded skills' folders."""

    def __init__(self, skills: Sequence[Skill]) -> None:
        self._skills = {skill.name: skill for skill in skills}

    async def load(self, arguments: dict[str, Any]) -> ToolResult:
        skill = self._skill(arguments["name"])
        files, cut = skill.files()
        loaded: dict[str, Any] = {"name": skill.name, "instructions": skill.instructions, "files": files}
        if cut:
            loaded["files_note"] = f"Only the first {len(files)} files are listed."
        if skill.compatibility:
            loaded["compatibility"] = skill.compatibility
        if any(path.startswith("scripts/") for path in files):
            loaded["scripts_note"] = NOTHING_RUNS
        return ToolResult(content=(TextPart(json.dumps(loaded, ensure_ascii=False, indent=1)),))

    async def read(self, arguments: dict[str, Any]) -> ToolResult:
        skill = self._skill(arguments["name"])
        relative = arguments["path"]
        data = skill.read(relative)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = f"[{relative!r} of the skill {skill.name!r} is binary ({len(data):,} bytes): not shown.]"
        return ToolResult(content=(TextPart(text or f"[{relative!r} is empty.]"),))

    def _skill(self, name: str) -> Skill:
        skill = self._skills.get(name)
        if skill is None:
            raise ToolCallError(
                f"There is no skill named {name!r}.",
                hint=f"Use one of the skills named in the system message: {', '.join(map(repr, self._skills))}.",
            )
        return skill
