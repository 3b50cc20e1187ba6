"""What MCP servers send and ask the client during a session, answered by the run's policy.

Layer: core, used by :mod:`knime_mcp.mcp.session_keeper`, which hands :meth:`SessionRequests.client_options` to
``mcp.Client`` (the SDK speaks the protocol: requests to the client on the older protocol, input-required rounds of a
tool call on the 2026-07-28 one, answered by the same callbacks). A workflow usually runs without a person, so:

- sampling (``sampling/createMessage``) is answered by the run's chat model only when the run allows it, within
  :class:`~knime_mcp.config.SamplingLimits` (answer tokens, requests per run, prompt bytes), and declined with an
  error saying why otherwise;
- a form (elicitation) is first reduced to the protocol's flat object of primitive fields
  (:mod:`knime_mcp.mcp.form_schema`), so no part a server sent as something else reaches a person's page or
  terminal; one that cannot be reduced is declined. Then it goes to a person when the run has one (the chat: a
  :data:`FormAsker`); otherwise it is answered with its schema's defaults when the policy says so and every field
  has one, and declined; URL-mode elicitations are declined unless a person sees them. Each decline is noted on
  the session, and the client makes the tool call it happened in a tool error: the server's answer after a decline
  reads like a success;
- ``roots/list`` is answered with the spec's folders (offered only when there are some);
- log messages go to Python logging (``knime_mcp.server_log``);
- ``notifications/tools/list_changed`` is counted for the agent to list the tools again (on a 2026-07-28 connection
  the server sends it only on a ``subscriptions/listen`` stream, which :meth:`SessionRequests.follow_changes` holds).

    requests = ServerRequests(ServerRequestPolicy(elicitation="defaults"))
    async with mcp.Client(transport, **requests.session(spec, mask).client_options()) as client: ...
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import mcp
import mcp_types
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_REQUEST

from knime_mcp.config import DEFAULT_SERVER_REQUESTS, ServerRequestPolicy, ServerSpec
from knime_mcp.errors import McpToolError
from knime_mcp.mcp.form_schema import FORM_FIELDS, FormSchemaError, reduce_form

if TYPE_CHECKING:
    from anyio.abc import TaskStatus
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage
    from mcp.client.session import ClientRequestContext, IncomingMessage

__all__ = [
    "CallProgress", "FormAction", "FormAnswer", "FormAsker", "FormRequest", "ServerRequests", "SessionRequests",
    "progress_text",
]  # fmt: skip

logger = logging.getLogger(__name__)
server_log = logging.getLogger("knime_mcp.server_log")
"""The servers' own log messages (``notifications/message``), apart from knime-mcp's."""

CallProgress = Callable[[float | None, float | None, str | None], None]
"""Hears a tool call's progress notifications: ``(progress, total, message)``; a task's new status comes as
``(None, None, message)``: a status has no count."""

_LEVELS = {
    "debug": logging.DEBUG, "info": logging.INFO, "notice": logging.INFO, "warning": logging.WARNING,
    "error": logging.ERROR, "critical": logging.CRITICAL, "alert": logging.CRITICAL, "emergency": logging.CRITICAL,
}  # fmt: skip
_SERVER_LOG_LEVEL = "info"
"""The least severe server log messages asked for on 2026-07-28 connections (older ones send all)."""


@dataclass(frozen=True)
class FormRequest:
    """A server's form for a person: fields from ``schema``, or (``url``) a page to open, which only a person's
    click may open."""

    server: str
    message: str
    schema: dict[str, Any] | None
    url: str | None


FormAction = Literal["accept", "decline", "cancel"]
FormAnswer = tuple[FormAction, dict[str, Any] | None]
"""The person's action, and the content of an accepted form (checked against its schema by whoever asked)."""

FormAsker = Callable[[FormRequest], Awaitable[FormAnswer]]
"""Asks a person to fill in a form and waits for the answer."""


def progress_text(progress: float | None, total: float | None, message: str | None) -> str:
    """One progress notification as a short line: ``3 of 5 (60%): copying``; a task's status as its message."""
    if progress is None:
        return message or ""
    done = f"{progress:g} of {total:g} ({progress / total:.0%})" if total else f"{progress:g}"
    return f"{done}: {message}" if message else done


class ServerRequests:
    """One run's answers to what servers ask, shared by all its sessions (the sampling budget is per run)."""

    def __init__(
        self,
        policy: ServerRequestPolicy = DEFAULT_SERVER_REQUESTS,
        *,
        model: BaseChatModel | None = None,
        secrets: Sequence[str | None] = (),
        forms: FormAsker | None = None,
    ) -> None:
        """``model``: the chat model that answers sampling requests when ``policy.sampling`` allows them;
        ``secrets`` (its API key) never reach a server in the error of a failed answer; ``forms``: the person who
        fills in the servers' forms, when there is one."""
        self.policy = policy
        self.forms = forms
        self._model = model
        self._secrets = secrets
        self._sampled = 0

    def session(self, spec: ServerSpec, mask: Callable[[str], str]) -> SessionRequests:
        """The callbacks for one session to ``spec``; ``mask`` hides the secrets it was given in what it logs."""
        return SessionRequests(self, spec, mask)

    async def sample(self, server: str, params: mcp_types.CreateMessageRequestParams) -> mcp_types.CreateMessageResult:
        """Ask the run's model, within the limits; raises :class:`_Declined` saying why it will not."""
        limits = self.policy.sampling
        if limits is None or self._model is None:
            raise _Declined(
                "knime-mcp declines sampling requests here: only the Agent Prompter answers them, with its chat "
                "model, when 'Answer sampling requests with the chat model' is on; on the command line knime-mcp "
                "answers none."
            )
        if self._sampled >= limits.max_requests:
            raise _Declined(f"knime-mcp answers at most {limits.max_requests} sampling requests per run.")
        messages = _chat_messages(params)
        if (size := _prompt_bytes(messages)) > limits.max_prompt_bytes:
            raise _Declined(
                f"The request has a prompt of {size:,} bytes; knime-mcp sends a model at most "
                f"{limits.max_prompt_bytes:,} bytes (about {limits.max_prompt_bytes // 4:,} tokens) of a server's "
                "prompt ('Largest sampling prompt' in the Agent Prompter)."
            )
        self._sampled += 1
        max_tokens = min(params.max_tokens, limits.max_tokens)
        from knime_mcp.llm.chat_model import model_errors, model_label, model_name
        from knime_mcp.llm.stop_reasons import stop_reason

        name = model_name(self._model)
        with model_errors(model_label(self._model), self._secrets):
            answer = await self._model.bind(max_tokens=max_tokens).ainvoke(messages)
        logger.info(
            "%s: answered sampling request %d of at most %d with the chat model (at most %d tokens)",
            server, self._sampled, limits.max_requests, max_tokens,
        )  # fmt: skip
        cut = stop_reason(answer) == "length"
        return mcp_types.CreateMessageResult(
            role="assistant",
            content=mcp_types.TextContent(type="text", text=answer.text),
            model=name,
            stop_reason="maxTokens" if cut else "endTurn",
        )


class SessionRequests:
    """The callbacks of one session, and what they saw: the elicitations declined and the tool list changes."""

    def __init__(self, run: ServerRequests, spec: ServerSpec, mask: Callable[[str], str]) -> None:
        self._run = run
        self._spec = spec
        self._mask = mask
        self.declined: list[str] = []
        """Why each declined elicitation was declined, in order; the client compares its length around a call."""
        self.tool_list_changes = 0
        """How many ``notifications/tools/list_changed`` the server sent."""

    @property
    def _server(self) -> str:
        return self._spec.display_name

    def client_options(self) -> dict[str, Any]:
        """Keyword arguments for ``mcp.Client``: sampling and elicitation are always declared (and declined where the
        policy says so, with a reason), so a server offers the same tools to every node; roots only when set."""
        options: dict[str, Any] = {
            "sampling_callback": self._sample,
            "elicitation_callback": self._elicit,
            "logging_callback": self._log,
            "log_level": _SERVER_LOG_LEVEL,
            "message_handler": self._notice,
        }
        if self._spec.roots:
            options["list_roots_callback"] = self._roots
        return options

    async def _sample(
        self, context: ClientRequestContext, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResult | mcp_types.ErrorData:
        try:
            return await self._run.sample(self._server, params)
        except (_Declined, McpToolError) as exc:
            reason = self._mask(str(exc))
            logger.warning("%s: declined a sampling request: %s", self._server, reason)
            return mcp_types.ErrorData(code=INVALID_REQUEST, message=reason)

    async def _elicit(
        self, context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        asked = self._mask(params.message)
        schema = None
        if isinstance(params, mcp_types.ElicitRequestFormParams):
            try:
                schema = reduce_form(params.requested_schema)
            except FormSchemaError as exc:
                return self._decline(f"it asks for a form ({asked!r}) that cannot be shown: {exc}; {FORM_FIELDS}")
        if (forms := self._run.forms) is not None:
            return await self._ask_person(forms, params, asked, schema)
        if schema is None:
            reason = f"it asks a person to open a web page ({asked!r}), which knime-mcp never does"
        else:
            defaults, reason = _defaults(schema, self._run.policy.elicitation == "defaults")
            if defaults is not None:
                logger.info("%s: answered the form %r with its defaults: %s", self._server, asked, defaults)
                return mcp_types.ElicitResult(action="accept", content=defaults)
            reason = f"it asks for a form ({asked!r}) and {reason}"
        return self._decline(reason)

    def _decline(self, reason: str) -> mcp_types.ElicitResult:
        """Decline, noting why: the call the form came in fails with the reason (the server hears the decline)."""
        self.declined.append(reason)
        logger.warning("%s: declined a request for input: %s", self._server, reason)
        return mcp_types.ElicitResult(action="decline")

    async def _ask_person(
        self, forms: FormAsker, params: mcp_types.ElicitRequestParams, asked: str, schema: dict[str, Any] | None
    ) -> mcp_types.ElicitResult:
        """``schema``: the form's, reduced (:func:`~knime_mcp.mcp.form_schema.reduce_form`); None for a page."""
        if isinstance(params, mcp_types.ElicitRequestURLParams):
            request = FormRequest(self._server, asked, None, params.url)
        else:
            request = FormRequest(self._server, asked, schema, None)
        action, content = await forms(request)
        logger.info("%s: a person answered the form %r: %s", self._server, asked, action)
        return mcp_types.ElicitResult(action=action, content=content if action == "accept" else None)

    async def _roots(self, context: ClientRequestContext) -> mcp_types.ListRootsResult:
        roots = [mcp_types.Root(uri=Path(root).as_uri(), name=Path(root).name or root) for root in self._spec.roots]
        logger.info("%s: offered the roots %s", self._server, ", ".join(str(root.uri) for root in roots))
        return mcp_types.ListRootsResult(roots=roots)

    async def _log(self, params: mcp_types.LoggingMessageNotificationParams) -> None:
        data = params.data if isinstance(params.data, str) else json.dumps(params.data, ensure_ascii=False)
        source = f" ({params.logger})" if params.logger else ""
        server_log.log(_LEVELS.get(params.level, logging.INFO), "%s%s: %s", self._server, source, self._mask(data))

    async def _notice(self, message: IncomingMessage) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            self.tool_list_changes += 1
            logger.info("%s: the server's tool list changed", self._server)

    async def follow_changes(self, client: mcp.Client, *, task_status: TaskStatus[None]) -> None:
        """Hold a ``subscriptions/listen`` stream open: a server on a 2026-07-28 connection sends its tool list
        notifications only to a client that asked for them. Started once the server acknowledged it (so no change
        after the handshake is missed) or refused it (a server that offers none leaves the tools as listed)."""
        from mcp.client.subscriptions import ListenNotSupportedError, SubscriptionLost

        started = False
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                task_status.started()
                started = True
                async for _ in subscription:
                    pass  # the notification itself reaches the message handler
        except (ListenNotSupportedError, SubscriptionLost, MCPError, TimeoutError) as exc:
            logger.debug("%s: no subscription to tool list changes: %r", self._server, exc)
            if not started:
                task_status.started()


class _Declined(Exception):
    """A sampling request this run does not answer; the message tells the server why."""


def _defaults(schema: dict[str, Any], allowed: bool) -> tuple[dict[str, Any] | None, str]:
    """The form's answer from its defaults when ``allowed`` and every field has one, else None and why not."""
    fields: dict[str, Any] = schema.get("properties") or {}
    if not allowed:
        return None, "nobody can fill it in while a workflow runs (answering with defaults is off)"
    if not fields:
        return None, "it has no fields: only a person can confirm it"
    if missing := [name for name, field in fields.items() if "default" not in field]:
        return None, f"{'these fields have' if len(missing) > 1 else 'this field has'} no default: {', '.join(missing)}"
    return {name: field["default"] for name, field in fields.items()}, ""


def _prompt_bytes(messages: Sequence[BaseMessage]) -> int:
    """UTF-8 bytes of the texts of a sampling request, system prompt included."""
    return sum(len(message.text.encode("utf-8", errors="surrogatepass")) for message in messages)


def _chat_messages(params: mcp_types.CreateMessageRequestParams) -> list[BaseMessage]:
    """The request as chat messages; text only, since the content a server may send can be audio or tool results."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    messages: list[BaseMessage] = [SystemMessage(params.system_prompt)] if params.system_prompt else []
    for message in params.messages:
        blocks = message.content if isinstance(message.content, list) else [message.content]
        if not all(isinstance(block, mcp_types.TextContent) for block in blocks):
            raise _Declined("knime-mcp answers sampling requests with text messages only.")
        text = "\n".join(block.text for block in blocks if isinstance(block, mcp_types.TextContent))
        messages.append(AIMessage(text) if message.role == "assistant" else HumanMessage(text))
    return messages
