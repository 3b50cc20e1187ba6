"""The life of a client's sessions: opening one (the handshake, the ``auto`` transport fallback), replacing one that
was lost, closing them all.

Layer: wire, below :class:`~knime_mcp.mcp.client.McpClient` and its
:class:`~knime_mcp.mcp.request_sender.RequestSender`; above :mod:`knime_mcp.mcp.transports` (streams). Each session
lives in a task of a task group that outlives the client, so the connect timeout can bound the whole handshake and a
session that dies later does not cancel its caller: the next request sees a clear error instead. A handshake that
fails becomes a :mod:`knime_mcp.errors` error that says why (no answer, not MCP, what a stdio server printed), with
the secrets this keeper gives the server masked.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import anyio
import httpx2
import mcp
import mcp_types
from anyio.abc import TaskGroup, TaskStatus

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
    ConfigError,
    McpToolError,
    ServerAuthError,
    ServerConnectError,
    ToolError,
    masked,
    scrub,
    translate,
)
from knime_mcp.mcp.diagnostics import Diagnostics
from knime_mcp.mcp.server_requests import ServerRequests, SessionRequests
from knime_mcp.mcp.transports import FALLBACK_STATUSES, ConcreteTransport, candidate_transports, open_transport
from knime_mcp.net.http_pool import HttpPool
from knime_mcp.net.urlguard import PinnedHost

if TYPE_CHECKING:
    from mcp.client.session import ClientSession

    from knime_mcp.auth import ServerOAuth

__all__ = ["CLIENT_INFO", "LiveSession", "MismatchedResult", "SessionKeeper"]

logger = logging.getLogger(__name__)

CLIENT_INFO = mcp.types.Implementation(name="knime-mcp", version="0.5.0")
"""How this client names itself in the handshake."""
_CLOSE_GRACE_SECONDS = 5.0
_CANCEL_FLUSH_SECONDS = 0.25
"""After a timed-out call, how long closing waits so the cancellation sent to the server is not cut off with it."""


class _State(enum.Enum):
    UNOPENED = "unopened"
    OPENED = "opened"
    CLOSED = "closed"


@dataclass(eq=False)
class LiveSession:
    """One live connection: the SDK client, and the events by which its task is told to end and says it ended."""

    client: mcp.Client
    kind: ConcreteTransport
    diagnostics: Diagnostics
    requests: SessionRequests
    closing: anyio.Event = field(default_factory=anyio.Event)
    closed: anyio.Event = field(default_factory=anyio.Event)
    lost: BaseException | None = None


class MismatchedResult(Exception):
    """A call's result that breaks the tool's output schema, carried past the SDK's check so it is not lost."""

    def __init__(self, result: mcp_types.CallToolResult, reason: str) -> None:
        super().__init__(reason)
        self.result, self.reason = result, reason


def _keep_mismatched_results(session: ClientSession) -> None:
    """Make the SDK's output-schema check of ``session`` raise :class:`MismatchedResult`, which keeps the result,
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
            raise MismatchedResult(result, reason) from exc

    session.validate_tool_result = validate_keeping_the_result  # type: ignore[method-assign]


class SessionKeeper:
    """The sessions of one client with one server: the current one, and the ones it replaced until they close."""

    def __init__(
        self,
        spec: ServerSpec,
        *,
        credentials: CredentialLookup | None,
        pin: PinnedHost | None,
        show_sign_in: Callable[[str], None] | None,
        requests: ServerRequests,
    ) -> None:
        self.spec = spec
        self.oauth: ServerOAuth | None = None
        """The OAuth provider of the sessions, made with the first one and kept, so a reconnect reuses its tokens."""
        self.calls_cancelled = False
        """Whether a request timed out or was stopped, so that closing gives the cancellation sent to the server time to
        go out."""
        self.handshake: Handshake | None = spec.handshake
        """What the server answered on the first connection (or what its tools table says): every later session,
        after a lost one or from a table, skips the ``server/discover`` probe of a server that speaks only
        ``initialize``."""
        self._pin = pin
        self._show_sign_in = show_sign_in
        self._requests = requests
        self._credentials = credentials
        self._state = _State.UNOPENED
        self._task_group: TaskGroup | None = None
        self._http: HttpPool | None = None
        self._sessions: list[LiveSession] = []
        self._replacing = anyio.Lock()

    @property
    def server(self) -> str:
        return self.spec.display_name

    @property
    def latest(self) -> LiveSession | None:
        """The session opened last, whatever its state; None before the first one."""
        return self._sessions[-1] if self._sessions else None

    async def open_in(self, task_group: TaskGroup, pool: HttpPool) -> None:
        """Connect, with the session tasks in ``task_group``, which must outlive the keeper."""
        if self._state is not _State.UNOPENED:
            raise RuntimeError("An McpClient can be opened only once; create a new one to reconnect.")
        self._state = _State.OPENED
        self._task_group, self._http = task_group, pool
        try:
            self._sessions.append(await self._first_session())
        except BaseException:
            self._close_oauth()
            raise

    async def _first_session(self) -> LiveSession:
        *fallbacks, last = candidate_transports(self.spec)
        for kind in fallbacks:
            try:
                return await self._start_session(kind, may_fall_back=True)
            except _Refused as refused:
                logger.debug("%s: %s refused (HTTP %s); trying the next transport", self.server, kind, refused.status)
        return await self._start_session(last)

    async def close(self) -> None:
        """Tell every session task to leave its contexts (closing streams, reaping a stdio child); wait a while."""
        if self._state is not _State.OPENED:
            return
        self._state = _State.CLOSED
        with anyio.move_on_after(_CLOSE_GRACE_SECONDS, shield=True):
            if self.calls_cancelled:
                await anyio.sleep(_CANCEL_FLUSH_SECONDS)
            for session in self._sessions:
                session.closing.set()
            for session in self._sessions:
                await session.closed.wait()
        self._close_oauth()

    def _close_oauth(self) -> None:
        if self.oauth is not None:
            self.oauth.close()

    def current(self) -> LiveSession:
        """The session to send over: the latest one, which may have been lost since."""
        if self._state is _State.UNOPENED:
            raise RuntimeError("Open the McpClient with 'async with' before using it.")
        if self._state is _State.CLOSED:
            raise RuntimeError("This McpClient is closed.")
        return self._sessions[-1]

    async def replace(self, broken: LiveSession) -> LiveSession:
        """A new session in place of ``broken``; concurrent callers that saw the same loss share one reconnect."""
        async with self._replacing:
            if self._sessions[-1] is broken:
                broken.closing.set()
                logger.info("%s: the session was lost; reconnecting", self.server)
                self._sessions.append(await self._start_session(broken.kind))
            return self._sessions[-1]

    async def wind_down(self, session: LiveSession) -> None:
        """Close an ended session's transport and wait a while: a request still on its way (an SSE POST in flight,
        a stdio write) fails or goes out meanwhile, and only then is it known whether it was sent."""
        session.closing.set()
        with anyio.move_on_after(_CLOSE_GRACE_SECONDS):
            await session.closed.wait()

    def masked(self, error: McpToolError) -> McpToolError:
        """What the server printed or answered may quote the secrets it was given: they never reach a message."""
        return masked(error, self.secrets)

    @property
    def secrets(self) -> frozenset[str]:
        """The secret values the sessions give the server, which careless servers quote back: the settings' and
        the OAuth tokens held now."""
        return self._settings_secrets | (self.oauth.secrets if self.oauth is not None else set())

    @cached_property
    def _settings_secrets(self) -> frozenset[str]:
        return resolved_secrets(self.spec, self._credentials)

    @property
    def _signs_in(self) -> bool:
        """Whether the sessions sign in with OAuth (:mod:`knime_mcp.auth`, imported only then: a cold start of a
        command for any other server notices the OAuth client's imports)."""
        return self.spec.auth.kind in OAUTH_KINDS and self.spec.is_url

    def _auth(self) -> httpx2.Auth | None:
        """The OAuth provider of the sessions, made on first use and kept, so that a reconnect reuses the tokens it
        holds."""
        if not self._signs_in:
            return None
        if self.oauth is None:
            from knime_mcp.auth import ServerOAuth

            assert self._http is not None
            self.oauth = ServerOAuth(self.spec, self._credentials, self._show_sign_in, pool=self._http)
        return self.oauth.auth

    async def _start_session(self, kind: ConcreteTransport, *, may_fall_back: bool = False) -> LiveSession:
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
        env = resolve_env(self.spec, self._credentials)
        diagnostics = Diagnostics()
        try:
            with anyio.fail_after(self.spec.timeouts.connect) as handshake, self._sign_in_within(handshake):
                return await self._task_group.start(self._run_session, kind, headers, env, diagnostics)
        except TimeoutError as exc:
            raise self.masked(self._timeout_error(diagnostics)) from exc
        except McpToolError:
            diagnostics.close()
            raise
        except Exception as exc:
            error = self.masked(self._connect_error(exc, diagnostics))
            diagnostics.close()
            if may_fall_back and diagnostics.http_status in FALLBACK_STATUSES and not diagnostics.asked_for_auth:
                raise _Refused(diagnostics.http_status) from exc
            raise error from exc

    @contextmanager
    def _sign_in_within(self, handshake: anyio.CancelScope) -> Iterator[None]:
        """A sign-in during the handshake pauses its deadline (:data:`knime_mcp.auth.connect_deadline`); only a
        server that signs in has one."""
        if not self._signs_in:
            yield
            return
        from knime_mcp.auth import connect_deadline

        token = connect_deadline.set(handshake)
        try:
            yield
        finally:
            connect_deadline.reset(token)

    async def _run_session(
        self,
        kind: ConcreteTransport,
        headers: dict[str, str],
        env: dict[str, str],
        diagnostics: Diagnostics,
        *,
        task_status: TaskStatus[LiveSession],
    ) -> None:
        assert self._http is not None
        session: LiveSession | None = None
        transport = open_transport(
            self.spec,
            kind,
            headers=headers,
            env=env,
            pool=self._http,
            diagnostics=diagnostics,
            pin=self._pin,
            auth=self._auth(),
            credentials=self._credentials,
        )
        requests = self._requests.session(self.spec, lambda text: scrub(text, self.secrets))
        try:
            with anyio.CancelScope() as kept:
                async with mcp.Client(
                    transport,
                    mode="legacy" if self.handshake == "initialize" else "auto",
                    read_timeout_seconds=self.spec.timeouts.call,
                    cache=None,
                    client_info=CLIENT_INFO,
                    **requests.client_options(),
                ) as client:
                    _keep_mismatched_results(client.session)
                    self.handshake = "initialize" if client.session.initialize_result is not None else "discover"
                    async with anyio.create_task_group() as following:
                        if self.handshake == "discover":
                            await following.start(requests.follow_changes, client)
                        session = LiveSession(client, kind, diagnostics, requests)
                        task_status.started(session)
                        # From here the session ends only when told (closing): a cancelled run's calls still tell
                        # the server (notifications/cancelled, tasks/cancel) over it while they are given up.
                        kept.shield = True
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


class _Refused(Exception):
    """A transport the server refused with an HTTP status after which ``auto`` tries the next one."""

    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
