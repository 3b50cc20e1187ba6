"""The run's sessions: one :class:`McpClient` per server, shared by every call of a node execution or CLI run.

Above sit the dispatcher, the agent and the Tool Caller; below, :mod:`knime_mcp.mcp.client` and
:mod:`knime_mcp.http.call`. The pool owns one task
group, in which every client keeps its session, and one HTTP connection pool, which every client borrows.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import TypeVar

import anyio
from anyio.abc import TaskGroup

from knime_mcp.config import CredentialLookup, ServerSpec
from knime_mcp.errors import McpToolError
from knime_mcp.http.call import HttpToolClient
from knime_mcp.mcp.client import DEFAULT_MAX_CONCURRENCY, McpClient
from knime_mcp.mcp.server_requests import ServerRequests
from knime_mcp.net.breaker import DEFAULT_BREAKER, Circuit, CircuitBreaker
from knime_mcp.net.http_pool import HttpPool
from knime_mcp.net.urlguard import PinnedHost, check_server
from knime_mcp.seal import SHARED_KEY_ENV, is_sealed_here

__all__ = ["UNSEALED_HINT", "ClientPool"]

_Key = tuple[ServerSpec, bool]
"""A server and whether it is trusted as it is (sealed here, or the pool trusts every server)."""

_Client = TypeVar("_Client", McpClient, HttpToolClient)

UNSEALED_HINT = (
    "These tools were not listed by an MCP Tool Provider on this machine or one with the same shared seal key (the "
    "table was edited, read from a file, made elsewhere, listed from an address that came from data, or written by "
    "an earlier knime-mcp whose seal covered the server only). If you trust it, run the provider again here, or "
    "trust every server in the tools table (the node setting, or trust_all_servers in Python). To trust the tables "
    "a team makes on its machines, give them all the same shared seal key: in the nodes' 'Team seal key "
    f"(credential)' setting (a KNIME credential), or in the environment variable {SHARED_KEY_ENV}."
)


class ClientPool:
    """One :class:`McpClient` per server for a whole run (an agent conversation, a Tool Caller execution).

    Sessions open on first use, from any task, and all close when the pool closes; they share one HTTP
    connection pool with the clients of HTTP tools' APIs (:meth:`http_client`), which open no MCP session.
    Settings and authentication errors fail fast for the rest of the run; other connection failures trip a
    per-server :class:`CircuitBreaker`.

        async with ClientPool() as pool:
            client = await pool.client(tool.server)
            await client.call_tool(tool.tool_name, arguments)
    """

    def __init__(
        self,
        *,
        credentials: CredentialLookup | None = None,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
        breaker: CircuitBreaker = DEFAULT_BREAKER,
        check_unsealed: bool = False,
        show_sign_in: Callable[[str], None] | None = None,
        requests: ServerRequests | None = None,
        unsealed_hint: str = UNSEALED_HINT,
    ) -> None:
        """``requests``: how every session answers what its server asks of the client. ``show_sign_in``: how to
        tell a person where to sign in to an OAuth server (:class:`McpClient`).
        ``check_unsealed``: the specs were read from a table, which anyone can write, so a spec without this
        machine's seal (:mod:`knime_mcp.seal`) is data and is checked before it is connected: a URL by the SSRF
        guard, which also pins the session to the address it checked, and a command line is never run;
        ``unsealed_hint`` says how to trust one."""
        self._credentials = credentials
        self._show_sign_in = show_sign_in
        self._requests = requests
        self._check_unsealed = check_unsealed
        self._unsealed_hint = unsealed_hint
        self._max_concurrency = max_concurrency
        self._breaker = breaker
        self._clients: dict[_Key, McpClient] = {}
        self._http_clients: dict[_Key, HttpToolClient] = {}
        self._circuits: dict[_Key, Circuit] = {}
        self._locks: dict[_Key, anyio.Lock] = {}
        self._trusted: dict[tuple[ServerSpec, str | None], bool] = {}
        """Per spec and seal, whether it is trusted as it is: the seal is an HMAC, and a Tool Caller asks for its
        server once a row."""
        self._stack = AsyncExitStack()
        self._task_group: TaskGroup | None = None
        self._http: HttpPool | None = None
        self._on_open: list[Callable[[McpClient], Awaitable[None]]] = []

    async def __aenter__(self) -> ClientPool:
        http = HttpPool()
        self._stack.push_async_callback(http.aclose)
        self._task_group = await self._stack.enter_async_context(anyio.create_task_group())
        self._http = http
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        async with anyio.create_task_group() as closing:
            for client in self._clients.values():
                closing.start_soon(client.close_sessions)
            for http_client in self._http_clients.values():
                closing.start_soon(http_client.aclose)
        await self._stack.aclose()

    def on_open(self, hook: Callable[[McpClient], Awaitable[None]]) -> None:
        """Run ``hook`` on every MCP session as it opens, before any request of the run goes through it: the agent
        lists the server's tools, to tell a tool added later from one the tools table left out."""
        self._on_open.append(hook)

    @property
    def credentials(self) -> CredentialLookup | None:
        """The KNIME credentials the run's servers and programs may name (``${input:ID}`` in an environment)."""
        return self._credentials

    @property
    def clients(self) -> list[McpClient]:
        """The clients connected so far."""
        return list(self._clients.values())

    async def client(self, spec: ServerSpec) -> McpClient:
        """The open client for ``spec``, connecting on the first request."""
        return await self._connected(spec, self._clients, self._open_session)

    async def http_client(self, spec: ServerSpec) -> HttpToolClient:
        """The client for the API (or webhook) of HTTP tools at ``spec``, made on the first request; checked and
        pinned like an MCP server when it comes from data."""
        return await self._connected(spec, self._http_clients, self._open_http)

    async def check_program(self, spec: ServerSpec) -> None:
        """Refuse the program of a program tool (:mod:`knime_mcp.programs`) that comes from data, as a stdio server
        from data is refused (:func:`check_server`): unless the pool trusts every server, only a program whose tool's
        seal fits runs."""
        if not self._key(spec)[1]:
            await check_server(spec, hint=self._unsealed_hint)

    async def _connected(
        self,
        spec: ServerSpec,
        opened: dict[_Key, _Client],
        open_one: Callable[[ServerSpec, PinnedHost | None], Awaitable[_Client]],
    ) -> _Client:
        if self._task_group is None or self._http is None:
            raise RuntimeError("Open the ClientPool with 'async with' before using it.")
        key = self._key(spec)
        if (client := opened.get(key)) is not None:
            return client
        async with self._locks.setdefault(key, anyio.Lock()):
            if key in opened:
                return opened[key]
            circuit = self._circuits.setdefault(key, Circuit(self._breaker))
            circuit.check()
            try:
                client = await open_one(spec, None if key[1] else await check_server(spec, hint=self._unsealed_hint))
            except McpToolError as exc:
                circuit.failed(exc)
                raise
            self._circuits.pop(key)
            opened[key] = client
            return client

    def _key(self, spec: ServerSpec) -> _Key:
        """A server from data gets a session of its own even when a sealed tool of the same server has one: a tool
        whose seal no longer fits (edited annotations) must pass the checks whichever tool connects first."""
        if not self._check_unsealed:
            return spec, True
        # Keyed by the seal too: specs compare without it.
        sealed = (spec, spec.seal)
        if (trusted := self._trusted.get(sealed)) is None:
            trusted = self._trusted[sealed] = is_sealed_here(spec)
        return spec, trusted

    async def _open_session(self, spec: ServerSpec, pin: PinnedHost | None) -> McpClient:
        assert self._task_group is not None and self._http is not None
        client = McpClient(
            spec,
            credentials=self._credentials,
            show_sign_in=self._show_sign_in,
            requests=self._requests,
            max_concurrency=self._max_concurrency,
            breaker=self._breaker,
            pin=pin,
        )
        await client.open_in(self._task_group, self._http)
        try:
            for hook in self._on_open:
                await hook(client)
        except BaseException:
            with anyio.CancelScope(shield=True):  # the pool never stored it, so nothing else would close it
                await client.close_sessions()
            raise
        return client

    async def _open_http(self, spec: ServerSpec, pin: PinnedHost | None) -> HttpToolClient:
        assert self._http is not None
        return HttpToolClient.open(
            spec,
            self._http,
            credentials=self._credentials,
            pin=pin,
            max_concurrency=self._max_concurrency,
            breaker=self._breaker,
        )
