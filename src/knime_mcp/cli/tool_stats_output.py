"""The command line's ``--stats``: the statistics of a run's tool calls per tool (:mod:`knime_mcp.agent.tool_stats`),
printed after the run by ``agent``, ``chat`` and ``call-table``.

Layer: faces (cli). Kept apart from :mod:`knime_mcp.cli.agent` so that module stays light: the statistics load only
when ``--stats`` asks for them.
"""

from __future__ import annotations

import argparse
from typing import Any, TextIO

__all__ = ["add_stats_option", "stats_rows", "write_stats"]


def add_stats_option(parser: argparse.ArgumentParser, when: str) -> None:
    """``--stats``, printed ``when`` (the command's words)."""
    parser.add_argument(
        "--stats",
        action="store_true",
        help=f"print each tool's statistics {when}: calls, errors, median and slowest duration (the 95th percentile "
        "from 20 calls), mean and largest result size",
    )


def write_stats(log: Any, out: TextIO) -> None:
    """The statistics of ``log`` (a run's entries, or a log table) as text lines on ``out``."""
    from knime_mcp.agent.tool_stats import tool_statistics
    from knime_mcp.cli.render import render_tool_stats

    out.write(render_tool_stats(tool_statistics(log)))


def stats_rows(log: Any) -> list[dict[str, Any]]:
    """The statistics of ``log`` as JSON objects, keyed as the Tool Statistics node's columns."""
    from knime_mcp.agent.tool_stats import STATS_COLUMNS, tool_statistics

    return [dict(zip([name for name, _ in STATS_COLUMNS], row.values(), strict=True)) for row in tool_statistics(log)]
