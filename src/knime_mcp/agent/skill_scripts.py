"""Running a script of an Agent Skill, for the ``run_skill_script`` tool a person allowed (*Run skill scripts*,
``--allow-skill-scripts``, ``AgentConfig(skill_scripts=True)``).

Layer: core (agent), between :mod:`knime_mcp.agent.skills` (which resolves the script inside its skill's folder and
refuses ``..``, absolute paths and links leading out of it) and :mod:`knime_mcp.agent.skill_tools` (which offers the
tool). A script runs as a program tool does (:func:`knime_mcp.programs.run_program`): no shell, each argument one
element of the command line, in the skill's folder, with only the few variables program tools get from this process's
environment, stopped with every process it started after a program tool's default timeout (60 s) or when the run
is cancelled, its output bounded as a program tool's; exit 0 gives its output, another exit a tool error with the
end of its stderr.

The interpreter follows the file's extension (:data:`INTERPRETERS`); any other file runs only if it is executable.

    result = await run_script(skill, "scripts/summarize.py", ["data.csv"])
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from knime_mcp.errors import ToolCallError

if TYPE_CHECKING:
    from knime_mcp.agent.skills import Skill
    from knime_mcp.config.program import ProgramSpec
    from knime_mcp.tools.results import ToolResult

__all__ = ["INTERPRETERS", "RUN_SKILL_SCRIPT", "run_script", "script_program"]

RUN_SKILL_SCRIPT = "run_skill_script"
"""The tool's name, and the program's in its messages."""

INTERPRETERS = {".py": sys.executable, ".sh": "bash", ".js": "node"}
"""The program that runs a script, by its file's extension: Python scripts with this Python (KNIME's own, in KNIME),
shell scripts with ``bash`` and JavaScript with ``node`` from the ``PATH``."""


def script_program(skill: Skill, relative: str, arguments: Sequence[str]) -> tuple[ProgramSpec, dict[str, str]]:
    """The program that runs the skill's script at ``relative`` with ``arguments``, and the values of its command
    line's placeholders: the script's path and the arguments fill placeholders, so that no brace in them is read as
    one. A path the skill refuses, or a file that is no script and not executable, is a :class:`ToolCallError`."""
    from knime_mcp.config.program import ProgramSpec

    path = skill.path(relative)
    interpreter = INTERPRETERS.get(path.suffix.lower())
    if interpreter is None and not os.access(path, os.X_OK):
        raise ToolCallError(
            f"The file {relative!r} of the skill {skill.name!r} is not a script that can be run: not a Python (.py), "
            "shell (.sh) or JavaScript (.js) file, and not executable.",
            hint="Run one of the skill's scripts, or do what the skill asks with the other tools.",
        )
    values = {"script": str(path)} | {f"arg{number}": text for number, text in enumerate(arguments, start=1)}
    placeholders = tuple(f"{{{name}}}" for name in values)
    command, args = (interpreter, placeholders) if interpreter else (str(path), placeholders[1:])
    program = ProgramSpec(
        name=RUN_SKILL_SCRIPT,
        command=command,
        args=args,
        description=f"The script {relative!r} of the skill {skill.name!r}.",
        cwd=str(skill.folder),
    )
    return program, values


async def run_script(skill: Skill, relative: str, arguments: Sequence[str]) -> ToolResult:
    """One run of the skill's script at ``relative`` (see :func:`script_program`), as a program tool's call."""
    from knime_mcp.programs import run_program

    program, values = script_program(skill, relative, arguments)
    return await run_program(program, values)
