"""Agent Prompter: prompts a chat model that may call MCP tools and KNIME workflow tools, and outputs the conversation
and a log of every tool call."""

from __future__ import annotations

import logging
from typing import Any

import knime.extension as knext

from knime_mcp.agent.loop import (
    DEFAULT_ITERATION_LIMIT,
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_SYSTEM_MESSAGE,
    AgentConfig,
    run_agent,
)
from knime_mcp.config import SamplingLimits, ServerRequestPolicy
from knime_mcp.errors import ConfigError
from knime_mcp.tools.truncate import DEFAULT_LIMIT_BYTES, MIN_LIMIT_BYTES
from nodes import CATEGORY
from nodes._agent_options import ErrorOptions, LimitOptions, ToolErrorOptions
from nodes._agent_tables import KnimeTables, data_output_tables, has_ports, is_workflow_column, log_schema, tool_frame
from nodes._conversation import conversation_schema, knime_conversation
from nodes._credentials import SignInNotice, check_credentials, credential_lookup
from nodes._errors import knime_errors
from nodes._knime_tools import split_tool_cells, valid_cells
from nodes._tables import is_string_column, read_pyarrow
from nodes._tool_settings import (
    DestructiveOptions,
    browser_sign_in_parameter,
    destructive_parameter,
    elicitation_mode,
    elicitation_parameter,
    tool_policy,
    trust_servers_parameter,
    unannotated_parameter,
)
from nodes.chat_model import ChatModelPortObject, ChatModelSpec, chat_model_port_type

LOGGER = logging.getLogger(__name__)
DEFAULT_SAMPLING = SamplingLimits()


_DATA_OUTPUTS = 2
"""Index of the *Data outputs* group among the output ports."""


@knext.node(
    "Agent Prompter", knext.NodeType.PREDICTOR, "icons/agent.png", category=CATEGORY, id="AgentPrompter"
)
@knext.input_port("Chat model", "The chat model, from the Chat Model Connector.", chat_model_port_type)
@knext.input_table("Tools", "MCP tools (from the MCP Tool Provider) and/or KNIME workflow tools.")
@knext.input_table("Conversation", "An earlier conversation to continue, as this node outputs it.", optional=True)
@knext.input_table_group(
    "Data inputs",
    "Tables for the agent's data repository (add ports with the node's '...' menu). The model sees each table's id, "
    "name, columns and row count, never its data, and passes tables to workflow tools by id.",
)
@knext.output_table(
    "Conversation",
    "The conversation: the history first, then one row per new message, with the message's first image as a PNG "
    "image cell.",
)
@knext.output_table("Tool calls", "One row per tool call: turn, tool, kind, server, arguments, status, timing.")
@knext.output_table_group(
    "Data outputs",
    "The newest tables of the data repository, one per port (add ports with the node's '...' menu); empty tables "
    "when the repository holds fewer.",
)
class AgentPrompter:
    """Lets a chat model answer a prompt using MCP tools and KNIME workflow tools.

    The model is offered the tools of the tools table that the tool policy allows: the MCP tools of one or more MCP
    Tool Provider tables (concatenate them to combine servers) and, in KNIME 5.5 and later, workflow tools. It may
    call several tools per step; they run concurrently, one reused connection per MCP server. Tool errors, invalid
    arguments and unknown tool names go back to the model so it can correct itself.

    **Tool policy.** The allow-list, the deny-list and the *Destructive tools* setting decide which MCP tools the
    model is offered at all; the tools left out are named in the node warning and the KNIME log, with the reason. By
    default, tools annotated destructive are left out, judged as the MCP specification says for a tool with
    annotations (a tool that is not annotated read-only counts as destructive unless it says otherwise). A tool
    whose server sent no annotations at all counts as destructive in the specification too, but most servers built
    with FastMCP or the mcp 1.x SDK annotate no tool, and blocking them all would leave such a server without a
    usable tool: so these tools are offered and named in the node warning, and *Treat unannotated tools as
    destructive* blocks them instead. Tools that can only run as MCP tasks (execution.taskSupport "required") are
    never offered, since this node cannot run tasks yet.

    Tool output is treated as untrusted data: it reaches the model fenced as data, and the system message tells the
    model never to follow instructions found in it. Images returned by tools reach vision models as images.

    The *Conversation* output has one row per message: *Role*, *Content*, *Tool Calls* (JSON), *Tool Call ID*,
    *Tool Name*, *Images* (a JSON list of the message's images as data URLs) and *Image*, the first of them as a PNG
    image cell, so that KNIME shows the images tools return (they reach the conversation in the user message that
    follows the tool messages). JPEG, GIF, WebP and other formats are converted; an image that cannot be decoded, or
    one given as a web address, leaves the *Image* cell missing and stays in *Images*. The output can be fed back
    into the optional conversation input to continue the conversation; *Images* is what is read back, so a
    conversation table without the *Image* column, as earlier versions of this node made, continues as well.
    The *Tool calls* output logs every call with its arguments (secret-looking values redacted), status and
    duration. The API key is read from the chat model's credential and never appears in any output.

    **Data.** As in KNIME's own Agent Prompter, the agent works with a data repository of tables that the model
    refers to by id (0, 1, 2, ... in the order the tables arrive) but never sees: the system message lists each
    table's id, name, description, columns (name and type) and row count. The tables of the *Data inputs* ports come
    first (named input_table_1, input_table_2, ...). A workflow tool with input ports is called with a table id per
    input port (its arguments are the *configuration* and the *data_inputs*, as in KNIME's node); before the call
    each table is checked against the port's spec, and a column the tool expects that has a type it cannot read
    (text where a number is expected, say) refuses the call. The tables a workflow tool outputs join the repository,
    named after the tool and its output port, and the tool's message tells the model their ids (after the tool's
    output, so the output cap never cuts them off), so later calls can use them. While the repository is in use (see
    below), an MCP tool's structured result that holds records (a JSON array of objects, or an object holding one
    such array) becomes a table of the repository too. An unknown id, a missing table, a refused table or a failing
    workflow all go back to the model as tool errors.

    The *Data outputs* ports output the newest tables of the repository, as KNIME's own node does: with n ports,
    the last n tables that arrived, oldest first (input tables count too, if fewer tables were produced); ports left
    over get an empty table. The repository is in use when there are data inputs, data outputs or workflow tools
    with input or output ports; without any of them, the model is told nothing about data and MCP results are left
    as they are.

    **OAuth.** An MCP server that uses OAuth sign-in (see the MCP Tool Provider) is called with the sign-in stored
    when its tools were listed, refreshed as needed; when none is left, the node opens the browser to sign in again
    (its progress message and the KNIME log show where; cancel stops the wait), unless *Sign in to OAuth servers in a
    browser* is off, as it should be where nobody can sign in.

    **What servers ask.** A tool may ask the client while it runs. Its progress shows in the node's progress message
    and its log messages in the KNIME log. When a server adds or removes tools during the run, its tools are listed
    again and the model is offered the new set from its next call (the tool-call log notes the change; new tools
    pass the tool policy first, and so does a tool listed again with other annotations: one that turned destructive
    is no longer offered). A request for the model's help (sampling) is answered by this node's chat model
    only when *Answer sampling requests with the chat model* is on, within its limits (answer tokens, requests,
    and the size of the server's prompt); a request for input (a form)
    is declined, failing the tool call, unless *When a tool asks for input* answers forms whose fields all have
    defaults with them.
    """

    system_message = knext.MultilineStringParameter(
        "System message",
        "Instructions for the model. A notice that tool output is untrusted data is always added.",
        DEFAULT_SYSTEM_MESSAGE,
        number_of_lines=4,
    )
    user_message = knext.MultilineStringParameter("User message", "The prompt for the model.", "", number_of_lines=6)
    mcp_column = knext.ColumnParameter(
        "MCP tool column",
        "The column holding MCP tools; none chosen: the provider's 'MCP Tool' column, if there is one.",
        port_index=1,
        column_filter=is_string_column,
    )
    workflow_column = knext.ColumnParameter(
        "Workflow tool column",
        "The column holding KNIME tools: workflow tools (KNIME 5.5 and later) and, where KNIME has its Tool type, "
        "MCP tools of KNIME's own (called through this extension); none chosen: the first such column, if any.",
        port_index=1,
        column_filter=is_workflow_column,
    )
    iteration_limit = knext.IntParameter(
        "Iteration limit", "The most model calls that may ask for tools in one execution.", DEFAULT_ITERATION_LIMIT,
        min_value=1,
    )
    on_limit = knext.EnumParameter(
        "When the limit is reached", "What happens when the model still calls tools at the limit.",
        LimitOptions.FAIL.name, LimitOptions,
    )
    errors = knext.EnumParameter(
        "Error handling", "What happens when the run stops early.", ErrorOptions.FAIL.name, ErrorOptions
    )
    tool_errors = knext.EnumParameter(
        "When a tool call fails", "Whether a failing tool call ends the run.", ToolErrorOptions.MODEL.name,
        ToolErrorOptions, is_advanced=True,
    )
    max_concurrency = knext.IntParameter(
        "Concurrent tool calls", "The most tool calls of one model message that run at the same time.",
        DEFAULT_MAX_CONCURRENCY, min_value=1, is_advanced=True,
    )
    call_timeout = knext.DoubleParameter(
        "Tool call timeout (s)",
        "Seconds to wait for one MCP tool call; 0 uses the timeout set in the MCP Tool Provider.",
        0.0, min_value=0.0, is_advanced=True,
    )
    output_cap = knext.IntParameter(
        "Tool output cap (bytes)",
        "The most UTF-8 bytes of one tool result that reach the model; the rest is cut, with a note saying so.",
        DEFAULT_LIMIT_BYTES, min_value=MIN_LIMIT_BYTES, is_advanced=True,
    )
    allow = knext.StringParameter(
        "Tool allow-list (regex)", "When set, only tools whose whole name matches may be called.", "",
        is_advanced=True,
    )
    deny = knext.StringParameter(
        "Tool deny-list (regex)", "Tools whose name matches anywhere are never called.", "", is_advanced=True
    )
    destructive = destructive_parameter(DestructiveOptions.BLOCK)
    unannotated_destructive = unannotated_parameter()
    trust_all_servers = trust_servers_parameter()
    browser_sign_in = browser_sign_in_parameter()
    elicitation = elicitation_parameter()
    sampling = knext.BoolParameter(
        "Answer sampling requests with the chat model",
        "An MCP tool may ask the client's model to write something for it while it runs (sampling). Switch this on "
        "to answer such requests with this node's chat model, within the limits below; each answered request is "
        "logged. Off, they are declined and the tool is told so. Every request costs tokens of your model.",
        False,
        since_version="0.3.0",
        is_advanced=True,
    )
    sampling_max_tokens = knext.IntParameter(
        "Most tokens per sampling answer",
        "The longest answer one sampling request gets; a request asking for more gets this many.",
        DEFAULT_SAMPLING.max_tokens, min_value=1, since_version="0.3.0", is_advanced=True,
    ).rule(knext.OneOf(sampling, [True]), knext.Effect.SHOW)
    sampling_max_prompt_bytes = knext.IntParameter(
        "Largest sampling prompt (bytes)",
        "The most a sampling request's prompt (its system prompt and messages, as UTF-8 bytes; about 4 bytes a "
        "token) may have; a larger request is declined, the tool is told why, and the KNIME log says so.",
        DEFAULT_SAMPLING.max_prompt_bytes, min_value=1, since_version="0.4.0", is_advanced=True,
    ).rule(knext.OneOf(sampling, [True]), knext.Effect.SHOW)
    sampling_max_requests = knext.IntParameter(
        "Most sampling requests per execution",
        "Sampling requests answered per execution, across all servers; later ones are declined.",
        DEFAULT_SAMPLING.max_requests, min_value=1, since_version="0.3.0", is_advanced=True,
    ).rule(knext.OneOf(sampling, [True]), knext.Effect.SHOW)
    resources = knext.BoolParameter(
        "Offer the servers' resources",
        "Offer the model two more tools, list_resources and read_resource, to list and read the resources (files, "
        "documents, images) of the MCP servers in the tools table. Text reaches the model as text, images as images, "
        "within the tool output cap; calls are logged with the kind 'resource'. The allow-list and the deny-list "
        "apply to these two names; they only read.",
        False,
        since_version="0.3.0",
        is_advanced=True,
    )

    def configure(
        self,
        ctx: knext.ConfigurationContext,
        model: ChatModelSpec,
        tools: knext.Schema,
        history: knext.Schema | None,
        data: list[knext.Schema],
    ) -> list[Any]:
        from knime_mcp.conversation import CONTENT, ROLE

        with knime_errors():
            config = self._config()
            if not self.user_message.strip():
                raise ConfigError("The user message is empty.", hint="Enter the prompt for the model.")
            self._tool_columns(tools)
            if history is not None and not {ROLE, CONTENT} <= set(history.column_names):
                raise ConfigError(
                    f"The conversation table needs the columns {ROLE!r} and {CONTENT!r}.",
                    hint="Connect a conversation table as this node outputs it.",
                )
        # The data outputs' columns are known only once the agent has run.
        data_outputs = [None] * ctx.get_connected_output_port_numbers()[_DATA_OUTPUTS]
        return [conversation_schema(config.errors == "column"), log_schema(), data_outputs]

    def execute(
        self,
        ctx: knext.ExecutionContext,
        model: ChatModelPortObject,
        tools: knext.Table,
        history: knext.Table | None,
        data: list[knext.Table],
    ) -> list[Any]:
        from knime_mcp.agent.call_log import log_table
        from knime_mcp.agent.data import DataRepository
        from knime_mcp.agent.workflow import workflow_tools
        from knime_mcp.conversation import conversation_table, messages_from_arrow
        from knime_mcp.llm.chat_model import build_chat_model, resolve_api_key
        from knime_mcp.mcp.sync import CallerThread, run_sync
        from knime_mcp.tools.arrow import tools_from_frame

        notice = SignInNotice(ctx, LOGGER)
        with knime_errors():
            config = self._config()
            mcp_column, workflow_column = self._tool_columns(tools.schema)
            arrow = read_pyarrow(tools)
            caller = CallerThread()
            mcp_tools = tools_from_frame(tool_frame(arrow, mcp_column), mcp_column) if mcp_column else []
            cells, knime_mcp_tools = split_tool_cells(_cells(arrow, workflow_column), mcp_tools)
            mcp_tools += knime_mcp_tools
            check_credentials(ctx, {tool.server.auth.credential for tool in mcp_tools} - {None})
            repository = DataRepository(KnimeTables())
            for number, table in enumerate(data, start=1):
                repository.add(table, name=f"input_table_{number}", description=f"Data input {number} of the node")
            local, notes = workflow_tools(cells, ctx, caller, repository)
            outputs = ctx.get_connected_output_port_numbers()[_DATA_OUTPUTS]
            uses_data = bool(data) or outputs > 0 or any(has_ports(cell) for cell in cells)
            credentials = credential_lookup(ctx)
            api_key = resolve_api_key(model.config, credentials)
            run = run_sync(
                run_agent,
                build_chat_model(model.config, api_key),
                [*mcp_tools, *local],
                self.user_message,
                system_message=self.system_message,
                history=messages_from_arrow(read_pyarrow(history)) if history is not None else [],
                config=config,
                credentials=credentials,
                secrets=[api_key],
                cancelled=notice.cancelled,
                progress=notice.progress,
                caller_thread=caller,
                data=repository if uses_data else None,
                show_sign_in=notice.show if self.browser_sign_in else None,
            )
        notes = [*run.warnings, *notes]
        if notes:
            ctx.set_warning(" | ".join(notes))
        return [
            knime_conversation(conversation_table(run.conversation, error_column=config.errors == "column")),
            knext.Table.from_pyarrow(log_table(run.log)),
            data_output_tables(repository, outputs),
        ]

    def _config(self) -> AgentConfig:
        return AgentConfig(
            iteration_limit=self.iteration_limit,
            on_limit="final_answer" if self.on_limit == LimitOptions.FINAL_ANSWER.name else "fail",
            errors="column" if self.errors == ErrorOptions.COLUMN.name else "fail",
            tool_errors="fail" if self.tool_errors == ToolErrorOptions.FAIL.name else "model",
            max_concurrency=self.max_concurrency,
            call_timeout=self.call_timeout or None,
            output_cap=self.output_cap,
            policy=tool_policy(
                self.allow, self.deny, self.destructive, unannotated_destructive=self.unannotated_destructive
            ),
            trust_all_servers=self.trust_all_servers,
            server_requests=ServerRequestPolicy(
                elicitation=elicitation_mode(self.elicitation),
                sampling=SamplingLimits(
                    max_tokens=self.sampling_max_tokens,
                    max_requests=self.sampling_max_requests,
                    max_prompt_bytes=self.sampling_max_prompt_bytes,
                )
                if self.sampling
                else None,
            ),
            resources=self.resources,
        )

    def _tool_columns(self, schema: knext.Schema) -> tuple[str | None, str | None]:
        """The MCP and workflow tool columns: the chosen ones, else found by name and type; at least one."""
        from knime_mcp.tools.arrow import TOOL_COLUMN

        names = schema.column_names
        for chosen in (self.mcp_column, self.workflow_column):
            if chosen and chosen not in names:
                raise ConfigError(f"The tools table has no column {chosen!r}.", hint="Choose a tool column again.")
        mcp = self.mcp_column or (TOOL_COLUMN if TOOL_COLUMN in names else None)
        workflow = self.workflow_column or next((c.name for c in schema if is_workflow_column(c)), None)
        if mcp is None and workflow is None:
            raise ConfigError(
                "The tools table has no MCP tool column and no workflow tool column.",
                hint="Connect the MCP Tool Provider's output, or a table of KNIME workflow tools.",
            )
        return mcp, workflow


def _cells(arrow: Any, column: str | None) -> list[Any]:
    """The tools of the KNIME tool column ``column`` (``valid_cells``), none without one."""
    return [] if column is None else valid_cells(arrow, column)
