"""Agent Skills folders for skill tests, written in the open format: a subfolder per skill holding a SKILL.md (its
name and description in the front matter, the instructions below) and the skill's other files."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def write_skill(
    skills: Path, name: str, description: str, instructions: str, files: Mapping[str, str] | None = None
) -> Path:
    """The skill ``name`` written into the folder ``skills`` (made if missing), with ``files`` (their text by their
    paths inside the skill); its folder."""
    folder = skills / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n{instructions}\n")
    for path, text in (files or {}).items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text)
    return folder
