"""A chat with the agent: one conversation kept going turn after turn, with a person watching, stopping, approving
calls and filling in the servers' forms.

Layer: core (agent), above the loop's parts (:func:`~knime_mcp.agent.loop.assembled`: one
:class:`~knime_mcp.calls.pool.ClientPool`, so one session per server for the whole chat) and below the faces: the
chat view's data service and ``knime-mcp chat``. Each turn runs as a task on one background event loop (an anyio
blocking portal held for the session's lifetime); the faces call the synchronous, thread-safe methods from their
own threads and read what happened as numbered events (:mod:`knime_mcp.agent.chat_events`).

- :meth:`ChatSession.stop` cancels the turn: calls in flight are cancelled, which the MCP SDK tells each server
  (``notifications/cancelled``; on the 2026-07-28 Streamable HTTP protocol, the call's closed stream is the
  cancellation); their tool messages say they were stopped, so the chat can go on.
- The session is the run's approver: a call the policy (``config.approval``) names waits on an ``approval`` event
  for :meth:`ChatSession.decide`; *Allow for this session* holds for the whole chat.
- A server's form (elicitation) waits on a ``form`` event for :meth:`ChatSession.answer_form`, whose content is
  checked against the form's schema (reduced to the protocol's flat object of primitive fields before it became an
  event, :mod:`knime_mcp.mcp.form_schema`); a URL-mode form carries the page's address, which only the person opens.
- A running call's progress and an MCP task's status messages come as ``progress`` events.
- An OAuth sign-in link becomes a ``sign_in`` event, which the person opens (no browser opens by itself, unless
  ``open_browser``: the terminal's chat).
- The conversation so far (``history``) comes first, as the events a page shows when it opens again.
- Before each turn, the tools the servers changed since the last one are offered (a change they announced, or a
  tool list past the lifetime its server gave it, :mod:`knime_mcp.agent.tool_changes`).
- :meth:`ChatSession.instructions` is what the servers say about themselves, for a person who asks.
- A call of a tool that has an app (MCP Apps) names it on its ``tool_start``; the app, shown under the call, asks the
  chat through :meth:`ChatSession.app_request` (its view, its server's tools and resources, a message), answered as
  ``app_reply`` events (:mod:`knime_mcp.agent.app_requests`).

    with ChatSession(model, tools, config=AgentConfig()) as chat:
        chat.send("What is 2 + 3?")
        events = chat.events(after=0)
"""

from __future__ import annotations

import contextvars
import itertools
import logging
import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar, get_args

import anyio
from anyio.from_thread import BlockingPortal, start_blocking_portal

from knime_mcp.agent.app_requests import AppRequests, message_text
from knime_mcp.agent.approval import ApprovalRequest, Choice, Decision, SessionApprover
from knime_mcp.agent.approval_gate import ApprovalGate
from knime_mcp.agent.chat_events import EventLog, TurnEvents, calling_server
from knime_mcp.agent.loop import DEFAULT_SYSTEM_MESSAGE, AgentConfig, AgentParts, AgentRun, assembled
from knime_mcp.auth.signin import LinkOnly
from knime_mcp.errors import ConfigError, McpToolError
from knime_mcp.mcp.server_requests import FormAction, FormAnswer, FormRequest
from knime_mcp.tools.argument_validation import validate_arguments

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage

    from knime_mcp.agent.data import DataRepository
    from knime_mcp.calls.dispatch import LocalTool
    from knime_mcp.config import CredentialLookup
    from knime_mcp.tools.tool import MCPTool

__all__ = ["ChatSession", "FormAction"]

logger = logging.getLogger(__name__)

_ACTIONS: tuple[str, ...] = get_args(FormAction)

T = TypeVar("T")


class _Waiting(Generic[T]):
    """An answer a person owes; set on the session's event loop."""

    def __init__(self, default: T) -> None:
        self.event = anyio.Event()
        self.answer = default

    def give(self, answer: T) -> None:
        self.answer = answer
        self.event.set()


class _Form(NamedTuple):
    request: FormRequest
    waiting: _Waiting[FormAnswer]

    @property
    def input_schema(self) -> dict[str, Any]:
        """For :func:`validate_arguments`, which checks a tool's arguments the same way."""
        return self.request.schema or {"type": "object"}


class _Person:
    """The session's :class:`~knime_mcp.agent.approval.Approver`: asks on an ``approval`` event."""

    def __init__(self, session: ChatSession) -> None:
        self._session = session

    async def decide(self, request: ApprovalRequest) -> Decision | None:
        return await self._session._ask_approval(request)


class ChatSession(AbstractContextManager["ChatSession"]):
    """One conversation with the agent over one session per server, for a person; see the module docstring."""

    def __init__(
        self,
        model: BaseChatModel,
        tools: Sequence[MCPTool | LocalTool],
        *,
        config: AgentConfig,
        history: Sequence[BaseMessage] = (),
        system_message: str | None = DEFAULT_SYSTEM_MESSAGE,
        credentials: CredentialLookup | None = None,
        secrets: Sequence[str | None] = (),
        data: DataRepository | None = None,
        open_browser: bool = False,
    ) -> None:
        """The arguments are :func:`~knime_mcp.agent.loop.run_agent`'s; ``history`` is the conversation so far;
        ``open_browser``: whether an OAuth sign-in also opens the system browser (a page opens the link on a click)."""
        self._log = EventLog()
        self._turn_events = TurnEvents(self._log, [secret for secret in secrets if secret])
        self._turn_events.earlier(history, tools)
        show_sign_in = self._sign_in if open_browser else LinkOnly(self._sign_in)
        # One approver for the model's calls and the apps': one "Allow for this session".
        approver = SessionApprover(_Person(self))
        self._assemble = lambda: assembled(
            model, tools, system_message=system_message, history=history, config=config, credentials=credentials,
            secrets=secrets, data=data, show_sign_in=show_sign_in, forms=self._ask_form, hooks=self._turn_events,
            stream=self._turn_events.delta, approver=approver, call_progress=self._turn_events.progress,
        )  # fmt: skip
        self._apps = AppRequests(
            self._log, self._turn_events, ApprovalGate(config.approval, approver), config.policy, tools,
            [secret for secret in secrets if secret],
        )  # fmt: skip
        self._app_request_ids = itertools.count(1)
        self._context = contextvars.copy_context()
        """What the session was made in (a node's team seal key, :func:`knime_mcp.seal.team_seal_key`): its turns
        run in it, whichever thread sends."""
        self._lock = threading.Lock()
        self._idle = threading.Event()
        self._idle.set()
        self._portal_cm: AbstractContextManager[BlockingPortal] | None = None
        self._portal: BlockingPortal | None = None
        self._parts_cm: AbstractContextManager[AgentParts] | None = None
        self._parts: AgentParts | None = None
        self._scope: anyio.CancelScope | None = None
        self._stop_asked = False
        self._failure: McpToolError | None = None
        self._forms: dict[str, _Form] = {}
        self._form_ids = itertools.count(1)
        self._approvals: dict[str, _Waiting[Decision | None]] = {}

    # -- lifecycle -----------------------------------------------------------------------------------------------

    def __enter__(self) -> ChatSession:
        self.open()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def open(self) -> None:
        """Start the event loop and wire the agent; servers connect on their first call."""
        if self._portal_cm is not None:
            raise RuntimeError("The chat session is open already; a session opens once.")
        self._portal_cm = start_blocking_portal(backend="asyncio")
        portal = self._portal_cm.__enter__()
        try:
            self._parts_cm = portal.wrap_async_context_manager(self._assemble())
            self._parts = self._parts_cm.__enter__()
            self._apps.open(self._parts)
        except BaseException as exc:
            self._portal_cm.__exit__(type(exc), exc, exc.__traceback__)
            raise
        self._portal = portal

    def close(self) -> None:
        """Stop a running turn, wait for it to end, and close every session; :meth:`run` still answers."""
        if self._portal is None:
            return
        self.stop()
        self._idle.wait()
        assert self._portal_cm is not None and self._parts_cm is not None
        with self._lock:
            portal, self._portal = self._portal, None
        assert portal is not None
        try:
            portal.call(self._apps.cancel)  # the apps' requests under way end before their sessions close
            self._parts_cm.__exit__(None, None, None)
        finally:
            self._portal_cm.__exit__(None, None, None)

    # -- what a face calls ---------------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """Whether a turn is under way."""
        return not self._idle.is_set()

    def events(self, after: int = 0, wait: float | None = None) -> list[dict[str, Any]]:
        """The events numbered above ``after``, oldest first; with ``wait``, waiting up to that many seconds for a
        new one (a terminal follows the chat so, without polling)."""
        return self._log.after(after, wait)

    def send(self, text: str) -> None:
        """Start a turn with the person's message; it runs in the background."""
        self._start(text)

    def app_request(self, call_id: str, method: str, params: dict[str, Any] | None = None) -> str:
        """An app's request (the app of call ``call_id``; :mod:`knime_mcp.agent.app_requests`): its id, at once; the
        answer comes as the ``app_reply`` event with that ``request_id``, as it may wait for a person's approval."""
        portal = self._open_portal()
        request_id = f"app-request-{next(self._app_request_ids)}"
        if method != "ui/message":
            self._context.copy().run(
                portal.start_task_soon, self._apps.answer, request_id, call_id, method, params or {}
            )
            return request_id
        try:  # a message starts a turn, as the person's does
            app = portal.call(self._apps.app_name, call_id)
            if self.running:
                raise ConfigError("The app's message was not sent: the assistant is still answering.")
            self._start(message_text(params), by_app=app)
        except McpToolError as exc:
            self._apps.refuse(request_id, str(exc))
        else:
            self._log.add("app_reply", request_id=request_id, result={})
        return request_id

    def _start(self, text: str, by_app: str | None = None) -> None:
        """Start a turn with a message: the person's, or an app's (``by_app``, its name, on the ``user`` event)."""
        if not text.strip():
            raise ConfigError("The message is empty.", hint="Type a message before sending it.")
        with self._lock:
            portal = self._open_portal()
            if self.running:
                raise ConfigError("The assistant is still answering.", hint="Wait for the answer, or stop it.")
            self._idle.clear()
            self._stop_asked = False
        self._log.add("user", text=text, **({"by_app": by_app} if by_app else {}))
        said = text if by_app is None else f"[Sent by the {by_app}, not typed by the person.] {text}"  # for the model
        self._context.copy().run(portal.start_task_soon, self._turn, said)

    def stop(self) -> None:
        """End the running turn: cancel its calls in flight (on the servers too) and its open forms."""
        with self._lock:
            portal = self._portal
        if portal is not None and self.running:
            portal.call(self._stop_now)

    def decide(
        self, call_id: str, choice: Choice, arguments: dict[str, Any] | None = None, reason: str | None = None
    ) -> None:
        """Answer the ``approval`` event of call ``call_id``."""
        decision = Decision(choice, arguments, reason)
        self._open_portal().call(self._give_decision, call_id, decision)

    def answer_form(self, form_id: str, action: FormAction, content: dict[str, Any] | None = None) -> None:
        """Answer the ``form`` event ``form_id``; accepted content that breaks the form's schema is an ``error``
        event, and the form stays open."""
        if action not in _ACTIONS:
            raise ConfigError(f"Unknown form action {action!r}.", hint=f"Use one of {', '.join(_ACTIONS)}.")
        self._open_portal().call(self._give_form_answer, form_id, action, content)

    def instructions(self) -> list[dict[str, Any]]:
        """What the servers say about themselves (``server`` and ``text``, capped, and whether it was ``cut``), for
        a person who asks: every server of the chat's tools when the model is given it (their sessions open now if
        no turn opened them), else the servers connected so far."""
        portal = self._open_portal()
        assert self._parts is not None
        return [item.to_dict() for item in portal.call(self._parts.instructions)]

    def run(self) -> AgentRun:
        """The conversation and the tool-call log so far, for a node's outputs."""
        with self._lock:
            portal = self._portal
        return portal.call(self._snapshot) if portal is not None else self._snapshot()

    # -- on the event loop ---------------------------------------------------------------------------------------

    def _open_portal(self) -> BlockingPortal:
        if self._portal is None:
            raise RuntimeError("Open the chat session with 'with' (or open()) before using it, and not after close().")
        return self._portal

    async def _turn(self, text: str) -> None:
        from langchain_core.messages import HumanMessage

        parts = self._parts
        assert parts is not None
        self._turn_events.new_turn()
        self._failure = None
        parts.conversation.append(HumanMessage(text))
        try:
            with anyio.CancelScope() as self._scope:
                if self._stop_asked:
                    self._scope.cancel()
                await self._answer(parts)
            if self._scope.cancel_called:
                self._turn_events.settle_stopped(parts.conversation, parts.toolset.log)
        finally:
            self._scope = None
            self._idle.set()
            self._log.add("turn_end")

    async def _answer(self, parts: AgentParts) -> None:
        try:
            await parts.toolset.follow_tool_changes()
            await parts.agent.run()
            self._turn_events.answered()
        except McpToolError as exc:
            self._failure = exc
            self._log.add("error", message=str(exc))
        except Exception as exc:  # the chat goes on; the person sees what broke
            logger.exception("The chat's turn failed")
            self._log.add("error", message=f"The turn failed unexpectedly: {exc}")

    def _stop_now(self) -> None:
        self._stop_asked = True  # a turn not started yet stops as it starts
        # A form may be asked outside the turn's task (a server's request on an older protocol), so it is answered.
        for form in list(self._forms.values()):
            form.waiting.give(("cancel", None))
        if self._scope is not None:
            self._scope.cancel()

    def _snapshot(self) -> AgentRun:
        parts = self._parts
        assert parts is not None
        return AgentRun(
            conversation=parts.conversation, log=list(parts.toolset.log), failure=self._failure,
            warnings=list(parts.warnings),
        )  # fmt: skip

    def _sign_in(self, url: str) -> None:
        self._log.add("sign_in", server=calling_server.get(), url=url)

    async def _ask_approval(self, request: ApprovalRequest) -> Decision | None:
        waiting: _Waiting[Decision | None] = _Waiting(None)
        self._approvals[request.call_id] = waiting
        self._log.add("approval", **request.to_dict(), **self._apps.by_app(request.call_id))
        try:
            await waiting.event.wait()
        finally:
            self._approvals.pop(request.call_id, None)
        return waiting.answer

    def _give_decision(self, call_id: str, decision: Decision) -> None:
        if (waiting := self._approvals.get(call_id)) is None:
            self._log.add("error", message=f"No call {call_id!r} is waiting for approval.")
        else:
            waiting.give(decision)

    async def _ask_form(self, request: FormRequest) -> FormAnswer:
        form_id = f"form-{next(self._form_ids)}"
        form = _Form(request, _Waiting(("cancel", None)))
        self._forms[form_id] = form
        self._log.add(
            "form", form_id=form_id, server=request.server, message=request.message, schema=request.schema,
            url=request.url,
        )  # fmt: skip
        try:
            await form.waiting.event.wait()
        finally:
            self._forms.pop(form_id, None)
        return form.waiting.answer

    def _give_form_answer(self, form_id: str, action: FormAction, content: dict[str, Any] | None) -> None:
        if (form := self._forms.get(form_id)) is None:
            self._log.add("error", message=f"The form {form_id!r} is not open any more.")
            return
        if action == "accept" and form.request.url is None:
            problems = validate_arguments(form, content or {})
            if problems:
                message = f"The answer does not fit the form: {'; '.join(problems)}"
                self._log.add("error", message=message, form_id=form_id)
                return
        form.waiting.give((action, content if action == "accept" else None))
