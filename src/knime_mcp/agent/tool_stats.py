"""Tool statistics: a tool-call log summarised per tool, so a person sees which tools are slow, fail or answer at
length (the *Tool Statistics* node, the CLI's ``--stats``, :func:`tool_statistics` in Python).

Layer: core (agent). It reads the agents' log (:mod:`knime_mcp.agent.call_log`: its entries, their ``to_dict``
records, or the log as a table, several logs concatenated) and the Tool Caller's output with a *Tool* column added
(its *Is error*, *Duration (ms)* and *Result* columns stand for the log's *Status*, *Duration (ms)* and *Result
Size*). A call counts once it was asked for: the log's notes that a server's tools changed, and calls still awaiting
a person's approval, are no calls. Durations count the calls that reached their tool (not those refused before it:
blocked, denied, unknown tools, invalid arguments); result sizes count the calls that succeeded.

    stats = tool_statistics(run.log)
    statistics_table(stats).to_pandas()
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from knime_mcp.agent.call_log import TOOLS_CHANGED, ToolCallLogEntry
from knime_mcp.columns import ColumnKind, arrow_type
from knime_mcp.errors import ConfigError

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["P95_FROM_CALLS", "STATS_COLUMNS", "ToolStats", "check_log_columns", "statistics_table", "tool_statistics"]

P95_FROM_CALLS = 20
"""Calls of a tool from which its *Slowest (ms)* is the 95th percentile rather than the slowest call: below, one
slow call is the percentile anyway."""

STATS_COLUMNS: tuple[tuple[str, ColumnKind], ...] = (
    ("Tool", "string"),
    ("Server", "string"),
    ("Calls", "long"),
    ("Errors", "long"),
    ("Median (ms)", "double"),
    ("Slowest (ms)", "double"),
    ("Mean Result Size", "double"),
    ("Largest Result Size", "long"),
)
"""The statistics table's columns: one row per tool (and server), in the order the tools were first called."""

_NO_CALL = frozenset({"tools_changed", "awaiting_approval"})
_NOT_RUN = frozenset({"blocked", "denied", "unknown_tool", "invalid_arguments"})
"""Statuses of calls refused before they reached their tool: they took no time of the tool's."""


@dataclass(frozen=True, kw_only=True)
class ToolStats:
    """One tool's calls in a log, summarised."""

    tool: str
    server: str | None
    calls: int
    errors: int
    """Calls that did not succeed: the tool reported an error, failed, timed out, or was refused."""
    median_ms: float | None
    """The median duration of the calls that reached the tool; None when none did."""
    slowest_ms: float | None
    """The 95th percentile (nearest rank) of those durations from :data:`P95_FROM_CALLS` calls on, else the
    slowest."""
    mean_result_size: float | None
    """Characters of the successful calls' results, on average; None without a successful call."""
    largest_result_size: int | None

    def values(self) -> tuple[Any, ...]:
        """The row in the order of :data:`STATS_COLUMNS`."""
        return (
            self.tool, self.server, self.calls, self.errors, self.median_ms, self.slowest_ms, self.mean_result_size,
            self.largest_result_size,
        )  # fmt: skip


class _Call(NamedTuple):
    tool: str
    server: str | None
    failed: bool
    ran: bool
    duration_ms: float | None
    result_size: int | None


def tool_statistics(log: Any) -> list[ToolStats]:
    """The statistics of each tool in ``log``: a run's :attr:`~knime_mcp.agent.loop.AgentRun.log` (its entries, or
    their ``to_dict`` records), or the log as a pyarrow table or pandas DataFrame (the Agent Prompter's *Tool calls*
    output, several concatenated, or the Tool Caller's output with a *Tool* column). A table without the columns
    needed is a ConfigError naming them."""
    if hasattr(log, "column_names") or hasattr(log, "columns"):
        return _summarised(_table_calls(log))
    return _summarised(_record_call(record) for record in log)


def statistics_table(stats: Sequence[ToolStats]) -> pa.Table:
    """The statistics as an Arrow table with the columns of :data:`STATS_COLUMNS`."""
    import pyarrow as pa

    rows = [row.values() for row in stats]
    return pa.table(
        {name: pa.array([row[i] for row in rows], arrow_type(kind)) for i, (name, kind) in enumerate(STATS_COLUMNS)}
    )


def _summarised(calls: Iterable[_Call | None]) -> list[ToolStats]:
    grouped: dict[tuple[str, str | None], list[_Call]] = {}
    for call in calls:
        if call is not None:
            grouped.setdefault((call.tool, call.server), []).append(call)
    return [_stats(tool, server, group) for (tool, server), group in grouped.items()]


def _stats(tool: str, server: str | None, calls: list[_Call]) -> ToolStats:
    durations = sorted(call.duration_ms for call in calls if call.ran and call.duration_ms is not None)
    sizes = [call.result_size for call in calls if not call.failed and call.result_size is not None]
    return ToolStats(
        tool=tool,
        server=server,
        calls=len(calls),
        errors=sum(call.failed for call in calls),
        median_ms=statistics.median(durations) if durations else None,
        slowest_ms=_slowest(durations),
        mean_result_size=statistics.fmean(sizes) if sizes else None,
        largest_result_size=max(sizes) if sizes else None,
    )


def _slowest(durations: list[float]) -> float | None:
    if not durations:
        return None
    if len(durations) < P95_FROM_CALLS:
        return durations[-1]
    return durations[math.ceil(0.95 * len(durations)) - 1]


def _record_call(record: ToolCallLogEntry | Mapping[str, Any]) -> _Call | None:
    """A log entry or its ``to_dict`` record as a call; None for no call."""
    if isinstance(record, ToolCallLogEntry):
        return _call(record.tool, record.server, record.status, record.duration_ms, record.result_size)
    get = record.get
    return _call(get("tool"), get("server"), get("status"), get("duration_ms"), get("result_size"))


def _call(tool: Any, server: str | None, status: str | None, duration_ms: Any, result_size: Any) -> _Call | None:
    """One logged call as counted here; None for no call (a note that tools changed, a call awaiting approval)."""
    if tool == TOOLS_CHANGED or status in _NO_CALL:
        return None
    size = None if (number := _number(result_size)) is None else int(number)
    return _Call(str(tool), server, status != "ok", status not in _NOT_RUN, _number(duration_ms), size)


def _table_calls(table: Any) -> list[_Call | None]:
    """The calls of a log table (pyarrow or pandas), read by the columns' names."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arrow = table if isinstance(table, pa.Table) else pa.Table.from_pandas(table, preserve_index=False)
    names = set(arrow.column_names)
    check_log_columns(names)

    def cells(name: str) -> list[Any]:
        return arrow.column(name).to_pylist() if name in names else [None] * arrow.num_rows

    tools, servers, durations = cells("Tool"), cells("Server"), cells("Duration (ms)")
    statuses = (
        cells("Status") if "Status" in names else ["ok" if not bad else "tool_error" for bad in cells("Is error")]
    )
    if "Result Size" in names:
        sizes = cells("Result Size")
    elif "Result" in names:  # counted by Arrow: the results themselves never become Python strings
        sizes = pc.utf8_length(arrow.column("Result")).to_pylist()
    else:
        sizes = [None] * arrow.num_rows
    return [
        _call(tool, server, status, duration, size)
        for tool, server, status, duration, size in zip(tools, servers, statuses, durations, sizes, strict=True)
        if tool is not None
    ]


def check_log_columns(names: Collection[str]) -> None:
    """A ConfigError unless a table of columns ``names`` is a tool-call log :func:`tool_statistics` reads."""
    missing = [repr(name) for name in ("Tool", "Duration (ms)") if name not in names]
    missing += [] if {"Status", "Is error"} & set(names) else ["'Status' (or 'Is error')"]
    if missing:
        raise ConfigError(
            f"The table is not a tool-call log: it has no {' or '.join(missing)} column.",
            hint="Connect the Agent Prompter's 'Tool calls' output (or several, concatenated), or the MCP Tool "
            "Caller's output with a 'Tool' column naming the tool (e.g. added with a Constant Value Column node).",
        )


def _number(value: Any) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)
