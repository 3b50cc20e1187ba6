"""Plain-text rendering of tool lists for terminals; no third-party imports, so the default CLI output stays fast."""

from __future__ import annotations

import shutil
from collections.abc import Sequence

from knime_mcp.tool import MCPTool

__all__ = ["render_tools"]


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


def render_tools(tools: Sequence[MCPTool], width: int | None = None) -> str:
    """One line per tool: name, hints, parameters and description, clipped to the terminal width."""
    width = width or shutil.get_terminal_size((120, 24)).columns
    rows = [
        (tool.name, _flags(tool), ", ".join(tool.parameter_schema.get("properties", {})), tool.description)
        for tool in tools
    ]
    header = ("NAME", "HINTS", "PARAMETERS", "DESCRIPTION")
    name_w = max([len(header[0]), *(len(r[0]) for r in rows)])
    flag_w = max([len(header[1]), *(len(r[1]) for r in rows)])
    param_w = min(max([len(header[2]), *(len(r[2]) for r in rows)]), 40)
    desc_w = max(width - name_w - flag_w - param_w - 6, 20)
    lines = [
        f"{name:<{name_w}}  {flags:<{flag_w}}  {_clip(params, param_w):<{param_w}}  {_clip(desc, desc_w)}".rstrip()
        for name, flags, params, desc in [header, *rows]
    ]
    lines.append(f"{len(rows)} tool{'s' if len(rows) != 1 else ''}")
    return "\n".join(lines) + "\n"
