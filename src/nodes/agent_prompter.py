"""Agent Prompter: prompts a chat model that may call MCP tools and KNIME workflow tools, and outputs the conversation
and a log of every tool call."""

from __future__ import annotations

import logging
from typing import Any

import knime.extension as knext

from knime_mcp.agent.loop import AgentConfig, run_agent
from knime_mcp.errors import ConfigError
from nodes import CATEGORY
from nodes.knime_io.agent_run import agent_run
from nodes.knime_io.chat_model_port import ChatModelPortObject, ChatModelSpec, chat_model_port_type
from nodes.knime_io.conversation import check_history, conversation_schema, knime_conversation
from nodes.knime_io.credentials import SignInNotice
from nodes.knime_io.errors import knime_errors
from nodes.knime_io.repository import data_output_tables, log_schema
from nodes.knime_io.tables import read_pyarrow
from nodes.knime_io.team_seal import team_seal
from nodes.parameters.agent import (
    agent_config,
    allow_parameter,
    call_timeout_parameter,
    deny_parameter,
    errors_parameter,
    iteration_limit_parameter,
    max_concurrency_parameter,
    mcp_column_parameter,
    on_limit_parameter,
    only_tagged_parameter,
    output_cap_parameter,
    pinned_tools_parameter,
    resources_parameter,
    sampling_max_prompt_bytes_parameter,
    sampling_max_requests_parameter,
    sampling_max_tokens_parameter,
    sampling_parameter,
    server_instructions_parameter,
    skill_scripts_parameter,
    skills_parameter,
    system_message_parameter,
    tool_budget_bytes_parameter,
    tool_budget_parameter,
    tool_columns,
    tool_errors_parameter,
    tool_hints_parameter,
    workflow_column_parameter,
)
from nodes.parameters.approval import (
    ask_all_parameter,
    ask_destructive_parameter,
    ask_pattern_parameter,
    ask_unannotated_parameter,
    unasked_warning,
)
from nodes.parameters.team_seal import team_seal_key_parameter
from nodes.parameters.tool_policy import (
    DestructiveOptions,
    browser_sign_in_parameter,
    destructive_parameter,
    elicitation_parameter,
    granted_permissions_parameter,
    tasks_parameter,
    trust_servers_parameter,
    unannotated_parameter,
)

LOGGER = logging.getLogger(__name__)


_DATA_OUTPUTS = 2
"""Index of the *Data outputs* group among the output ports."""


@knext.node("Agent Prompter", knext.NodeType.PREDICTOR, "icons/agent.png", category=CATEGORY, id="AgentPrompter")
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
    destructive* blocks them instead. Tools that can only run as MCP tasks (execution.taskSupport "required") run
    as tasks: polled at the interval the server asks for, their status shown as progress, cancelled on the server
    when the node is cancelled; *Run long tools as tasks* runs tools that may run as tasks as tasks too. *Only tools
    tagged* (advanced) offers only the tools carrying any of its tags (the tools table's Tags column: a server's key,
    a tag given in the provider, read-only or destructive), without a warning line for each tool it leaves out.

    **Many tools.** Up to 128 tools and 200,000 bytes of tool specs (the advanced settings *Tool search above*),
    the model is offered every tool. A larger tools table (many servers together) is searched instead: the model is
    offered a search tool, search_tools, which finds the tools for what it wants to do (a BM25 ranking of their
    names, descriptions, parameters and servers), and each tool it found is offered from its next step on, under the
    same policy, approval and log as any other. *Always offer tools (regex)* names tools offered from the start.

    **Skills.** *Skills folder* (advanced) gives the model Agent Skills, the open format: each subfolder of the
    folder holds a SKILL.md (a name and a description in its front matter, instructions below) and other files. The
    system message names each skill with its description; the model loads a skill's instructions and the list of its
    files with load_skill and reads a text file of it with read_skill_file, only inside that skill's folder. Nothing
    in a skill is run (the model is told so) unless you switch on *Run skill scripts* (advanced): then the model may
    run a script inside a skill's folder with run_skill_script, without a shell, as the Program Tool Provider's
    programs run. Subfolders that break the format are left out and named in the node warning.

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
    duration, and for a tool with an MCP App its *App URI* and *App bytes* (the app read once per run, after the
    tool's first successful call, so that a chat opened later on the conversation can show it; an app that cannot be
    read leaves *App bytes* missing and a warning, never a failed call). Tools only their app may call are never
    offered to the model. The API key is read from the chat model's credential and never appears in any output.

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

    **Approval before a call.** *Ask before calling* names the calls a person must approve (of destructive tools,
    of tools without annotations, of tools whose names match a pattern, or every call). Nobody can answer while the
    node runs, so a model message with such a call ends the run: none of its calls is made, the conversation ends
    with that message, the tool-call log lists the call with the status *awaiting_approval*, and the node warning
    says so. To resume, feed the conversation back into the *Conversation* input with an *Approval* column that
    holds, on its last row, *approve* or *deny* (every waiting call of the message), or a JSON object by call id
    such as {"call_1": "approve", "call_2": "deny"}, and optionally an *Approval Reason*, which a denied call's
    message tells the model. The run then makes exactly those calls (and the message's others) and goes on without
    sending the user message again; a waiting call without a decision keeps waiting, and a decision for a call that
    is not waiting is an error. The log's *Approval* and *Approval Time* columns keep every decision.
    """

    system_message = system_message_parameter()
    user_message = knext.MultilineStringParameter("User message", "The prompt for the model.", "", number_of_lines=6)
    mcp_column = mcp_column_parameter()
    workflow_column = workflow_column_parameter()
    iteration_limit = iteration_limit_parameter()
    on_limit = on_limit_parameter()
    errors = errors_parameter()
    tool_errors = tool_errors_parameter()
    max_concurrency = max_concurrency_parameter()
    call_timeout = call_timeout_parameter()
    output_cap = output_cap_parameter()
    allow = allow_parameter()
    deny = deny_parameter()
    only_tagged = only_tagged_parameter()
    destructive = destructive_parameter(DestructiveOptions.BLOCK)
    unannotated_destructive = unannotated_parameter()
    granted_permissions = granted_permissions_parameter()
    trust_all_servers = trust_servers_parameter()
    browser_sign_in = browser_sign_in_parameter()
    elicitation = elicitation_parameter()
    sampling = sampling_parameter()
    sampling_max_tokens = sampling_max_tokens_parameter(sampling)
    sampling_max_prompt_bytes = sampling_max_prompt_bytes_parameter(sampling)
    sampling_max_requests = sampling_max_requests_parameter(sampling)
    resources = resources_parameter()
    tasks = tasks_parameter()
    server_instructions = server_instructions_parameter()
    skills = skills_parameter()
    skill_scripts = skill_scripts_parameter()
    tool_budget = tool_budget_parameter()
    tool_budget_bytes = tool_budget_bytes_parameter()
    pinned_tools = pinned_tools_parameter()
    tool_hints = tool_hints_parameter()

    ask_destructive = ask_destructive_parameter()
    ask_unannotated = ask_unannotated_parameter()
    ask_pattern = ask_pattern_parameter()
    ask_all = ask_all_parameter()
    team_seal_key = team_seal_key_parameter()

    def configure(
        self,
        ctx: knext.ConfigurationContext,
        model: ChatModelSpec,
        tools: knext.Schema,
        history: knext.Schema | None,
        data: list[knext.Schema],
    ) -> list[Any]:

        with knime_errors():
            config = self._config()
            unasked_warning(ctx, config)
            if not self.user_message.strip():
                raise ConfigError("The user message is empty.", hint="Enter the prompt for the model.")
            self._tool_columns(tools)
            check_history(history)
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
        from knime_mcp.agent.approval_column import awaiting_note, table_approver
        from knime_mcp.agent.call_log import log_table
        from knime_mcp.conversation import conversation_table
        from knime_mcp.mcp.sync import CallerThread, run_sync

        notice = SignInNotice(ctx, LOGGER)
        with knime_errors(), team_seal(ctx, self.team_seal_key):
            config = self._config()
            caller = CallerThread()
            outputs = ctx.get_connected_output_port_numbers()[_DATA_OUTPUTS]
            history_table = read_pyarrow(history) if history is not None else None
            inputs = agent_run(
                ctx, model.config, tools, self._tool_columns(tools.schema), data, history_table, caller, outputs
            )
            run = run_sync(
                run_agent,
                inputs.chat_model,
                inputs.tools,
                self.user_message,
                system_message=self.system_message,
                history=inputs.history,
                approver=table_approver(history_table, inputs.history) if history_table is not None else None,
                config=config,
                credentials=inputs.credentials,
                secrets=[inputs.api_key],
                cancelled=notice.cancelled,
                progress=notice.progress,
                caller_thread=caller,
                data=inputs.repository if inputs.uses_data else None,
                show_sign_in=notice.show if self.browser_sign_in else None,
            )
        notes = [*run.warnings, *inputs.notes, *([awaiting_note(run.awaiting)] if run.awaiting else [])]
        if notes:
            ctx.set_warning(" | ".join(notes))
        return [
            knime_conversation(conversation_table(run.conversation, error_column=config.errors == "column")),
            knext.Table.from_pyarrow(log_table(run.log)),
            data_output_tables(inputs.repository, outputs),
        ]

    def _config(self) -> AgentConfig:
        return agent_config(self)

    def _tool_columns(self, schema: knext.Schema) -> tuple[str | None, str | None]:
        return tool_columns(self, schema)
