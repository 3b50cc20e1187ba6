"""A program tool's call as its command line: each element of the argument template filled with the call's values.

Layer: wire, below :mod:`knime_mcp.programs.runner`. No shell ever sees the line: each template element is one
element of the program's ``argv``, whatever the values hold (spaces, quotes, ``$(…)``, ``;``, ``*``, new lines).
Values that are not text are written as a program reads them: objects and lists as JSON, numbers as Python writes
them, ``true``/``false``, and ``null`` as nothing.

    command_line(ProgramSpec(name="wc", command="wc", args=("-w", "{path}")), {"path": "my file.txt"})
    # ["wc", "-w", "my file.txt"]
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from knime_mcp.config.program import PLACEHOLDER, ProgramSpec
from knime_mcp.errors import ToolCallError

__all__ = ["argument_text", "command_line"]


def command_line(program: ProgramSpec, arguments: Mapping[str, Any]) -> list[str]:
    """The program and its template's elements, each placeholder replaced by its argument's text; a placeholder
    without an argument is a :class:`ToolCallError` naming it."""
    if missing := [name for name in program.placeholders if name not in arguments]:
        raise ToolCallError(
            f"Program tool {program.name!r} needs the argument {missing[0]!r}, which the call did not give.",
            server=program.name,
            hint=f"Call the tool again with a value for {missing[0]!r}.",
        )
    texts = {name: argument_text(program.name, name, arguments[name]) for name in program.placeholders}
    return [program.command, *(PLACEHOLDER.sub(lambda match: _filled(match, texts), arg) for arg in program.args)]


def argument_text(tool: str, name: str, value: Any) -> str:
    """One argument's value as command-line text."""
    match value:
        case str():
            text = value
        case bool():
            text = "true" if value else "false"
        case None:
            text = ""
        case int() | float():
            text = str(value)
        case _:
            text = json.dumps(value, ensure_ascii=False)
    if "\0" in text:
        raise ToolCallError(
            f"The argument {name!r} of program tool {tool!r} holds a NUL character, which a command line cannot.",
            server=tool,
            hint="Call the tool again without it.",
        )
    return text


def _filled(match: re.Match[str], texts: Mapping[str, str]) -> str:
    if match.group(1) is None:
        return match.group(0)[0]  # "{{" or "}}": one brace
    return texts[match.group(1)]
