"""Agent Chat: the Agent Prompter's agent in a chat view, where a person types, watches tool calls, stops a turn,
approves calls and answers the servers' forms; applying the view writes the conversation, log and data outputs."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import knime.extension as knext

from nodes import CATEGORY
from nodes.agent_chat.service import DeclaredMethods
from nodes.agent_chat.sessions import CHAT_SESSIONS, chat_key
from nodes.agent_chat.view_service import AgentChatService, WorkerThread
from nodes.knime_io.agent_run import agent_run
from nodes.knime_io.chat_model_port import ChatModelPortObject, ChatModelSpec, chat_model_port_type
from nodes.knime_io.conversation import check_history, conversation_schema, knime_conversation
from nodes.knime_io.errors import knime_errors
from nodes.knime_io.repository import KnimeTables, data_output_tables, log_schema
from nodes.knime_io.tables import read_pyarrow
from nodes.knime_io.team_seal import team_seal
from nodes.parameters.agent import (
    agent_config,
    allow_parameter,
    call_timeout_parameter,
    deny_parameter,
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
from nodes.parameters.agent_options import ErrorOptions
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
    destructive_parameter,
    granted_permissions_parameter,
    tasks_parameter,
    trust_servers_parameter,
    unannotated_parameter,
)

if TYPE_CHECKING:
    pass

LOGGER = logging.getLogger(__name__)
_DATA_OUTPUTS = 2
"""Index of the *Data outputs* group among the output ports."""
_VIEW_TABLES = 2
"""The view data's ports: the conversation, the log, then the tables the chat added to the data repository."""


@knext.node("Agent Chat", knext.NodeType.VISUALIZER, "icons/agent.png", category=CATEGORY, id="AgentChat")
@knext.input_port("Chat model", "The chat model, from the Chat Model Connector.", chat_model_port_type)
@knext.input_table("Tools", "MCP tools (from the MCP Tool Provider) and/or KNIME workflow tools.")
@knext.input_table("Conversation", "An earlier conversation to continue, as this node outputs it.", optional=True)
@knext.input_table_group(
    "Data inputs",
    "Tables for the agent's data repository (add ports with the node's '...' menu); the model sees their columns, "
    "never their data.",
)
@knext.output_table("Conversation", "The conversation held in the view, after the input conversation.")
@knext.output_table("Tool calls", "One row per tool call of the chat: tool, kind, server, arguments, status, timing.")
@knext.output_table_group(
    "Data outputs",
    "The newest tables of the data repository, one per port; empty tables when the repository holds fewer.",
)
@knext.output_view(
    "Chat",
    "The chat with the agent: messages, tool calls, approvals and the servers' forms.",
    static_resources="src/nodes/chat_view",
    index_html_path="index.html",
)
class AgentChat:
    """Chats with an agent that uses MCP tools and KNIME workflow tools, in the node's view.

    The agent is the Agent Prompter's, with the same settings where they mean the same (tool columns, tool policy,
    limits, sampling, resources, skills, *Ask before calling*). In the view a person types a message; the answer appears
    as it is generated, each tool call shows when it starts and ends (unless *Show tool calls* is off), *Stop*
    ends the turn and cancels the calls in flight, a call that needs approval waits on a card (approve, deny with
    a reason, allow for this session), a server's form is shown to fill in, and an OAuth sign-in link appears in
    the chat. A tool with an MCP App (an interactive page its server provides) shows it under its call, sandboxed
    (unless *Show MCP Apps* is off); what the app asks for goes only to its own server, and its tool calls need
    approval as the model's do.

    Applying or closing the view keeps the chat as the view's data (KNIME 5.6 and later): the node then outputs
    the conversation (the input conversation first), the tool-call log and the data outputs, and opening the view
    again continues that conversation. Executed without the view, the node outputs the input conversation, followed
    by the *Initial assistant message* when one is set, an empty log and the newest data tables.
    """

    system_message = system_message_parameter()
    initial_message = knext.MultilineStringParameter(
        "Initial assistant message",
        "A message the chat opens with, as the assistant's; empty: none.",
        "",
        number_of_lines=3,
        since_version="0.5.0",
    )
    show_tool_calls = knext.BoolParameter(
        "Show tool calls",
        "Show each tool call in the chat: the tool, its server, its arguments (secrets redacted), its status, "
        "duration and result.",
        True,
        since_version="0.5.0",
    )
    show_apps = knext.BoolParameter(
        "Show MCP Apps",
        "Show a tool's MCP App under its call in the chat: an interactive page (a chart, a map, a form) that the "
        "tool's server provides. It runs sandboxed, apart from the chat and KNIME, may reach only the web addresses "
        "it declares, and asks the chat for what it needs: the calls it makes go only to its own server's tools and "
        "follow the same tool policy and approval settings (Ask before calling) as the model's, marked as the app's. "
        "Off: no app is shown, and the calls' results appear as text.",
        True,
        since_version="0.5.0",
    )
    mcp_column = mcp_column_parameter()
    workflow_column = workflow_column_parameter()
    iteration_limit = iteration_limit_parameter()
    on_limit = on_limit_parameter()
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
            unasked_warning(ctx, self._config())
            tool_columns(self, tools)
            check_history(history)
        data_outputs = [None] * ctx.get_connected_output_port_numbers()[_DATA_OUTPUTS]
        return [conversation_schema(False), log_schema(), data_outputs]

    def execute(
        self,
        ctx: knext.ExecutionContext,
        model: ChatModelPortObject,
        tools: knext.Table,
        history: knext.Table | None,
        data: list[knext.Table],
    ) -> list[Any]:
        """The chat the view kept, else the history and the initial message: no model is called here."""
        from knime_mcp.agent.call_log import log_table
        from knime_mcp.agent.data import DataRepository
        from knime_mcp.conversation import Conversation, conversation_table, messages_from_arrow

        outputs = ctx.get_connected_output_port_numbers()[_DATA_OUTPUTS]
        kept = _view_data(ctx)
        repository = DataRepository(KnimeTables())
        for table in [*data, *(kept["ports"][_VIEW_TABLES:] if kept else [])]:
            repository.add(table, name="table")
        if kept:
            return [kept["ports"][0], kept["ports"][1], data_output_tables(repository, outputs)]
        with knime_errors():
            table = self._history_table(history, None)
            messages = messages_from_arrow(table) if table is not None else []
            conversation = Conversation(None, self._opening(messages, None))
        return [
            knime_conversation(conversation_table(conversation)),
            knext.Table.from_pyarrow(log_table([])),
            data_output_tables(repository, outputs),
        ]

    def get_data_service(
        self,
        ctx: Any,
        model: ChatModelPortObject,
        tools: knext.Table,
        history: knext.Table | None,
        data: list[knext.Table],
    ) -> DeclaredMethods:
        """The view's data service over a chat session: the kept chat continued, else the input conversation; KNIME's
        bridge reaches only its declared methods."""
        from knime_mcp.agent.chat_session import ChatSession

        kept = _view_data(ctx)
        with knime_errors(), team_seal(ctx, self.team_seal_key):
            inputs = agent_run(
                ctx, model.config, tools, tool_columns(self, tools.schema), data, self._history_table(history, kept),
                WorkerThread(), 0,
            )  # fmt: skip
            added = kept["ports"][_VIEW_TABLES:] if kept else []
            for number, table in enumerate(added, start=1):
                inputs.repository.add(table, name=f"chat_table_{number}", description="Made earlier in the chat")
            session = ChatSession(
                inputs.chat_model, inputs.tools, config=self._config(), history=self._opening(inputs.history, kept),
                system_message=self.system_message, credentials=inputs.credentials, secrets=[inputs.api_key],
                data=inputs.repository if inputs.uses_data or added else None,
            )  # fmt: skip
            session.open()
        CHAT_SESSIONS.adopt(self._chat_key(model, tools, history), session)
        return DeclaredMethods(AgentChatService(
            session, inputs.repository, len(data), kept["ports"][1] if kept else None,
            show_tool_calls=self.show_tool_calls, show_apps=self.show_apps,
        ))  # fmt: skip

    def _chat_key(self, model: ChatModelPortObject, tools: knext.Table, history: knext.Table | None) -> str:
        """Which node's chat this is (``nodes.agent_chat.sessions``): the view context has no node id, so its settings
        and the inputs that make the chat; the data inputs are left out (large, and the tools decide)."""
        from knime.extension.parameter import extract_parameters

        inputs = [read_pyarrow(table).to_pylist() for table in (tools, history) if table is not None]
        return chat_key(type(self).__name__, extract_parameters(self), model.config, *inputs)

    def _history_table(self, history: knext.Table | None, kept: dict[str, Any] | None) -> Any:
        """The conversation the chat goes on from, as a table: the kept one, else the input's (None without one)."""
        if kept:
            return kept["ports"][0].to_pyarrow()
        return read_pyarrow(history) if history is not None else None

    def _opening(self, messages: list[Any], kept: dict[str, Any] | None) -> list[Any]:
        """``messages``, and after them the initial message in a chat that was not kept before."""
        from langchain_core.messages import AIMessage

        if kept or not self.initial_message.strip():
            return messages
        return [*messages, AIMessage(self.initial_message)]

    def _config(self) -> Any:
        """The Agent Prompter's configuration; a person sees errors and answers forms in the view."""
        return agent_config(self, errors=ErrorOptions.FAIL.name, elicitation="DECLINE")


def _view_data(ctx: Any) -> dict[str, Any] | None:
    """What the view kept when it was applied or closed; None before, and on KNIME versions without view data
    (5.5: its contexts have no ``_get_view_data``)."""
    get = getattr(ctx, "_get_view_data", None)
    return get() if get is not None else None
