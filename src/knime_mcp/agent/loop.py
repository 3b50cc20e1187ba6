"""The agent loop: ask the model, run the tool calls it asks for, and repeat until it answers or reaches the limit.

Layer: core, KNIME-free, below the Agent Prompter node and the CLI's ``agent`` command. Shaped like KNIME's own
``Agent``: :class:`Agent` depends only on small protocols (a conversation, a toolset, a langchain chat model) and its
:meth:`Agent.run` is short. :func:`run_agent` wires it to the real parts: one :class:`ClientPool` (a session per
server for the whole run), one :class:`Dispatcher`, the :class:`AgentToolset`, and the error policy.

Policies, each decided in one place:

- tool failures go back to the model as error tool messages; with ``tool_errors="fail"`` the first one stops the run;
- at the iteration limit the run fails, or (``on_limit="final_answer"``) the model is asked once more, without tools;
- a run that stops (model error, limit, tool failure in fail mode) raises, or with ``errors="column"`` ends the
  conversation with an error row, as KNIME's Agent Prompter does.

    run = await run_agent(model, tools, "What is 2 + 3?", config=AgentConfig(iteration_limit=5))
    run.conversation.new_messages[-1].text

Importing this module is cheap (the Agent Prompter node reads its defaults when KNIME builds the node repository):
langchain, the MCP client and the toolset load when a run starts.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from knime_mcp.agent.answers import check_answer, with_call_ids
from knime_mcp.agent.config import (
    DEFAULT_ITERATION_LIMIT,
    DEFAULT_MAX_CONCURRENCY,
    AgentConfig,
    ErrorMode,
    LimitMode,
    ToolErrorMode,
)
from knime_mcp.agent.prompts import (
    DEFAULT_SYSTEM_MESSAGE,
    FINAL_ANSWER_PROMPT,
    UNTRUSTED_OUTPUT_NOTICE,
    system_prompt,
)
from knime_mcp.agent.streaming import TextListener, streamed_answer
from knime_mcp.config import CredentialLookup
from knime_mcp.errors import ConfigError, IterationLimitError, McpToolError
from knime_mcp.llm.chat_model import model_errors, model_label

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage, BaseMessage

    from knime_mcp.agent.approval import ApprovalRequest, Approver
    from knime_mcp.agent.call_log import ToolCallLogEntry
    from knime_mcp.agent.data import DataRepository
    from knime_mcp.agent.server_guidance import ServerInstructions
    from knime_mcp.agent.toolset import AgentToolset, ToolHooks, ToolTurn
    from knime_mcp.calls.dispatch import Dispatcher, LocalTool, ToolProgress
    from knime_mcp.calls.pool import ClientPool
    from knime_mcp.conversation import Conversation
    from knime_mcp.mcp.server_requests import FormAsker
    from knime_mcp.mcp.sync import Interrupt, ProgressCallback
    from knime_mcp.tools.tool import MCPTool

__all__ = [
    "DEFAULT_ITERATION_LIMIT", "DEFAULT_MAX_CONCURRENCY", "DEFAULT_SYSTEM_MESSAGE", "FINAL_ANSWER_PROMPT",
    "UNTRUSTED_OUTPUT_NOTICE", "Agent", "AgentConfig", "AgentParts", "AgentRun", "ConversationLike", "ErrorMode",
    "LimitMode", "ToolErrorMode", "ToolsetLike", "assembled", "run_agent", "system_prompt"
]  # fmt: skip

_logger = logging.getLogger(__name__)


class ConversationLike(Protocol):
    """What the loop needs of a conversation: everything to send, and a way to add to it."""

    @property
    def messages(self) -> list[BaseMessage]: ...

    def append(self, *messages: BaseMessage) -> None: ...


class ToolsetLike(Protocol):
    """What the loop needs of the tools: specs for ``bind_tools``, and replies to a message's tool calls."""

    @property
    def specs(self) -> list[dict[str, Any]]: ...

    async def execute(self, message: AIMessage, turn: int) -> ToolTurn: ...


class Agent:
    """One run of the loop over a conversation; knows nothing of KNIME, MCP sessions or tables."""

    def __init__(
        self,
        model: BaseChatModel,
        conversation: ConversationLike,
        toolset: ToolsetLike,
        config: AgentConfig,
        *,
        progress: ProgressCallback | None = None,
        secrets: Sequence[str | None] = (),
        stream: TextListener | None = None,
        prepare: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """``stream`` hears the answers' text as it is generated (the chat); without it each answer comes whole.
        ``prepare`` runs as each run starts (the servers' instructions join the system message the first time)."""
        self._model = model
        self._prepare = prepare
        self._stream = stream
        self._specs: list[dict[str, Any]] | None = None
        self._with_tools = model
        self._conversation = conversation
        self._toolset = toolset
        self._config = config
        self._progress = progress
        self._secrets = secrets
        self._step = (0.0, "")

    async def run(self) -> None:
        """Ask and run tools until the model answers without tool calls; at the limit, fail or ask for an answer."""
        from knime_mcp.conversation import awaiting_message

        limit = self._config.iteration_limit
        if self._prepare is not None:
            await self._prepare()
        # Calls left awaiting approval by an earlier run are answered first (turn 0), without asking the model.
        if (pending := awaiting_message(self._conversation.messages)) and not await self._reply(pending, 0):
            return
        for turn in range(1, limit + 1):
            self._report((turn - 1) / limit, f"Model call {turn} of at most {limit}")
            answer = with_call_ids(await self._ask(self._tools_model(), self._conversation.messages))
            self._conversation.append(answer)
            if not (answer.tool_calls or answer.invalid_tool_calls) or not await self._reply(answer, turn):
                return
        if self._config.on_limit == "fail":
            raise IterationLimitError(
                f"The model was still calling tools after {limit} model calls (the iteration limit).",
                hint="Raise the iteration limit, or let the node ask for a final answer when the limit is reached.",
            )
        from langchain_core.messages import HumanMessage

        self._report(1.0, "Asking for a final answer")
        self._conversation.append(
            await self._ask(self._model, [*self._conversation.messages, HumanMessage(FINAL_ANSWER_PROMPT)])
        )

    async def _reply(self, answer: AIMessage, turn: int) -> bool:
        """Run the answer's tool calls and add the replies; False when the run stops with calls awaiting approval."""
        replies = await self._toolset.execute(answer, turn)
        self._conversation.append(*replies.messages)
        if replies.errors and self._config.tool_errors == "fail":
            raise replies.errors[0]
        return not replies.awaiting

    async def _ask(self, model: Any, messages: list[BaseMessage]) -> AIMessage:
        with model_errors(model_label(self._model), self._secrets):
            if self._stream is None:
                answer = await model.ainvoke(messages)
            else:
                answer = await streamed_answer(model, messages, self._stream)
        check_answer(answer)
        return answer

    def _tools_model(self) -> Any:
        """The model bound to the tools offered now, which change when a server changes its tools mid-run."""
        specs = self._toolset.specs
        if specs != self._specs:
            self._specs = specs
            self._with_tools = self._model.bind_tools(specs) if specs else self._model
        return self._with_tools

    def report_tool(self, tool: str, text: str) -> None:
        """A running tool's progress, after the step the run is at."""
        fraction, step = self._step
        self._report(fraction, f"{step}; tool {tool}: {text}", step=step)

    def _report(self, fraction: float, message: str, *, step: str | None = None) -> None:
        self._step = (fraction, step or message)
        if self._progress is not None:
            self._progress(fraction, message)


@dataclass(frozen=True, kw_only=True)
class AgentRun:
    """What a run produced: the conversation (history and new messages, and an error row in the error-column mode)
    and the tool-call log, one entry per tool call in call order."""

    conversation: Conversation
    log: list[ToolCallLogEntry] = field(default_factory=list)

    failure: McpToolError | None = None
    """Why the run stopped early, in the error-column mode (its class gives the CLI's exit code)."""

    warnings: list[str] = field(default_factory=list)
    """MCP tools the model was not offered and why, offered tools without annotations (see
    :meth:`ToolPolicy.offer`), and the pinned tools over the tool budget (see
    :attr:`~knime_mcp.agent.toolset.AgentToolset.warnings`), and the MCP Apps that could not be read for the
    tool-call log (:class:`~knime_mcp.agent.app_reads.AppReads`), for a node warning; they are logged as warnings
    too (the CLI's stderr)."""

    awaiting: list[ApprovalRequest] = field(default_factory=list)
    """The calls the run stopped at, awaiting approval; run again with the conversation and decisions to resume."""

    interrupted: bool = False
    """Whether Ctrl-C stopped the run (``run_agent``'s ``interrupt``): the calls it cut off are logged as cancelled."""


class AgentParts(NamedTuple):
    """A run's parts over one :class:`ClientPool`: :func:`run_agent` runs them once, a chat session turn by turn."""

    agent: Agent
    conversation: Conversation
    toolset: AgentToolset
    warnings: list[str]
    """See :attr:`AgentRun.warnings`."""
    instructions: Callable[[], Awaitable[list[ServerInstructions]]]
    """What the servers say about themselves (a chat shows it on request): :meth:`ServerGuidance.listed`."""
    dispatcher: Dispatcher
    """How the toolset's calls run (the tool policy, timeouts, retries): a chat's apps call their server's tools so."""
    pool: ClientPool
    """The run's sessions, one per server: a chat's apps read and list their own server's resources through it."""


@asynccontextmanager
async def assembled(
    model: BaseChatModel,
    tools: Sequence[MCPTool | LocalTool],
    *,
    system_message: str | None = DEFAULT_SYSTEM_MESSAGE,
    history: Sequence[BaseMessage] = (),
    config: AgentConfig | None = None,
    credentials: CredentialLookup | None = None,
    secrets: Sequence[str | None] = (),
    progress: ProgressCallback | None = None,
    data: DataRepository | None = None,
    show_sign_in: Callable[[str], None] | None = None,
    forms: FormAsker | None = None,
    hooks: ToolHooks | None = None,
    stream: TextListener | None = None,
    approver: Approver | None = None,
    call_progress: ToolProgress | None = None,
) -> AsyncIterator[AgentParts]:
    """The agent over ``tools`` with one session per server, open until the block ends. ``forms`` lets a person
    fill in the servers' forms, ``hooks`` hear each tool call start and end, ``stream`` hears the answers' text as
    it is generated, ``call_progress`` each MCP call's progress lines and task statuses (a chat shows them); the
    other arguments are :func:`run_agent`'s."""
    from knime_mcp.agent.approval_gate import ApprovalGate
    from knime_mcp.agent.resource_tools import resource_tools, table_servers
    from knime_mcp.agent.server_guidance import ServerGuidance
    from knime_mcp.agent.skill_tools import scripts_run, skill_tools, skills_section, withheld_scripts
    from knime_mcp.agent.skills import load_skills
    from knime_mcp.agent.tool_changes import ToolWatch
    from knime_mcp.agent.toolset import AgentToolset
    from knime_mcp.calls.dispatch import Dispatcher
    from knime_mcp.calls.pool import ClientPool
    from knime_mcp.conversation import Conversation
    from knime_mcp.mcp.server_requests import ServerRequests
    from knime_mcp.tools.tool import MCPTool

    config = config or AgentConfig()
    servers = table_servers(tools) if config.resources else {}
    # Blocked tools are not offered at all: a model offered one only wastes turns calling it (the dispatcher would
    # refuse the call anyway).
    table = [tool for tool in tools if isinstance(tool, MCPTool)]
    offer = config.policy.offer(table)
    for line in offer.warnings:
        _logger.warning("%s", line)
    offered = {id(tool) for tool in offer.tools}
    tools = [tool for tool in tools if not isinstance(tool, MCPTool) or id(tool) in offered]
    skills, skill_warnings = load_skills(config.skills) if config.skills else ([], [])
    data_section = data.system_section() if data is not None else ""
    scripts = scripts_run(config.policy, scripts=config.skill_scripts)
    sections = [system_prompt(system_message), skills_section(skills, scripts=scripts), data_section]
    conversation = Conversation("\n\n".join(filter(None, sections)), history)
    async with ClientPool(
        credentials=credentials,
        max_concurrency=config.max_concurrency,
        check_unsealed=not config.trust_all_servers,
        show_sign_in=show_sign_in,
        requests=ServerRequests(config.server_requests, model=model, secrets=secrets, forms=forms),
    ) as pool:
        agent: Agent | None = None

        def tool_progress(tool: str, text: str) -> None:
            if agent is not None:
                agent.report_tool(tool, text)
            if call_progress is not None:
                call_progress(tool, text)

        dispatcher = Dispatcher(
            pool,
            timeout=config.call_timeout,
            retry=config.retry,
            policy=config.policy,
            progress=tool_progress,
            tasks=config.tasks,
        )
        resources, left_out = resource_tools(servers, pool, config.policy)
        skill_offer, skills_left_out = skill_tools(skills, config.policy, scripts=config.skill_scripts)
        left_out += [*skill_warnings, *skills_left_out]
        toolset = AgentToolset(
            [*tools, *resources, *skill_offer],
            dispatcher,
            max_concurrency=config.max_concurrency,
            output_cap=config.output_cap,
            data=data,
            secrets=list(filter(None, secrets)),
            watch=ToolWatch(pool, config.policy, table),
            hooks=hooks,
            approvals=ApprovalGate(config.approval, approver),
            budget=config.tool_budget,
            withheld={**offer.withheld, **withheld_scripts(skills, config.policy, scripts=config.skill_scripts)},
            hints=config.tool_hints,
        )
        for line in [*left_out, *toolset.warnings]:
            _logger.warning("%s", line)
        guidance = ServerGuidance(pool, tools, conversation, give_model=config.server_instructions)
        agent = Agent(
            model, conversation, toolset, config, progress=progress, secrets=secrets, stream=stream,
            prepare=guidance.ready,
        )  # fmt: skip
        warnings = [*offer.warnings, *left_out, *toolset.warnings]
        yield AgentParts(agent, conversation, toolset, warnings, guidance.listed, dispatcher, pool)


async def run_agent(
    model: BaseChatModel,
    tools: Sequence[MCPTool | LocalTool],
    user_message: str,
    *,
    system_message: str | None = DEFAULT_SYSTEM_MESSAGE,
    history: Sequence[BaseMessage] = (),
    config: AgentConfig | None = None,
    credentials: CredentialLookup | None = None,
    secrets: Sequence[str | None] = (),
    progress: ProgressCallback | None = None,
    data: DataRepository | None = None,
    show_sign_in: Callable[[str], None] | None = None,
    approver: Approver | None = None,
    interrupt: Interrupt | None = None,
) -> AgentRun:
    """Run the agent on ``user_message`` after ``history``, with MCP and workflow tools.

    ``secrets`` (the model's API key) are scrubbed from model errors, from what tools answer before the model sees
    it, and from the tool-call log; the secrets the MCP servers are given are masked by their clients already. Under
    :func:`run_sync` this runs on the background loop; workflow tools reach back to the caller's thread on their
    own. With ``data`` (the repository the workflow tools share), the system message lists its tables and MCP
    results' records become tables too. ``approver`` decides the calls ``config.approval`` names; when
    ``history`` ends with calls awaiting approval, they are resumed and ``user_message`` is not sent again. With
    ``interrupt``, Ctrl-C under :func:`run_sync` stops the run where it is: its calls under way are cancelled (on the
    servers too), each call of the model's last message is answered and logged as cancelled, and the run returns what
    it has, ``interrupted``.
    """
    from langchain_core.messages import HumanMessage

    from knime_mcp.agent.chat_events import CallTracker
    from knime_mcp.conversation import awaiting_message

    config = config or AgentConfig()
    if not user_message.strip():
        raise ConfigError("The user message is empty.", hint="Enter the prompt for the model.")
    calls = CallTracker() if interrupt is not None else None
    async with assembled(
        model, tools, system_message=system_message, history=history, config=config, credentials=credentials,
        secrets=secrets, progress=progress, data=data, show_sign_in=show_sign_in, approver=approver, hooks=calls,
    ) as parts:  # fmt: skip
        agent, conversation = parts.agent, parts.conversation
        if awaiting_message(history) is None:
            conversation.append(HumanMessage(user_message))
        failure: McpToolError | None = None
        with interrupt.stoppable() if interrupt is not None else nullcontext():
            try:
                await agent.run()
            except McpToolError as exc:
                if config.errors == "fail":
                    raise
                failure = exc
                conversation.append_error(str(exc))
        interrupted = interrupt is not None and interrupt.asked
        if calls is not None and interrupted:
            calls.settle_stopped(conversation, parts.toolset.log)
    log, awaiting = parts.toolset.log, list(parts.toolset.awaiting)
    return AgentRun(
        conversation=conversation, log=log, failure=failure, warnings=[*parts.warnings, *parts.toolset.apps.warnings],
        awaiting=awaiting, interrupted=interrupted,
    )  # fmt: skip
