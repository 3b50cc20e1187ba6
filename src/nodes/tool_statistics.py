"""Tool Statistics: a node that summarises tool-call logs per tool (calls, errors, durations, result sizes).

Thin: the input's column names are checked at configure, and the summary is the core's
(:mod:`knime_mcp.agent.tool_stats`).
"""

from __future__ import annotations

import knime.extension as knext

from nodes import CATEGORY
from nodes.knime_io.errors import knime_errors
from nodes.knime_io.tables import knime_columns, read_pyarrow


@knext.node(
    "Tool Statistics", knext.NodeType.MANIPULATOR, "icons/tool_statistics.png", category=CATEGORY, id="ToolStatistics"
)
@knext.input_table(
    "Tool calls",
    "A tool-call log: the Agent Prompter's or the Agent Chat's Tool calls output, several of them concatenated, or "
    "the MCP Tool Caller's output with a Tool column added.",
)
@knext.output_table(
    "Statistics",
    "One row per tool (and server): calls, errors, median and slowest duration (ms), mean and largest result size.",
)
class ToolStatistics:
    """Summarises tool-call logs per tool: which tools are slow, fail, or answer at length.

    Reads a tool-call log, the **Agent Prompter**'s or the **Agent Chat**'s *Tool calls* output, or several of them
    concatenated (e.g. the logs of a loop's iterations), and gives one row per tool and server, in the order the
    tools were first called: *Calls*, *Errors* (calls that did not succeed: the tool reported an error, failed,
    timed out, or the call was refused), *Median (ms)* and *Slowest (ms)* of the durations (the 95th percentile
    from 20 calls on, else the slowest call), and *Mean Result Size* and *Largest Result Size* (characters of the
    successful calls' results). Durations count the calls that reached their tool, not those refused before it
    (blocked, denied, an unknown tool, invalid arguments). The log's notes that a server's tools changed, and calls
    still awaiting approval, are not calls.

    The **MCP Tool Caller**'s output is read too once it has a *Tool* column naming the tool (its calls are all of
    one tool, which its output does not name: add the column with a Constant Value Column node): its *Is error*,
    *Duration (ms)* and *Result* columns stand for the log's status, duration and result size.

    To see whether a tool is worth its time and cost, compare these with the *Expected time (s)* and *Cost* hints
    set in the tools table.
    """

    def configure(self, ctx: knext.ConfigurationContext, log: knext.Schema) -> knext.Schema:
        from knime_mcp.agent.tool_stats import STATS_COLUMNS, check_log_columns

        with knime_errors():
            check_log_columns(log.column_names)
        return knext.Schema.from_columns(knime_columns(STATS_COLUMNS))

    def execute(self, ctx: knext.ExecutionContext, log: knext.Table) -> knext.Table:
        from knime_mcp.agent.tool_stats import statistics_table, tool_statistics

        with knime_errors():
            return knext.Table.from_pyarrow(statistics_table(tool_statistics(read_pyarrow(log))))
