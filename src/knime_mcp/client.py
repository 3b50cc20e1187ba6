"""The session layer: one MCP session per server, opened once and shared by every call of a run.

Below sits :mod:`knime_mcp.transports` (streams); above sit the provider, the dispatcher and the Tool Caller, which
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
from collections.abc import Mapping
from contextlib import AsyncExitStack
from typing import Any

import anyio
import mcp
from anyio.abc import TaskGroup, TaskStatus
from mcp.shared.exceptions import MCPError
from mcp_types import REQUEST_TIMEOUT

from knime_mcp.config import CredentialLookup, ServerSpec, resolve_env, resolve_headers
from knime_mcp.errors import McpToolError, ServerConnectError, ToolError, ToolTimeoutError, translate, translate_errors
from knime_mcp.results import ToolResult
from knime_mcp.tool import MCPTool
from knime_mcp.transports import FALLBACK_STATUSES, ConcreteTransport, HttpPool, Diagnostics, candidate_transports
from knime_mcp.transports import open_transport

__all__ = ["DEFAULT_MAX_CONCURRENCY", "ClientPool", "McpClient"]

logger = logging.getLogger(__name__)

DEFAULT_MAX_CONCURRENCY = 8
_MAX_PAGES = 1000
_CLOSE_GRACE_SECONDS = 5.0


class _State(enum.Enum):
    UNOPENED = "unopened"
    OPENED = "opened"
    CLOSED = "closed"


class McpClient:
    """An async client for one MCP server with one reused session and a concurrency limit."""

    def __init__(
        self,
        spec: ServerSpec,
        *,
        credentials: CredentialLookup | None = None,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
        http_pool: HttpPool | None = None,
    ) -> None:
        self.spec = spec
        self._credentials = credentials
        self._limiter = anyio.CapacityLimiter(max_concurrency)
        self._borrowed_pool = http_pool
        self._state = _State.UNOPENED
        self._stack = AsyncExitStack()
        self._session: mcp.Client | None = None
        self._closing = anyio.Event()
        self._closed = anyio.Event()
        self._lost: BaseException | None = None
        self.transport: ConcreteTransport | None = None
        """The transport in use once connected (``auto`` resolved)."""

    @property
    def server(self) -> str:
        return self.spec.display_name

    async def __aenter__(self) -> McpClient:
        self._start()
        try:
            pool = self._borrowed_pool
            if pool is None:
                pool = HttpPool()
                self._stack.push_async_callback(pool.aclose)
            task_group = await self._stack.enter_async_context(anyio.create_task_group())
            await self._connect(task_group, pool)
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._end_session()
        await self._stack.aclose()

    def _start(self) -> None:
        if self._state is not _State.UNOPENED:
            raise RuntimeError("An McpClient can be opened only once; create a new one to reconnect.")
        self._state = _State.OPENED

    async def _end_session(self) -> None:
        """Ask the session task to leave its contexts (closing streams, reaping a stdio child) and wait a while."""
        if self._state is not _State.OPENED:
            return
        self._state = _State.CLOSED
        self._closing.set()
        with anyio.move_on_after(_CLOSE_GRACE_SECONDS, shield=True):
            await self._closed.wait()

    async def _connect(self, task_group: TaskGroup, pool: HttpPool) -> None:
        headers = resolve_headers(self.spec, self._credentials)
        env = resolve_env(self.spec)
        kinds = candidate_transports(self.spec)
        for attempt, kind in enumerate(kinds, start=1):
            diagnostics = Diagnostics()
            self._stack.callback(diagnostics.close)
            try:
                with anyio.fail_after(self.spec.timeouts.connect):
                    self._session = await task_group.start(self._run_session, kind, headers, env, pool, diagnostics)
            except TimeoutError as exc:
                if diagnostics.malformed:
                    raise ServerConnectError(
                        f"The server sent messages that are not MCP JSON-RPC ({diagnostics.malformed}).",
                        server=self.server,
                        hint="A stdio server must write only JSON-RPC to stdout (logs belong on stderr); "
                        "check the command and the transport setting.",
                    ) from exc
                raise ServerConnectError(
                    f"No MCP handshake within the connect timeout of {self.spec.timeouts.connect:g} s.",
                    server=self.server,
                    hint="Check that this is an MCP server and that it is responsive, or raise the connect timeout.",
                ) from exc
            except McpToolError:
                raise
            except Exception as exc:
                status = diagnostics.http_status
                if attempt < len(kinds) and status in FALLBACK_STATUSES:
                    logger.debug("%s: %s answered HTTP %s; trying %s", self.server, kind, status, kinds[attempt])
                    continue
                raise self._connect_error(exc, diagnostics) from exc
            self.transport = kind
            return

    def _connect_error(self, exc: BaseException, diagnostics: Diagnostics) -> McpToolError:
        """The translated error; for a stdio server, what it printed before it failed is the best hint."""
        error = translate(exc, self.server, http_status=diagnostics.http_status)
        if isinstance(error, ToolError):
            error = ServerConnectError(
                f"The MCP handshake failed: {error.message}",
                server=self.server,
                hint="Check that the URL or command points at an MCP server and that the transport setting fits it.",
            )
        printed = diagnostics.stderr_tail()
        if printed and type(error) is ServerConnectError:
            return ServerConnectError(error.message, server=self.server, hint=f"The server printed: {printed}")
        return error

    async def _run_session(
        self,
        kind: ConcreteTransport,
        headers: dict[str, str],
        env: dict[str, str],
        pool: HttpPool,
        diagnostics: Diagnostics,
        *,
        task_status: TaskStatus[mcp.Client],
    ) -> None:
        started = False
        try:
            transport = open_transport(self.spec, kind, headers=headers, env=env, pool=pool, diagnostics=diagnostics)
            async with mcp.Client(
                transport,
                mode="auto",
                read_timeout_seconds=self.spec.timeouts.call,
                cache=None,
                client_info=_CLIENT_INFO,
                message_handler=diagnostics.record_message,
            ) as session:
                task_status.started(session)
                started = True
                await self._closing.wait()
        except Exception as exc:
            if not started:
                raise
            self._lost = exc
            logger.debug("%s: session ended: %r", self.server, exc)
        finally:
            self._closed.set()

    def _require_session(self) -> mcp.Client:
        if self._state is _State.UNOPENED:
            raise RuntimeError("Open the McpClient with 'async with' before using it.")
        if self._state is _State.CLOSED:
            raise RuntimeError("This McpClient is closed.")
        if self._lost is not None or self._session is None:
            raise ServerConnectError(
                "The connection to the server was lost.",
                server=self.server,
                hint="The server may have restarted or crashed; run again.",
            )
        return self._session

    async def list_tools(self) -> list[MCPTool]:
        """Every tool of the server, following pagination cursors to the end."""
        session = self._require_session()
        tools: list[MCPTool] = []
        cursor: str | None = None
        seen: set[str] = set()
        with translate_errors(self.server):
            for _ in range(_MAX_PAGES):
                page = await session.list_tools(cursor=cursor)
                tools.extend(MCPTool.from_sdk(tool, self.spec) for tool in page.tools)
                cursor = page.next_cursor
                if cursor is None or cursor in seen:
                    return tools
                seen.add(cursor)
        raise ServerConnectError(f"The server's tool list did not end after {_MAX_PAGES} pages.", server=self.server)

    async def call_tool(
        self, tool_name: str, arguments: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> ToolResult:
        """Call one tool; calls beyond the concurrency limit wait for a free slot."""
        session = self._require_session()
        seconds = timeout or self.spec.timeouts.call
        async with self._limiter:
            with translate_errors(self.server):
                try:
                    result = await session.call_tool(tool_name, dict(arguments or {}), read_timeout_seconds=seconds)
                except MCPError as exc:
                    if exc.error.code != REQUEST_TIMEOUT:
                        raise
                    raise ToolTimeoutError(
                        f"Tool {tool_name!r} did not answer within {seconds:g} s; the call was cancelled.",
                        server=self.server,
                        hint="Raise the call timeout if the tool is slow.",
                    ) from exc
        return ToolResult.from_sdk(result)



class ClientPool:
    """One :class:`McpClient` per server for a whole run (an agent conversation, a Tool Caller execution).

    Sessions open on first use, from any task, and all close when the pool closes; they share one HTTP
    connection pool. A server that failed to connect fails fast for the rest of the run, with the same error,
    instead of being retried for every call.

        async with ClientPool() as pool:
            client = await pool.client(tool.server)
            await client.call_tool(tool.tool_name, arguments)
    """

    def __init__(
        self, *, credentials: CredentialLookup | None = None, max_concurrency: int = DEFAULT_MAX_CONCURRENCY
    ) -> None:
        self._credentials = credentials
        self._max_concurrency = max_concurrency
        self._clients: dict[ServerSpec, McpClient] = {}
        self._failures: dict[ServerSpec, McpToolError] = {}
        self._locks: dict[ServerSpec, anyio.Lock] = {}
        self._stack = AsyncExitStack()
        self._task_group: TaskGroup | None = None
        self._http: HttpPool | None = None

    async def __aenter__(self) -> ClientPool:
        http = HttpPool()
        self._stack.push_async_callback(http.aclose)
        self._task_group = await self._stack.enter_async_context(anyio.create_task_group())
        self._http = http
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        async with anyio.create_task_group() as closing:
            for client in self._clients.values():
                closing.start_soon(client._end_session)
        await self._stack.aclose()

    async def client(self, spec: ServerSpec) -> McpClient:
        """The open client for ``spec``, connecting on the first request."""
        if self._task_group is None or self._http is None:
            raise RuntimeError("Open the ClientPool with 'async with' before using it.")
        async with self._locks.setdefault(spec, anyio.Lock()):
            if spec in self._failures:
                raise self._failures[spec]
            if spec not in self._clients:
                client = McpClient(spec, credentials=self._credentials, max_concurrency=self._max_concurrency)
                client._start()
                try:
                    await client._connect(self._task_group, self._http)
                except McpToolError as exc:
                    self._failures[spec] = exc
                    raise
                self._clients[spec] = client
            return self._clients[spec]


_CLIENT_INFO = mcp.types.Implementation(name="knime-mcp", version="0.1.0")
