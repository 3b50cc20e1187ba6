"""The client of one MCP server: one session opened once and shared by every call of a run, with a concurrency limit.

Below sit :mod:`knime_mcp.mcp.transports` (streams), :class:`~knime_mcp.mcp.session_keeper.SessionKeeper` (opening,
replacing and closing sessions), :class:`~knime_mcp.mcp.request_sender.RequestSender` (one request, its errors, its
resending) and :func:`~knime_mcp.mcp.pages.list_all` (pagination); above sit the provider, the dispatcher and the Tool
Caller, which see only :class:`MCPTool` and :class:`ToolResult`. The SDK's ``mcp.Client`` speaks the protocol
(discovery with a fallback to the initialize handshake, session ids, pagination cursors, cancellation notifications).
This module is the face: what the server offers and what it answers, as this project's types, secrets masked.

    async with McpClient(ServerSpec(target="http://127.0.0.1:8000/mcp")) as client:
        tools = await client.list_tools()
        result = await client.call_tool("echo", {"text": "hi"})
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack, nullcontext
from dataclasses import replace
from functools import partial
from time import monotonic
from typing import TYPE_CHECKING, Any, Literal

import anyio
import mcp
import mcp_types
from anyio.abc import TaskGroup

from knime_mcp.config import CredentialLookup, Handshake, ServerSpec
from knime_mcp.errors import McpToolError, ServerProtocolError, ToolTimeoutError, scrub
from knime_mcp.mcp.call_checks import declined_error, runs_as_task_here
from knime_mcp.mcp.deadline import CallDeadline
from knime_mcp.mcp.diagnostics import Diagnostics
from knime_mcp.mcp.pages import list_all
from knime_mcp.mcp.prompts import MCPPrompt, RenderedPrompt, check_arguments, prompt_refused
from knime_mcp.mcp.request_sender import RequestSender
from knime_mcp.mcp.resources import MCPResource, MCPResourceTemplate, ResourceContent, read_contents, read_refused
from knime_mcp.mcp.server_requests import CallProgress, ServerRequests
from knime_mcp.mcp.session_keeper import LiveSession, MismatchedResult, SessionKeeper
from knime_mcp.mcp.tasks import capped, run_task
from knime_mcp.mcp.tool_listing import ListedTools, listed_tools, refused_listing
from knime_mcp.mcp.transports import ConcreteTransport
from knime_mcp.net.breaker import DEFAULT_BREAKER, Circuit, CircuitBreaker
from knime_mcp.net.http_pool import HttpPool
from knime_mcp.net.urlguard import PinnedHost
from knime_mcp.seal import seal_spec
from knime_mcp.tools.results import ToolResult
from knime_mcp.tools.tool import MCPTool, TaskSupport
from knime_mcp.tools.tool_columns import RAISE_CALL_TIMEOUT

if TYPE_CHECKING:
    from knime_mcp.auth import ServerOAuth

__all__ = ["DEFAULT_MAX_CONCURRENCY", "McpClient"]

DEFAULT_MAX_CONCURRENCY = 256
"""Calls in flight at once on a client made without a limit (a plain script, ``knime-mcp call``): a guard against a
runaway loop, not a brake on a burst, which the raw SDK sends all at once (a burst of 200 at 8 took 6x as long,
benchmark figure 3). The nodes and ``call-table`` pass their *Concurrency* setting instead, and a tool that writes
runs one call at a time there (:meth:`knime_mcp.caller.table.CallerOptions.concurrency_for`)."""


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
        http_pool: HttpPool | None = None,
    ) -> None:
        """``requests``: how to answer what the server asks of the client (sampling, forms); by default everything
        is declined. ``pin``: for a server from data, the address :mod:`knime_mcp.net.urlguard` checked; every HTTP
        request of every session goes there. ``show_sign_in``: for an OAuth server (:mod:`knime_mcp.auth`), how to
        tell a person where to sign in when no stored sign-in serves; None where nobody can sign in (a batch run).
        ``http_pool``: a pool shared by several servers' clients, which its creator closes; None: one of its own."""
        self.spec = spec
        self._http_pool = http_pool
        self._pin = pin
        self._keeper = SessionKeeper(
            spec,
            credentials=credentials,
            pin=pin,
            show_sign_in=show_sign_in,
            requests=requests or ServerRequests(),
        )
        self._sender = RequestSender(self._keeper, Circuit(breaker))
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        self._limiter = anyio.Semaphore(max_concurrency)
        """A semaphore, not a ``CapacityLimiter``: that one books each slot to its task, which costs a call of a
        fraction of a millisecond several microseconds."""
        self._stack = AsyncExitStack()
        self._tools_fresh_until: float | None = None
        """When the last tool listing goes stale by the server's ``ttlMs`` (monotonic seconds); None without one."""

    @property
    def server(self) -> str:
        return self.spec.display_name

    @property
    def handshake(self) -> Handshake | None:
        """The handshake the server answered, once connected."""
        return self._keeper.handshake

    @property
    def tool_list_changes(self) -> int:
        """How many times the server said its tool list changed, in the current session."""
        session = self._keeper.latest
        return session.requests.tool_list_changes if session else 0

    @property
    def tools_may_change(self) -> bool:
        """Whether the server declared that its tool list may change (``tools.listChanged``)."""
        session = self._keeper.latest
        tools = session.client.server_capabilities.tools if session else None
        return bool(tools and tools.list_changed)

    @property
    def instructions(self) -> str | None:
        """What the server says about itself and how to use it (``instructions`` of its initialize or discover
        result), secrets masked; None before it is connected or when it says nothing."""
        session = self._keeper.latest
        text = session.client.instructions if session else None
        return scrub(text, self._keeper.secrets) if text else None

    @property
    def tools_stale(self) -> bool:
        """Whether the server's last tool listing is past the time its ``ttlMs`` gave it; a listing without a time
        (none, or 0, which every 2026-07-28 server sends unless it chose one) never goes stale here: it changes
        only when the server says so."""
        return self._tools_fresh_until is not None and monotonic() >= self._tools_fresh_until

    def offers(self, feature: Literal["resources", "prompts"]) -> bool:
        """Whether the server declared the capability (False before it is connected): a server without it answers
        a listing with "method not found", so this client lists nothing there instead."""
        session = self._keeper.latest
        return session is not None and getattr(session.client.server_capabilities, feature) is not None

    @property
    def transport(self) -> ConcreteTransport | None:
        """The transport in use once connected (``auto`` resolved)."""
        session = self._keeper.latest
        return session.kind if session else None

    @property
    def _oauth(self) -> ServerOAuth | None:
        """The OAuth provider of the sessions, once made (a test ages its tokens through it)."""
        return self._keeper.oauth

    async def __aenter__(self) -> McpClient:
        try:
            if (pool := self._http_pool) is None:
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
        :class:`~knime_mcp.calls.pool.ClientPool`'s, so that one pool can hold the sessions of many clients."""
        await self._keeper.open_in(task_group, pool)

    async def close_sessions(self) -> None:
        """Tell every session task to leave its contexts (closing streams, reaping a stdio child); wait a while."""
        await self._keeper.close()

    async def list_tools(self) -> list[MCPTool]:
        """Every tool of the server, following pagination cursors to the end.

        The tools carry the spec sealed (:mod:`knime_mcp.seal`): whoever made this client chose the server, so agents
        and callers on this machine may later connect to it as it is. A client pinned to a checked address serves a
        server from data, whose tools stay unsealed so that later runs check it again.
        """
        return (await self.tool_listing()).tools

    async def tool_listing(self) -> ListedTools:
        """:meth:`list_tools`, with a note per tool left out because it cannot be a tool (no name)."""
        listed = replace(self.spec, handshake=self._keeper.handshake)
        if self._pin is None:
            listed = seal_spec(listed)
        lifetimes: list[int] = []

        def tools_of(page: mcp_types.ListToolsResult) -> list[mcp_types.Tool]:
            lifetimes.append(page.ttl_ms)
            return page.tools

        try:
            tools = await list_all(self._sender, mcp.Client.list_tools, tools_of, "tools")
        except ServerProtocolError as exc:
            if (explained := refused_listing(exc)) is None:
                raise
            raise explained from exc
        ttl_ms = min(lifetimes, default=0)
        self._tools_fresh_until = monotonic() + ttl_ms / 1000 if ttl_ms > 0 else None
        return listed_tools(tools, listed)

    async def list_resources(self) -> list[MCPResource]:
        """Every resource the server lists, following pagination cursors to the end."""
        if not self.offers("resources"):
            return []
        return await list_all(
            self._sender, mcp.Client.list_resources, lambda page: map(MCPResource.from_sdk, page.resources), "resources"
        )

    async def list_resource_templates(self) -> list[MCPResourceTemplate]:
        """Every resource template the server lists, following pagination cursors to the end."""
        if not self.offers("resources"):
            return []
        return await list_all(
            self._sender,
            mcp.Client.list_resource_templates,
            lambda page: map(MCPResourceTemplate.from_sdk, page.resource_templates),
            "resource templates",
        )

    async def list_prompts(self) -> list[MCPPrompt]:
        """Every prompt the server lists, following pagination cursors to the end."""
        if not self.offers("prompts"):
            return []
        return await list_all(
            self._sender, mcp.Client.list_prompts, lambda page: map(MCPPrompt.from_sdk, page.prompts), "prompts"
        )

    async def read_resource(self, uri: str, *, max_bytes: int | None = None) -> list[ResourceContent]:
        """The contents at ``uri`` (a template's URI: :meth:`MCPResourceTemplate.fill`); binary contents larger than
        ``max_bytes`` fail the read with a :class:`ResourceError` that states the limit."""

        async def read(session: LiveSession) -> list[ResourceContent]:
            result = await self._sender.ask(
                session,
                partial(session.client.read_resource, uri),
                timed_out=self._sender.late(f"return resource {uri!r}"),
                refused=lambda exc: read_refused(uri, exc.error.code, exc.error.message, self.server),
            )
            contents = read_contents(result, uri=uri, server=self.server, max_bytes=max_bytes)
            return [content.masked(self._keeper.secrets) for content in contents]

        return await self._sender.read(read, what=f"reading resource {uri!r}")

    async def get_prompt(self, prompt: str | MCPPrompt, arguments: Mapping[str, str] | None = None) -> RenderedPrompt:
        """The messages of ``prompt`` with ``arguments`` filled in; a listed prompt (an :class:`MCPPrompt`) has the
        arguments it requires checked before anything is sent."""
        arguments = dict(arguments or {})
        if isinstance(prompt, MCPPrompt):
            check_arguments(prompt, arguments, self.server)
        name = prompt.name if isinstance(prompt, MCPPrompt) else prompt

        async def get(session: LiveSession) -> RenderedPrompt:
            result = await self._sender.ask(
                session,
                partial(session.client.get_prompt, name, arguments),
                timed_out=self._sender.late(f"give prompt {name!r}"),
                refused=lambda exc: prompt_refused(name, exc.error.message, self.server),
            )
            return RenderedPrompt.from_sdk(result).masked(self._keeper.secrets)

        return await self._sender.read(get, what=f"getting prompt {name!r}")

    async def call_tool(
        self,
        tool_name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        repeatable: bool = False,
        progress: CallProgress | None = None,
        task_support: TaskSupport = "forbidden",
        tasks: bool = False,
    ) -> ToolResult:
        """Call one tool; calls beyond the concurrency limit wait for a free slot.

        ``repeatable``: the tool is read-only or idempotent, so a call cut off by a lost session may be resent.
        ``progress`` hears the call's progress notifications (and a task's status messages), each of which restarts
        the call timeout up to the longest call (:class:`~knime_mcp.mcp.deadline.CallDeadline`). ``task_support``:
        the tool's ``execution.taskSupport``; it runs as an MCP task (:mod:`knime_mcp.mcp.tasks`) when required, or
        when allowed and ``tasks`` is on. A call during which the client declined to fill in a form for the server
        is a :class:`ToolCallError`: the server's answer after a decline reads like a success. MCP does not say
        which call a form belongs to, so every call in flight on the session then fails.
        """
        arguments = dict(arguments or {})

        def report(done: float | None, total: float | None, message: str | None) -> None:
            if progress is not None:
                progress(done, total, message and capped(scrub(message, self._keeper.secrets)))

        def timed_out(deadline: CallDeadline, diagnostics: Diagnostics) -> McpToolError:
            return ToolTimeoutError(
                f"Tool {tool_name!r} did not answer {deadline.describe()}; the call was cancelled.",
                server=self.server,
                hint=diagnostics.no_answer_hint(RAISE_CALL_TIMEOUT),
            )

        async def call(session: LiveSession) -> ToolResult:
            declined = len(session.requests.declined)
            deadline = CallDeadline(self.spec.timeouts, timeout)
            as_task = runs_as_task_here(session.client.session, tool_name, task_support, tasks, self.server)
            if as_task:
                send = self._task_sender(session, tool_name, arguments, deadline, report)
            else:

                async def on_progress(done: float, total: float | None, message: str | None) -> None:
                    deadline.extend()
                    report(done, total, message)

                send = partial(
                    session.client.call_tool,
                    tool_name,
                    arguments,
                    read_timeout_seconds=deadline.longest,
                    progress_callback=on_progress if progress or deadline.extends else None,
                )
            try:
                with deadline.scope if as_task or deadline.extends else nullcontext():
                    result = await self._sender.ask(session, send, timed_out=partial(timed_out, deadline))
            except MismatchedResult as exc:
                return ToolResult.from_sdk(exc.result, mismatch=exc.reason)
            if deadline.expired:
                self._keeper.calls_cancelled = True
                raise timed_out(deadline, session.diagnostics)
            if reasons := session.requests.declined[declined:]:
                raise declined_error(tool_name, reasons, self.server)
            return ToolResult.from_sdk(result)

        await self._acquire_slot()
        try:
            result = await self._sender.request(call, what=f"the call of tool {tool_name!r}", repeatable=repeatable)
        except McpToolError as exc:
            self._keeper.masked(exc)
            raise
        except anyio.get_cancelled_exc_class():
            # Stopped (the chat's Stop, KNIME's cancel): the SDK has queued notifications/cancelled for the call, which
            # a close right after would cut off before it reaches the server, as it would after a timeout.
            self._keeper.calls_cancelled = True
            raise
        finally:
            self._limiter.release()
        return result.masked(self._keeper.secrets)

    def _task_sender(
        self,
        session: LiveSession,
        tool_name: str,
        arguments: dict[str, Any],
        deadline: CallDeadline,
        report: CallProgress,
    ) -> Callable[..., Any]:
        """The task call (``send(meta=…)``): each new status restarts the deadline and is reported as progress."""

        async def status(message: str) -> None:
            report(None, None, message)

        return partial(
            run_task,
            session.client.session,
            tool_name,
            arguments,
            timeout=deadline.seconds,
            server=self.server,
            on_status=deadline.extend,
            report=status,
        )

    async def _acquire_slot(self) -> None:
        """A free slot is taken without a trip through the event loop (``async with`` on the semaphore always
        yields once), which a call of a fraction of a millisecond would notice; a full one waits."""
        try:
            self._limiter.acquire_nowait()
        except anyio.WouldBlock:
            await self._limiter.acquire()
