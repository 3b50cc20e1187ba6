"""The session layer: one MCP session per server, opened once and shared by every call of a run.

Below sits :mod:`knime_mcp.mcp.transports` (streams); above sit the provider, the dispatcher and the Tool Caller, which
see only :class:`MCPTool` and :class:`ToolResult`. The SDK's ``mcp.Client`` speaks the protocol (discovery with a
fallback to the initialize handshake, session ids, pagination cursors, cancellation notifications).

    async with McpClient(ServerSpec(target="http://127.0.0.1:8000/mcp")) as client:
        tools = await client.list_tools()
        result = await client.call_tool("echo", {"text": "hi"})

The session lives in a task of the client's own task group, so the connect timeout can bound the whole handshake
and a session that dies later does not cancel its caller: the next call sees a clear error instead.
"""

from __future__ import annotations

import enum
import logging
import secrets
from collections.abc import Awaitable, Callable, Iterable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field, replace
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

import anyio
import httpx2
import mcp
import mcp_types
from anyio.abc import TaskGroup, TaskStatus
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, METHOD_NOT_FOUND, PARSE_ERROR, REQUEST_TIMEOUT

from knime_mcp.auth import ServerOAuth, connect_deadline
from knime_mcp.catalog.prompts import MCPPrompt, RenderedPrompt, check_arguments, prompt_refused
from knime_mcp.catalog.resources import MCPResource, MCPResourceTemplate, ResourceContent, read_contents, read_refused
from knime_mcp.config import (
    OAUTH_KINDS,
    CredentialLookup,
    Handshake,
    ServerSpec,
    resolve_env,
    resolve_headers,
    resolved_secrets,
)
from knime_mcp.errors import (
    SESSION_TERMINATED,
    ConfigError,
    McpToolError,
    OutcomeUnknownError,
    ServerAuthError,
    ServerBusyError,
    ServerConnectError,
    SessionExpiredError,
    SessionLostError,
    ToolCallError,
    ToolError,
    ToolTimeoutError,
    masked,
    scrub,
    translate,
    translate_errors,
)
from knime_mcp.mcp.breaker import DEFAULT_BREAKER, Circuit, CircuitBreaker
from knime_mcp.mcp.diagnostics import CALL_KEY, Diagnostics
from knime_mcp.mcp.server_requests import CallProgress, ServerRequests, SessionRequests
from knime_mcp.mcp.tool_listing import ListedTools, listed_tools
from knime_mcp.mcp.transports import (
    FALLBACK_STATUSES,
    ConcreteTransport,
    HttpPool,
    candidate_transports,
    open_transport,
)
from knime_mcp.seal import seal_spec
from knime_mcp.tools.results import ToolResult
from knime_mcp.tools.tool import MCPTool
from knime_mcp.urlguard import PinnedHost

if TYPE_CHECKING:
    from mcp.client.session import ClientSession

__all__ = ["DEFAULT_MAX_CONCURRENCY", "McpClient"]

logger = logging.getLogger(__name__)

T = TypeVar("T")


class _Page(Protocol):
    """One page of a list the server hands out a page at a time."""

    next_cursor: str | None


_PageT = TypeVar("_PageT", bound=_Page)

DEFAULT_MAX_CONCURRENCY = 256
"""Calls in flight at once on a client made without a limit (a plain script, ``knime-mcp call``): a guard against a
runaway loop, not a brake on a burst, which the raw SDK sends all at once (a burst of 200 at 8 took 6x as long,
benchmark figure 3). The nodes and ``call-table`` pass their *Concurrency* setting instead, and a tool that writes
runs one call at a time there (:meth:`knime_mcp.caller.table.CallerOptions.concurrency_for`)."""
_MAX_PAGES = 1000
_CLOSE_GRACE_SECONDS = 5.0
_CANCEL_FLUSH_SECONDS = 0.25
"""After a timed-out call, how long closing waits so the cancellation sent to the server is not cut off with it."""


class _State(enum.Enum):
    UNOPENED = "unopened"
    OPENED = "opened"
    CLOSED = "closed"


@dataclass(eq=False)
class _Session:
    """One live connection: the SDK client, and the events by which its task is told to end and says it ended."""

    client: mcp.Client
    kind: ConcreteTransport
    diagnostics: Diagnostics
    requests: SessionRequests
    closing: anyio.Event = field(default_factory=anyio.Event)
    closed: anyio.Event = field(default_factory=anyio.Event)
    lost: BaseException | None = None


class _MismatchedResult(Exception):
    """A call's result that breaks the tool's output schema, carried past the SDK's check so it is not lost."""

    def __init__(self, result: mcp_types.CallToolResult, reason: str) -> None:
        super().__init__(reason)
        self.result, self.reason = result, reason


def _keep_mismatched_results(session: ClientSession) -> None:
    """Make the SDK's output-schema check of ``session`` raise :class:`_MismatchedResult`, which keeps the result,
    instead of a bare RuntimeError that drops it and would read as a lost connection."""
    check = session.validate_tool_result

    async def validate_keeping_the_result(name: str, result: mcp_types.CallToolResult) -> None:
        try:
            await check(name, result)
        except RuntimeError as exc:
            cause = exc.__cause__
            reason = getattr(cause, "message", None) or str(exc)
            if getattr(cause, "path", None):
                reason = f"{reason} (at {'/'.join(str(part) for part in cause.path)})"
            raise _MismatchedResult(result, reason) from exc

    session.validate_tool_result = validate_keeping_the_result  # type: ignore[method-assign]


class McpClient:
    """An async client for one MCP server with one reused session and a concurrency limit.

    A session that ends under a call (server restart, a stdio child that died, a Streamable HTTP session the
    server forgot) is replaced once, transparently; the call is repeated only when it is safe to repeat.
    """

    def __init__(
        self,
        spec: ServerSpec,
        *,
        credentials: CredentialLookup | None = None,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
        breaker: CircuitBreaker = DEFAULT_BREAKER,
        pin: PinnedHost | None = None,
        show_sign_in: Callable[[str], None] | None = None,
        requests: ServerRequests | None = None,
    ) -> None:
        """``requests``: how to answer what the server asks of the client (sampling, forms); by default everything
        is declined. ``pin``: for a server from data, the address :mod:`knime_mcp.urlguard` checked; every HTTP
        request of every session goes there. ``show_sign_in``: for an OAuth server (:mod:`knime_mcp.auth`), how to
        tell a person where to sign in when no stored sign-in serves; None where nobody can sign in (a batch run)."""
        self.spec = spec
        self._pin = pin
        self._show_sign_in = show_sign_in
        self._requests = requests or ServerRequests()
        self._oauth: ServerOAuth | None = None
        self._circuit = Circuit(breaker)
        self._credentials = credentials
        self._limiter = anyio.CapacityLimiter(max_concurrency)
        self._state = _State.UNOPENED
        self._stack = AsyncExitStack()
        self._task_group: TaskGroup | None = None
        self._http: HttpPool | None = None
        self._sessions: list[_Session] = []
        self._replacing = anyio.Lock()
        self._cancelled_calls = False
        self._handshake: Handshake | None = spec.handshake
        """What the server answered on the first connection (or what its tools table says): every later session,
        after a lost one or from a table, skips the ``server/discover`` probe of a server that speaks only
        ``initialize``."""

    @property
    def server(self) -> str:
        return self.spec.display_name

    @property
    def handshake(self) -> Handshake | None:
        """The handshake the server answered, once connected."""
        return self._handshake

    @property
    def tool_list_changes(self) -> int:
        """How many times the server said its tool list changed, in the current session."""
        return self._sessions[-1].requests.tool_list_changes if self._sessions else 0

    @property
    def tools_may_change(self) -> bool:
        """Whether the server declared that its tool list may change (``tools.listChanged``)."""
        tools = self._sessions[-1].client.server_capabilities.tools if self._sessions else None
        return bool(tools and tools.list_changed)

    def offers(self, feature: Literal["resources", "prompts"]) -> bool:
        """Whether the server declared the capability (False before it is connected): a server without it answers
        a listing with "method not found", so this client lists nothing there instead."""
        return bool(self._sessions) and getattr(self._sessions[-1].client.server_capabilities, feature) is not None

    @property
    def transport(self) -> ConcreteTransport | None:
        """The transport in use once connected (``auto`` resolved)."""
        return self._sessions[-1].kind if self._sessions else None

    async def __aenter__(self) -> McpClient:
        try:
            pool = HttpPool()
            self._stack.push_async_callback(pool.aclose)
            task_group = await self._stack.enter_async_context(anyio.create_task_group())
            await self.open_in(task_group, pool)
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close_sessions()
        await self._stack.aclose()

    async def open_in(self, task_group: TaskGroup, pool: HttpPool) -> None:
        """Connect, with the session task in ``task_group``, which must outlive the client: its own, or a
        :class:`~knime_mcp.mcp.pool.ClientPool`'s, so that one pool can hold the sessions of many clients."""
        if self._state is not _State.UNOPENED:
            raise RuntimeError("An McpClient can be opened only once; create a new one to reconnect.")
        self._state = _State.OPENED
        self._task_group, self._http = task_group, pool
        try:
            self._sessions.append(await self._first_session())
        except BaseException:
            self._close_oauth()
            raise

    async def _first_session(self) -> _Session:
        *fallbacks, last = candidate_transports(self.spec)
        for kind in fallbacks:
            try:
                return await self._start_session(kind, may_fall_back=True)
            except _Refused as refused:
                logger.debug("%s: %s refused (HTTP %s); trying the next transport", self.server, kind, refused.status)
        return await self._start_session(last)

    async def close_sessions(self) -> None:
        """Tell every session task to leave its contexts (closing streams, reaping a stdio child); wait a while."""
        if self._state is not _State.OPENED:
            return
        self._state = _State.CLOSED
        if self._cancelled_calls:
            await anyio.sleep(_CANCEL_FLUSH_SECONDS)
        for session in self._sessions:
            session.closing.set()
        with anyio.move_on_after(_CLOSE_GRACE_SECONDS, shield=True):
            for session in self._sessions:
                await session.closed.wait()
        self._close_oauth()

    def _close_oauth(self) -> None:
        if self._oauth is not None:
            self._oauth.close()

    async def _start_session(self, kind: ConcreteTransport, *, may_fall_back: bool = False) -> _Session:
        """A new session over ``kind``; with ``may_fall_back``, a refusal after which ``auto`` tries the next
        transport is raised as :class:`_Refused`."""
        assert self._task_group is not None and self._http is not None
        if self.spec.auth.kind == "query":
            raise ConfigError(
                "An MCP server takes no API key in the URL (authentication 'query' is for HTTP tools).",
                server=self.server,
                hint="Use a bearer token, a header or basic authentication.",
            )
        headers = resolve_headers(self.spec, self._credentials)
        env = resolve_env(self.spec)
        diagnostics = Diagnostics()
        try:
            with anyio.fail_after(self.spec.timeouts.connect) as handshake:
                deadline = connect_deadline.set(handshake)
                try:
                    return await self._task_group.start(self._run_session, kind, headers, env, diagnostics)
                finally:
                    connect_deadline.reset(deadline)
        except TimeoutError as exc:
            raise self._masked(self._timeout_error(diagnostics)) from exc
        except McpToolError:
            diagnostics.close()
            raise
        except Exception as exc:
            error = self._connect_error(exc, diagnostics)
            diagnostics.close()
            if may_fall_back and diagnostics.http_status in FALLBACK_STATUSES and not diagnostics.asked_for_auth:
                raise _Refused(diagnostics.http_status) from exc
            raise error from exc

    def _malformed_error(self, diagnostics: Diagnostics) -> ServerConnectError | None:
        """The error for a handshake that failed after the server sent frames that are not MCP, else None."""
        if not diagnostics.malformed:
            return None
        return ServerConnectError(
            f"The server sent messages that are not MCP JSON-RPC ({diagnostics.malformed}).",
            server=self.server,
            hint="A stdio server must write only JSON-RPC to stdout (logs belong on stderr); "
            "check the command and the transport setting.",
        )

    def _timeout_error(self, diagnostics: Diagnostics) -> ServerConnectError:
        diagnostics.close()
        if (malformed := self._malformed_error(diagnostics)) is not None:
            return malformed
        return ServerConnectError(
            f"No MCP handshake within the connect timeout of {self.spec.timeouts.connect:g} s.",
            server=self.server,
            hint=diagnostics.no_answer_hint(
                "Check that this is an MCP server and that it is responsive, or raise the connect timeout."
            ),
        )

    def _connect_error(self, exc: BaseException, diagnostics: Diagnostics) -> McpToolError:
        """The translated error; for a stdio server, what it printed before it failed is the best hint."""
        return self._masked(self._translated_connect_error(exc, diagnostics))

    def _masked(self, error: McpToolError) -> McpToolError:
        """What the server printed or answered may quote the secrets it was given: they never reach a message."""
        return masked(error, self._secrets)

    @property
    def _secrets(self) -> frozenset[str]:
        """The secret values this client gives the server, which careless servers quote back: its settings' and
        the OAuth tokens it holds now."""
        return self._settings_secrets | (self._oauth.secrets if self._oauth is not None else set())

    @cached_property
    def _settings_secrets(self) -> frozenset[str]:
        return resolved_secrets(self.spec, self._credentials)

    def _auth(self) -> httpx2.Auth | None:
        """The OAuth provider of this client's sessions, made on first use and kept, so that a reconnect reuses the
        tokens it holds."""
        if self.spec.auth.kind not in OAUTH_KINDS or not self.spec.is_url:
            return None
        if self._oauth is None:
            self._oauth = ServerOAuth(self.spec, self._credentials, self._show_sign_in)
        return self._oauth.auth

    def _translated_connect_error(self, exc: BaseException, diagnostics: Diagnostics) -> McpToolError:
        error = translate(exc, self.server, http_status=diagnostics.http_status, challenge=diagnostics.challenge)
        if not isinstance(error, ServerAuthError) and (malformed := self._malformed_error(diagnostics)) is not None:
            error = malformed
        elif isinstance(error, ToolError):
            error = ServerConnectError(
                f"The MCP handshake failed: {error.message}",
                server=self.server,
                hint="Check that the URL or command points at an MCP server and that the transport setting fits it.",
            )
        printed = diagnostics.stderr_tail()
        if printed and isinstance(error, ServerConnectError) and not isinstance(error, ServerAuthError):
            return ServerConnectError(error.message, server=self.server, hint=f"The server printed: {printed}")
        return error

    async def _run_session(
        self,
        kind: ConcreteTransport,
        headers: dict[str, str],
        env: dict[str, str],
        diagnostics: Diagnostics,
        *,
        task_status: TaskStatus[_Session],
    ) -> None:
        assert self._http is not None
        session: _Session | None = None
        transport = open_transport(
            self.spec,
            kind,
            headers=headers,
            env=env,
            pool=self._http,
            diagnostics=diagnostics,
            pin=self._pin,
            auth=self._auth(),
        )
        requests = self._requests.session(self.spec, lambda text: scrub(text, self._secrets))
        try:
            async with mcp.Client(
                transport,
                mode="legacy" if self._handshake == "initialize" else "auto",
                read_timeout_seconds=self.spec.timeouts.call,
                cache=None,
                client_info=_CLIENT_INFO,
                **requests.client_options(),
            ) as client:
                _keep_mismatched_results(client.session)
                self._handshake = "initialize" if client.session.initialize_result is not None else "discover"
                async with anyio.create_task_group() as following:
                    if self._handshake == "discover":
                        await following.start(requests.follow_changes, client)
                    session = _Session(client, kind, diagnostics, requests)
                    task_status.started(session)
                    await session.closing.wait()
                    following.cancel_scope.cancel()
        except Exception as exc:
            if session is None:
                raise
            session.lost = exc
            logger.debug("%s: session ended: %r", self.server, exc)
        finally:
            if session is not None:
                diagnostics.close()
                session.closed.set()

    def _current(self) -> _Session:
        if self._state is _State.UNOPENED:
            raise RuntimeError("Open the McpClient with 'async with' before using it.")
        if self._state is _State.CLOSED:
            raise RuntimeError("This McpClient is closed.")
        return self._sessions[-1]

    async def _replace(self, broken: _Session) -> _Session:
        """A new session in place of ``broken``; concurrent callers that saw the same loss share one reconnect."""
        async with self._replacing:
            if self._sessions[-1] is broken:
                broken.closing.set()
                logger.info("%s: the session was lost; reconnecting", self.server)
                self._sessions.append(await self._start_session(broken.kind))
            return self._sessions[-1]

    async def _request(self, send: Callable[[_Session], Awaitable[T]], *, what: str, repeatable: bool) -> T:
        """Send one request, unless the server keeps failing (the circuit is open); connection failures count
        towards opening it, any answer closes it again."""
        self._circuit.check()
        try:
            result = await self._send(send, what=what, repeatable=repeatable)
        except ServerConnectError as exc:
            self._circuit.failed(exc)
            raise
        self._circuit.succeeded()
        return result

    async def _send(self, send: Callable[[_Session], Awaitable[T]], *, what: str, repeatable: bool) -> T:
        """Send over the current session; after a lost session reconnect once, and resend only if ``repeatable``
        or the request never ran (otherwise it may or may not have been carried out)."""
        session = self._current()
        if session.lost is not None or session.closed.is_set():
            session = await self._replace(session)
        try:
            with translate_errors(self.server):
                return await send(session)
        except SessionLostError as lost:
            sent = not isinstance(lost, SessionExpiredError)
            try:
                fresh = await self._replace(session)
            except ServerConnectError as failed:
                if not sent:
                    raise
                # The request went out before the server went away: "could not connect" alone would say it never ran.
                reason = failed.message.rstrip(".")
                if repeatable:
                    message = f"The session was lost during {what}, and reconnecting failed ({reason})."
                    raise SessionLostError(message, server=self.server, hint=failed.hint) from failed
                self._circuit.failed(failed)
                hint = f"Reconnecting failed too ({reason}); check the tool's effect once the server is back."
                raise _outcome_unknown(what, self.server, hint) from failed
            if sent and not repeatable:
                raise _outcome_unknown(
                    what, self.server, "A new session is open; check the tool's effect before calling it again."
                ) from lost
            with translate_errors(self.server):
                return await send(fresh)

    async def list_tools(self) -> list[MCPTool]:
        """Every tool of the server, following pagination cursors to the end.

        The tools carry the spec sealed (:mod:`knime_mcp.seal`): whoever made this client chose the server, so agents
        and callers on this machine may later connect to it as it is. A client pinned to a checked address serves a
        server from data, whose tools stay unsealed so that later runs check it again.
        """
        return (await self.tool_listing()).tools

    async def tool_listing(self) -> ListedTools:
        """:meth:`list_tools`, with a note per tool left out because it cannot be a tool (no name)."""
        listed = replace(self.spec, handshake=self._handshake)
        if self._pin is None:
            listed = seal_spec(listed)
        return listed_tools(await self._list_all(mcp.Client.list_tools, lambda page: page.tools, "tools"), listed)

    async def list_resources(self) -> list[MCPResource]:
        """Every resource the server lists, following pagination cursors to the end."""
        if not self.offers("resources"):
            return []
        return await self._list_all(
            mcp.Client.list_resources, lambda page: map(MCPResource.from_sdk, page.resources), "resources"
        )

    async def list_resource_templates(self) -> list[MCPResourceTemplate]:
        """Every resource template the server lists, following pagination cursors to the end."""
        if not self.offers("resources"):
            return []
        return await self._list_all(
            mcp.Client.list_resource_templates,
            lambda page: map(MCPResourceTemplate.from_sdk, page.resource_templates),
            "resource templates",
        )

    async def list_prompts(self) -> list[MCPPrompt]:
        """Every prompt the server lists, following pagination cursors to the end."""
        if not self.offers("prompts"):
            return []
        return await self._list_all(
            mcp.Client.list_prompts, lambda page: map(MCPPrompt.from_sdk, page.prompts), "prompts"
        )

    async def read_resource(self, uri: str, *, max_bytes: int | None = None) -> list[ResourceContent]:
        """The contents at ``uri`` (a template's URI: :meth:`MCPResourceTemplate.fill`); binary contents larger than
        ``max_bytes`` fail the read with a :class:`ResourceError` that states the limit."""

        async def read(session: _Session) -> list[ResourceContent]:
            result = await self._ask(
                session,
                partial(session.client.read_resource, uri),
                timed_out=self._late(f"return resource {uri!r}"),
                refused=lambda exc: read_refused(uri, exc.error.code, exc.error.message, self.server),
            )
            contents = read_contents(result, uri=uri, server=self.server, max_bytes=max_bytes)
            return [content.masked(self._secrets) for content in contents]

        return await self._read_request(read, what=f"reading resource {uri!r}")

    async def get_prompt(self, prompt: str | MCPPrompt, arguments: Mapping[str, str] | None = None) -> RenderedPrompt:
        """The messages of ``prompt`` with ``arguments`` filled in; a listed prompt (an :class:`MCPPrompt`) has the
        arguments it requires checked before anything is sent."""
        arguments = dict(arguments or {})
        if isinstance(prompt, MCPPrompt):
            check_arguments(prompt, arguments, self.server)
        name = prompt.name if isinstance(prompt, MCPPrompt) else prompt

        async def get(session: _Session) -> RenderedPrompt:
            result = await self._ask(
                session,
                partial(session.client.get_prompt, name, arguments),
                timed_out=self._late(f"give prompt {name!r}"),
                refused=lambda exc: prompt_refused(name, exc.error.message, self.server),
            )
            return RenderedPrompt.from_sdk(result).masked(self._secrets)

        return await self._read_request(get, what=f"getting prompt {name!r}")

    async def _list_all(
        self, list_page: Callable[..., Awaitable[_PageT]], items: Callable[[_PageT], Iterable[T]], what: str
    ) -> list[T]:
        """The items of every page of one of the server's lists; a cursor seen before ends the walk, so a server
        that hands out cursors in a circle cannot hold the client."""

        async def walk(session: _Session) -> list[T]:
            found: list[T] = []
            cursor: str | None = None
            seen: set[str] = set()
            for _ in range(_MAX_PAGES):
                fetch = partial(list_page, session.client, cursor=cursor)
                page = await self._ask(session, fetch, timed_out=self._late(f"list its {what}", ServerConnectError))
                found.extend(items(page))
                cursor = page.next_cursor
                if cursor is None or cursor in seen:
                    return found
                seen.add(cursor)
            raise ServerConnectError(f"The list of {what} did not end after {_MAX_PAGES} pages.", server=self.server)

        return await self._read_request(walk, what=f"listing the {what}")

    async def _read_request(self, send: Callable[[_Session], Awaitable[T]], *, what: str) -> T:
        """A request that only reads, so it is sent again after a lost session; secrets are masked in its errors."""
        try:
            return await self._request(send, what=what, repeatable=True)
        except McpToolError as exc:
            self._masked(exc)
            raise

    async def _ask(
        self,
        session: _Session,
        send: Callable[..., Awaitable[T]],
        *,
        timed_out: Callable[[Diagnostics], McpToolError],
        refused: Callable[[MCPError], McpToolError] | None = None,
    ) -> T:
        """``send(meta=…)`` once over ``session``: an HTTP refusal, a request that never went out and the call
        timeout (the error ``timed_out`` makes) become clear errors, and so does the server's own JSON-RPC error,
        when ``refused`` translates it."""
        key = _call_key()
        try:
            return await send(meta=_meta(key))
        except MCPError as exc:
            if (refusal := await self._refusal(session, key, exc)) is not None:
                raise refusal from exc
            if exc.error.code == REQUEST_TIMEOUT:
                self._cancelled_calls = True
                raise timed_out(session.diagnostics) from exc
            if refused is None or exc.error.code in (CONNECTION_CLOSED, PARSE_ERROR):
                raise
            raise refused(exc) from exc
        finally:
            session.diagnostics.forget(key)

    def _late(self, what: str, error: type[McpToolError] = ToolTimeoutError) -> Callable[[Diagnostics], McpToolError]:
        """The error for a request the server did not answer within the call timeout: ``what`` it did not do."""
        return lambda diagnostics: error(
            f"The server did not {what} within the call timeout of {self.spec.timeouts.call:g} s.",
            server=self.server,
            hint=diagnostics.no_answer_hint(
                "Raise the call timeout if the server is slow, or check that it is responsive."
            ),
        )

    async def call_tool(
        self,
        tool_name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        repeatable: bool = False,
        progress: CallProgress | None = None,
    ) -> ToolResult:
        """Call one tool; calls beyond the concurrency limit wait for a free slot.

        ``repeatable``: the tool is read-only or idempotent, so a call cut off by a lost session may be resent.
        ``progress`` hears the call's progress notifications. A call during which the client declined to fill in a
        form for the server is a :class:`ToolCallError`: the server's answer after a decline reads like a success.
        MCP does not say which call a form belongs to, so every call in flight on the session then fails.
        """
        seconds = timeout or self.spec.timeouts.call
        arguments = dict(arguments or {})

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            assert progress is not None
            progress(done, total, message and scrub(message, self._secrets))

        def timed_out(diagnostics: Diagnostics) -> McpToolError:
            return ToolTimeoutError(
                f"Tool {tool_name!r} did not answer within {seconds:g} s; the call was cancelled.",
                server=self.server,
                hint=diagnostics.no_answer_hint("Raise the call timeout if the tool is slow."),
            )

        async def call(session: _Session) -> ToolResult:
            declined = len(session.requests.declined)
            send = partial(
                session.client.call_tool,
                tool_name,
                arguments,
                read_timeout_seconds=seconds,
                progress_callback=on_progress if progress else None,
            )
            try:
                result = await self._ask(session, send, timed_out=timed_out)
            except _MismatchedResult as exc:
                return ToolResult.from_sdk(exc.result, mismatch=exc.reason)
            if reasons := session.requests.declined[declined:]:
                raise _declined_error(tool_name, reasons, self.server)
            return ToolResult.from_sdk(result)

        await self._acquire_slot()
        try:
            result = await self._request(call, what=f"the call of tool {tool_name!r}", repeatable=repeatable)
        except McpToolError as exc:
            self._masked(exc)
            raise
        finally:
            self._limiter.release()
        return result.masked(self._secrets)

    async def _refusal(self, session: _Session, key: str | None, exc: MCPError) -> McpToolError | None:
        """The error for a request the server refused with an HTTP status (matched by its call key), or whose sign-in
        failed, or that never reached the server before its session ended, else None.

        On an open Streamable HTTP or SSE session, 404 (and 400, which some servers send) means the server no longer
        knows the session id: the request never ran.
        """
        if _transport_ended(session, exc):
            await self._wind_down(session)
        if key and (failed := session.diagnostics.failed_sign_ins.pop(key, None)) is not None:
            return translate(failed, self.server)
        refused = session.diagnostics.refused_calls.pop(key, None) if key else None
        if refused is None:
            return self._unsent(session, key, exc)
        status, retry_after, challenge = refused
        if _busy(status):
            return ServerBusyError(status, retry_after, server=self.server)
        if status in _SESSION_REFUSED and session.kind == "streamable-http" and _servers_own_error(status, exc):
            return None
        if status in _SESSION_REFUSED and session.kind != "stdio":
            return SessionExpiredError(
                f"The server refused this session (HTTP {status}); it may have restarted.",
                server=self.server,
                hint="The client opens a new session once; if that fails too, check the server's log.",
            )
        return translate(exc, self.server, http_status=status, challenge=challenge)

    async def _wind_down(self, session: _Session) -> None:
        """Close an ended session's transport and wait a while: a request still on its way (an SSE POST in flight,
        a stdio write) fails or goes out meanwhile, and only then is it known whether it was sent."""
        session.closing.set()
        with anyio.move_on_after(_CLOSE_GRACE_SECONDS):
            await session.closed.wait()

    def _unsent(self, session: _Session, key: str | None, exc: MCPError) -> McpToolError | None:
        """The error for a request cut off by the end of its session before it reached the server (a stdio server
        that had exited, an SSE stream that had ended), else None: it never ran, so any tool may be sent again."""
        if not _transport_ended(session, exc) or not session.diagnostics.never_sent(key):
            return None
        return SessionExpiredError(
            "The session had ended before the request was sent.",
            server=self.server,
            hint="The client opens a new session once; if that fails too, check the server's log.",
        )

    async def _acquire_slot(self) -> None:
        """A free slot is taken without a trip through the event loop (``async with`` on the limiter always
        yields once), which a call of a fraction of a millisecond would notice; a full limiter waits."""
        try:
            self._limiter.acquire_nowait()
        except anyio.WouldBlock:
            await self._limiter.acquire()


def _declined_error(tool_name: str, reasons: list[str], server: str) -> ToolCallError:
    return ToolCallError(
        f"Tool {tool_name!r} asked for input, which knime-mcp declined ({'; '.join(reasons)}), so its answer is "
        "not used.",
        server=server,
        hint="Give the tool what it asks for as arguments if it takes them; for a form whose fields all have "
        "defaults, let the node (or --elicitation defaults) answer with the defaults.",
    )


def _transport_ended(session: _Session, exc: MCPError) -> bool:
    """Whether ``exc`` is the end of the session's transport, not one request given up on a live session (Streamable
    HTTP answers "connection closed" for a response stream that broke off)."""
    return exc.error.code == CONNECTION_CLOSED and session.diagnostics.ended


def _outcome_unknown(what: str, server: str, hint: str) -> OutcomeUnknownError:
    """A request that reached the server before its session was lost: it may have run, so it is never called a
    connection failure."""
    message = f"The session was lost during {what}; it may or may not have run."
    return OutcomeUnknownError(message, server=server, hint=hint)


def _busy(status: int) -> bool:
    return status == 429 or status >= 500


_SESSION_REFUSED = frozenset({400, 404})

_STAND_INS = frozenset({"Server returned an error response", SESSION_TERMINATED, "Not Found"})
"""The messages of the errors the SDK makes up for an HTTP error status whose body holds no JSON-RPC error."""


def _servers_own_error(status: int, exc: MCPError) -> bool:
    """Whether a 400 or 404 carries the server's own JSON-RPC error (400 for invalid params, 404 for an unknown
    method), not the refusal of a session id it forgot: a 404 says that whatever its body (the SDK's servers send
    "Session not found" as -32600, the TypeScript SDK's as -32001, which reads as a timeout)."""
    return exc.error.message not in _STAND_INS and (status == 400 or exc.error.code == METHOD_NOT_FOUND)


def _call_key() -> str:
    """A fresh key to match what the transport saw of a request (an HTTP refusal, a failed write) to the request."""
    return secrets.token_hex(8)


def _meta(key: str | None) -> dict[str, Any] | None:
    return {CALL_KEY: key} if key else None


class _Refused(Exception):
    """A transport the server refused with an HTTP status after which ``auto`` tries the next one."""

    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status


_CLIENT_INFO = mcp.types.Implementation(name="knime-mcp", version="0.4.0")
