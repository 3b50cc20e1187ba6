"""Plain-text rendering for terminals (tool lists, agent runs); no third-party imports, so CLI output stays fast.

Whatever a server wrote (tool names, descriptions, results, errors) goes through :func:`terminal_safe` before the CLI
prints it, so a server cannot drive the terminal it is shown in; what goes to stderr one line per message (errors,
log records, progress, notes) goes through :func:`one_line`, so a server cannot forge a line there either.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from knime_mcp.redaction import redact
from knime_mcp.tools.permissions import needed_permissions

if TYPE_CHECKING:
    from knime_mcp.agent.loop import AgentRun
    from knime_mcp.agent.tool_stats import ToolStats
    from knime_mcp.tools.tool import MCPTool

__all__ = ["json_tools", "one_line", "render_agent_run", "render_tool_stats", "render_tools", "terminal_safe"]

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""C0 controls but tab and newline, DEL, and C1 controls (U+0080 to U+009F; U+009B is an 8-bit escape sequence)."""


def terminal_safe(text: str) -> str:
    """``text`` with every control character but newline and tab written as a ``\\uXXXX`` escape.

    A server's text must not move the cursor, clear the screen, rename the window, hide lines behind a carriage
    return or plant a hyperlink: all of that starts with such a character (ESC above all), and escaped it prints as
    plain text. The escape is JSON's, so JSON output stays JSON, with the same strings.
    """
    return _CONTROL.sub(_escaped, text)


_LINE_BREAKS = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")
"""The controls of :data:`_CONTROL`, newline, and the Unicode line and paragraph separators."""


def one_line(text: str) -> str:
    """``text`` as :func:`terminal_safe` writes it, and with its line breaks escaped too: a message printed as one
    line (``Error: …``, a log record, progress) stays one line, so a server cannot append a line of its own making."""
    return _LINE_BREAKS.sub(_escaped, text)


def _escaped(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def _flags(tool: MCPTool) -> str:
    hints = tool.annotations
    marks = [
        ("read-only", hints.read_only),
        ("destructive", hints.destructive),
        ("idempotent", hints.idempotent),
    ]
    return ",".join(label for label, on in marks if on) or "-"


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def json_tools(tools: Sequence[MCPTool]) -> list[dict[str, Any]]:
    """The tools as ``--format json`` writes them: each tool's cell, its app keys always (a cell has them only when
    set) and the permissions it needs (worked out, never stored: a tools file read back works them out again)."""
    return [
        {
            **tool.to_dict(),
            "app_uri": tool.app_uri,
            "app_only": tool.app_only,
            "permissions": [*needed_permissions(tool)],
        }
        for tool in tools
    ]


def render_tools(tools: Sequence[MCPTool], width: int | None = None) -> str:
    """One line per tool: name, hints, the permissions it needs, its MCP App (a column only when a tool has one),
    parameters and description, clipped to the terminal width."""
    width = width or shutil.get_terminal_size((120, 24)).columns
    apps = any(tool.app_uri is not None or tool.app_only for tool in tools)
    rows = [_tool_row(tool, apps) for tool in tools]
    header = ("NAME", "HINTS", "PERMISSIONS", *(("APP",) if apps else ()), "PARAMETERS", "DESCRIPTION")
    param_w = min(max([len(header[-2]), *(len(r[-2]) for r in rows)]), 40)
    clipped = [(*row[:-2], _clip(row[-2], param_w), row[-1]) for row in [header, *rows]]
    used = sum(max(len(row[i]) for row in clipped) + 2 for i in range(len(header) - 1))
    desc_w = max(width - used, 20)
    lines = _aligned([(*row[:-1], _clip(row[-1], desc_w)) for row in clipped])
    lines.append(f"{len(rows)} tool{'s' if len(rows) != 1 else ''}")
    return "\n".join(lines) + "\n"


def _tool_row(tool: MCPTool, apps: bool) -> tuple[str, ...]:
    """Name, hints, permissions, the app (with ``apps``), parameters and description; what the server wrote is made
    :func:`terminal_safe` before it is measured for the columns."""
    parameters = ", ".join(tool.parameter_schema.get("properties", {}))
    app = (_app(tool),) if apps else ()
    permissions = ",".join(needed_permissions(tool))
    return (
        terminal_safe(tool.name), _flags(tool), permissions, *app, terminal_safe(parameters),
        terminal_safe(tool.description),
    )  # fmt: skip


_APP_CHARS = 50
"""The most characters of an app's URI in the APP column."""


def _app(tool: MCPTool) -> str:
    """The APP column: the app's URI, and ``(app only)`` for a tool only its app may call."""
    uri = "-" if tool.app_uri is None else _clip(terminal_safe(tool.app_uri), _APP_CHARS)
    return f"{uri} (app only)" if tool.app_only else uri


def render_agent_run(run: AgentRun) -> str:
    """The conversation, one block per message, then the tool-call log as aligned columns."""
    lines = []
    for row in run.conversation.rows():
        label = row["Role"] + (f" {row['Tool Name']} [{row['Tool Call ID']}]" if row["Role"] == "tool" else "")
        if row["Content"]:
            lines.append(f"[{label}] {row['Content']}")
        for call in json.loads(row["Tool Calls"] or "[]"):
            arguments = json.dumps(redact(call["arguments"]), ensure_ascii=False)
            lines.append(f"[{label}] -> {call['name']} {arguments} [{call['id']}]")
        if row["Images"]:
            lines.append(f"[{label}] ({len(json.loads(row['Images']))} image(s))")
    header = ("TURN", "ID", "TOOL", "KIND", "SERVER", "STATUS", "MS", "SIZE", "ERROR")
    table = [header] + [
        (str(e.turn), e.tool_call_id, e.tool, e.kind, e.server or "-", e.status, f"{e.duration_ms:.0f}",
         str(e.result_size), " ".join((e.error or "").split()))
        for e in run.log
    ]  # fmt: skip
    lines = [*map(terminal_safe, lines), "", f"Tool calls: {len(run.log)}"]
    lines += _aligned([tuple(map(terminal_safe, row)) for row in table])
    return "\n".join(lines) + "\n"


def _aligned(rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows as lines of left-aligned columns two spaces apart; the last column is left as long as it is."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = []
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row[:-1], widths, strict=True)]
        lines.append("  ".join([*cells, row[-1]]).rstrip())
    return lines


def render_tool_stats(stats: Sequence[ToolStats]) -> str:
    """``--stats``: one line per tool, under a heading: calls, errors, median and slowest duration, mean and largest
    result size (``-`` where no call gives one)."""
    header = ("TOOL", "SERVER", "CALLS", "ERRORS", "MEDIAN MS", "SLOWEST MS", "MEAN SIZE", "LARGEST SIZE")

    def number(value: float | None) -> str:
        return "-" if value is None else f"{value:,.0f}"

    rows = [
        (one_line(row.tool), one_line(row.server or "-"), str(row.calls), str(row.errors))
        + tuple(map(number, (row.median_ms, row.slowest_ms, row.mean_result_size, row.largest_result_size)))
        for row in stats
    ]
    return "Tool statistics:\n" + "\n".join(_aligned([header, *rows])) + "\n"
