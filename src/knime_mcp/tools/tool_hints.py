"""A person's hints for a tool, the expected time of a call and its cost, as the agents tell them to a model.

Layer: values, below :mod:`knime_mcp.tools.tool` (whose :attr:`~knime_mcp.tools.tool.MCPTool.hints` holds them) and
:mod:`knime_mcp.tools.tool_columns`, which reads them from a tools table's columns and cleans them.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MAX_COST_CHARS", "ToolHints"]

MAX_COST_CHARS = 80
"""Characters of a *Cost* cell the model is told at most: "0.02 USD per call" needs 17; every model call carries
the hint of every offered tool."""


@dataclass(frozen=True, kw_only=True)
class ToolHints:
    """What a person says a tool's call takes: the hints the agents may add to its description."""

    expected_seconds: float | None = None
    """Seconds a call takes, as the person expects it; None: no hint."""

    cost: str | None = None
    """Cleaned text: one line, no control characters, at most :data:`MAX_COST_CHARS` characters."""

    def sentence(self) -> str:
        """The one fixed sentence the model is told, e.g. ``(Hints from the person running this agent: a call
        takes about 2.5 s; it costs 0.02 USD per call.)``."""
        parts = [f"a call takes about {self.expected_seconds:g} s" if self.expected_seconds is not None else None]
        parts.append(f"it costs {self.cost}" if self.cost is not None else None)
        return f"(Hints from the person running this agent: {'; '.join(filter(None, parts))}.)"
