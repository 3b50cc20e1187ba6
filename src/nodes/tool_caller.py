"""MCP Tool Caller: a node that calls one MCP tool for every row of a table."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import knime.extension as knext

from nodes import CATEGORY
from nodes.knime_io.credentials import SignInNotice, credential_lookup
from nodes.knime_io.errors import knime_errors
from nodes.knime_io.images import with_png_cells
from nodes.knime_io.tables import arrow_batches, knime_columns
from nodes.knime_io.team_seal import team_seal
from nodes.knime_io.tools_table import table_tools
from nodes.parameters.column_types import is_knime_tool
from nodes.parameters.team_seal import team_seal_key_parameter
from nodes.parameters.tool_policy import (
    browser_sign_in_parameter,
    elicitation_mode,
    elicitation_parameter,
    granted_permissions,
    granted_permissions_parameter,
    tasks_parameter,
    trust_servers_parameter,
)

LOGGER = logging.getLogger(__name__)

if TYPE_CHECKING:
    from knime_mcp.caller.table import CallerOptions
    from knime_mcp.tools.tool import MCPTool


class ErrorHandlingOptions(knext.EnumParameterOptions):
    FAIL = ("Fail", "Stop at the first row whose call fails, and fail the node with that row's error.")
    COLUMN = (
        "Error column",
        "Call every row; a failed row gets 'Is error' set and its message in the 'Error' column.",
    )


@knext.parameter_group(label="Tool")
class ToolSettings:
    name = knext.StringParameter(
        "Tool name",
        "The name of the tool in the tools table (its 'Name' column), or its server's own name for it where that "
        "is one tool's among those the tags select. Leave empty when the table (or the tags) leave one tool.",
        "",
    )
    tags = knext.StringParameter(
        "Tool tags",
        "Tags separated by commas: the tool is picked among the tools of the tools table that carry any of them "
        "(its 'Tags' column, ignoring case), e.g. a pasted configuration's server key. With an empty tool name, "
        "the tags must leave exactly one tool; with a name, they tell tools of several servers apart. Empty: every "
        "tool.",
        "",
        since_version="0.5.0",
    )
    mapping = knext.MultilineStringParameter(
        "Argument mapping (JSON)",
        "Leave empty to feed each parameter from the input column of the same name. Otherwise a JSON object that "
        'sets parameters: "{column}" passes that column\'s value, converted to the type the parameter asks for '
        '(e.g. {"text": "{comment}", "a": "{x}"}); text around placeholders builds a string ("Dear {name}"); '
        "other values are sent as written. Parameters the mapping leaves out still come from same-named columns.",
        "",
    )


@knext.parameter_group(label="Calls")
class CallSettings:
    concurrency = knext.IntParameter(
        "Concurrency",
        "Calls in flight at once, all over one connection to the server, for a tool the server annotates as "
        "read-only, or as idempotent and not destructive. Any other tool is called one row at a time unless "
        "'Concurrent calls for tools that write' is on: a server that reads, changes and writes back one store "
        "can lose the changes of calls that overlap, while every row still reports success.",
        4,
        min_value=1,
        max_value=64,
    )
    concurrent_writes = knext.BoolParameter(
        "Concurrent calls for tools that write",
        "Call a tool that is not annotated read-only (or idempotent and not destructive) with the concurrency "
        "above too. Turn on only when the server is known to handle overlapping calls of this tool.",
        False,
        since_version="0.2.0",
        is_advanced=True,
    )
    timeout = knext.DoubleParameter(
        "Call timeout (s)",
        "Seconds to wait for one call; a slower call is cancelled and counts as failed. A tool whose row of the "
        "tools table has a number in a *Timeout (s)* column (one you add) waits that long instead.",
        60.0,
        min_value=0.1,
    )
    retries = knext.IntParameter(
        "Retries",
        "How often to repeat a call after a timeout or a connection error, with growing pauses. Only tools "
        "annotated read-only or idempotent are repeated; any other tool is called at most once per row.",
        2,
        min_value=0,
        max_value=10,
        is_advanced=True,
    )
    on_error = knext.EnumParameter(
        "Error handling", "What a failed row does.", ErrorHandlingOptions.FAIL.name, ErrorHandlingOptions
    )
    trust_all_servers = trust_servers_parameter()
    browser_sign_in = browser_sign_in_parameter()
    elicitation = elicitation_parameter()
    tasks = tasks_parameter()
    granted_permissions = granted_permissions_parameter()


@knext.node("MCP Tool Caller", knext.NodeType.MANIPULATOR, "icons/caller.png", category=CATEGORY, id="MCPToolCaller")
@knext.input_table("Data", "One tool call per row; columns feed the tool's parameters.")
@knext.input_table("Tools", "The tools table of an MCP Tool Provider; the tool is picked from it by name and tags.")
@knext.output_table(
    "Results",
    "The input rows with the call's result: text, structured result (JSON), image (a PNG image cell), other "
    "content (JSON), is-error, error message and duration in ms.",
)
class MCPToolCaller:
    """Calls an MCP tool once for every row of a table.

    Picks a tool from the tools table of an **MCP Tool Provider** (by its name, its tags, or both: *Tool tags*
    narrows the table to the tools carrying any of them, such as a pasted configuration's server key, and the name
    picks among those, by the table's name or the server's own) and calls it for each input row, with no model
    involved: MCP servers become data sources and transformers in ordinary workflows. By default each column
    whose name is a parameter of the tool feeds it; the argument mapping can set parameters from other columns
    or fixed values. Values are converted to the type each parameter asks for (integers, numbers, booleans,
    text, lists, and JSON text for objects and arrays), a missing value leaves its parameter out, and every
    row's arguments are checked against the tool's input schema before the call. Only what JSON can carry is sent:
    a NaN or infinite double, number text in digits other than 0-9 and numbers beyond the range of a double in JSON
    text (1e999) fail their row, naming the column.

    All calls share one connection to the server, several at a time for a tool annotated read-only (see
    *Concurrency*), one at a time for a tool that may write. Rows keep their order, and results are written batch by
    batch, so tables of any length run in constant memory. The output holds the input columns plus *Result* (the
    text content), *Structured result* (JSON), *Image* (the first image, as a PNG image cell; JPEG, GIF, WebP and
    other formats are converted, and image data that cannot be read makes the row fail with the reason in *Error*),
    *Other content* (every other content block as JSON: embedded resources with their text or base64 data, resource
    links, audio, further images), *Is error*, *Error* and *Duration (ms)*. Cancelling stops new calls and cancels
    those in flight. An empty input table gives an empty output table without contacting the server.

    A server that uses OAuth sign-in (see the MCP Tool Provider) is called with the sign-in stored when its tools
    were listed, refreshed as needed; when none is left, the node opens the browser to sign in again (its progress
    message and the KNIME log show where; cancel stops the wait), unless *Sign in to OAuth servers in a browser* is
    off, as it should be where nobody can sign in.

    *Granted permissions* (advanced) says what the tool may reach: a tool needing a permission not granted (its
    tools table's *Permissions* column: network for a remote server or an HTTP tool, files and processes for a stdio
    server or a program) is never called, nor its server started or reached, and every row fails naming the
    permission missing. All are granted by default.

    A long call's progress shows in the node's progress message, and the server's log messages in the KNIME log. A
    tool that asks for input while it runs (a form) fails its row, unless *When a tool asks for input* answers forms
    whose fields all have defaults with them; requests for the help of a model (sampling) are declined.

    In a KNIME with its unified Tool type, the tools table may also hold KNIME's own Tool values of type MCP (a
    *KNIME Tool* column, e.g. made by KNIME's nodes): they are called through this extension's client, with the
    credential they name as a bearer token. Their servers count as data, like tools not listed by a provider on this
    machine: only public http(s) addresses, and no credential, unless *Trust every server in the tools table* is on.
    """

    team_seal_key = team_seal_key_parameter()  # before the groups, as KNIME's node description lists it
    tool = ToolSettings()
    calls = CallSettings()

    def configure(self, ctx: knext.ConfigurationContext, data: knext.Schema, tools: knext.Schema) -> knext.Schema:
        from knime_mcp.caller.table import result_columns
        from knime_mcp.tools.arrow import TOOL_COLUMN

        if TOOL_COLUMN not in tools.column_names and _knime_tool_column(tools) is None:
            raise knext.InvalidParametersError(
                f"The tools table has no '{TOOL_COLUMN}' column. Connect the output of an MCP Tool Provider."
            )
        with knime_errors():
            self._options()
        return data.append(knime_columns(result_columns(data.column_names)))

    def execute(self, ctx: knext.ExecutionContext, data: knext.Table, tools: knext.Table) -> knext.BatchOutputTable:
        from knime_mcp.caller.table import call_table_sync, result_columns
        from knime_mcp.tools.tags import parse_tags, pick_tool

        output = knext.BatchOutputTable.create(row_ids="keep")
        images = [name for name, kind in result_columns(data.column_names) if kind == "image"]
        notice = SignInNotice(ctx, LOGGER)
        with knime_errors(), team_seal(ctx, self.team_seal_key):
            summary = call_table_sync(
                pick_tool(_tools(tools), self.tool.name, parse_tags(self.tool.tags)),
                arrow_batches(data),
                lambda batch: output.append(with_png_cells(batch, images)),
                options=self._options(),
                credentials=credential_lookup(ctx),
                total_rows=data.num_rows,
                cancelled=notice.cancelled,
                progress=notice.progress,
                show_sign_in=notice.show if self.calls.browser_sign_in else None,
            )
        if summary.errors:
            ctx.set_warning(f"{summary.errors} of {summary.rows} rows failed; see the 'Error' column.")
        return output

    def _options(self) -> CallerOptions:
        from knime_mcp.caller.table import CallerOptions
        from knime_mcp.calls.dispatch import RetryPolicy

        return CallerOptions(
            mapping=self.tool.mapping,
            concurrency=self.calls.concurrency,
            concurrent_writes=self.calls.concurrent_writes,
            timeout=self.calls.timeout,
            retry=RetryPolicy(attempts=self.calls.retries + 1),
            on_error="column" if self.calls.on_error == ErrorHandlingOptions.COLUMN.name else "fail",
            trust_all_servers=self.calls.trust_all_servers,
            elicitation=elicitation_mode(self.calls.elicitation),
            tasks=self.calls.tasks,
            granted=granted_permissions(self.calls.granted_permissions),
        )


def _knime_tool_column(schema: knext.Schema) -> str | None:
    """The first column of KNIME's unified Tool type, where KNIME has it."""
    return next((column.name for column in schema if is_knime_tool(column)), None)


def _tools(table: knext.Table) -> list[MCPTool]:
    """The tools of the tools table: its MCP Tool cells, and the MCP tools of its KNIME Tool cells that those do not
    already give (KNIME's workflow tools there are not called by this node)."""
    from knime_mcp.tools.arrow import TOOL_COLUMN

    mcp_column = TOOL_COLUMN if TOOL_COLUMN in table.schema.column_names else None
    return table_tools(table, mcp_column, _knime_tool_column(table.schema)).mcp
