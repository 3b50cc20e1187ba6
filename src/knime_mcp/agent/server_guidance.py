"""What the servers say about themselves: their ``instructions``, for the model's system message and for a person.

Layer: core (agent), between :func:`~knime_mcp.agent.loop.assembled` (above) and the run's
:class:`~knime_mcp.calls.pool.ClientPool` (below). A server's instructions come with its session (the ``initialize``
result, or ``server/discover`` on the 2026-07-28 protocol: :attr:`~knime_mcp.mcp.client.McpClient.instructions`), and
sessions open on a tool's first call; so a run that gives them to the model opens the sessions of the servers of its
offered tools before the model's first call (:meth:`ServerGuidance.ready`; not as a chat opens, where a sign-in would
hold up the page), all at once, and later calls use those sessions (no second connect). The text is the server's, not
the person's: it is capped (a hostile server may send megabytes) and fenced as that server's words, as tool
descriptions are, and the system message's notice (:mod:`knime_mcp.agent.prompts`) says what the tags mean.

    guidance = ServerGuidance(pool, tools, conversation, give_model=True)
    await guidance.ready()         # the sessions open; the system message holds the instructions
    await guidance.listed()        # for a person who asks
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio

from knime_mcp.agent.chat_events import calling_server
from knime_mcp.errors import McpToolError
from knime_mcp.tools.fences import between_fences, new_fence
from knime_mcp.tools.tool import MCPTool

if TYPE_CHECKING:
    from knime_mcp.calls.dispatch import LocalTool
    from knime_mcp.calls.pool import ClientPool
    from knime_mcp.config import ServerSpec
    from knime_mcp.conversation import Conversation

__all__ = ["MAX_INSTRUCTION_BYTES", "ServerGuidance", "ServerInstructions"]

logger = logging.getLogger(__name__)

MAX_INSTRUCTION_BYTES = 8_192
"""UTF-8 bytes of one server's instructions that reach the model (and a person); the rest is cut, with a note. Every
model request carries them, and a server decides how long they are."""

_OPENING_AT_ONCE = 16
"""Servers connected at once at the start of a run: as many as a pasted configuration usually has."""


@dataclass(frozen=True)
class ServerInstructions:
    """One server's instructions, capped."""

    server: str
    """The server's display name."""

    text: str
    """At most :data:`MAX_INSTRUCTION_BYTES`, with a note at the end when cut."""

    cut: bool

    def to_dict(self) -> dict[str, Any]:
        return {"server": self.server, "text": self.text, "cut": self.cut}


class ServerGuidance:
    """A run's (or a chat's) servers' instructions: given to the model once, before its first call, when
    ``give_model``; listed for a person on request."""

    def __init__(
        self, pool: ClientPool, tools: Sequence[MCPTool | LocalTool], conversation: Conversation, *, give_model: bool
    ) -> None:
        self._pool = pool
        self._tools = list(tools)
        self._conversation = conversation
        self._pending = give_model
        self._lock = anyio.Lock()

    async def ready(self) -> None:
        """Once, when the model is given the instructions: open the servers' sessions and add what they say to the
        system message. A chat's page may ask for the list while a turn starts, so this holds a lock."""
        async with self._lock:
            if not self._pending:
                return
            found = await _opened_instructions(self._pool, self._tools)
            for item in found:
                if item.cut:
                    logger.warning("%s: its instructions were cut to the first %s bytes", item.server,
                                   f"{MAX_INSTRUCTION_BYTES:,}")  # fmt: skip
            if section := _instructions_section(found, new_fence()):
                self._conversation.add_to_system(section)
            self._pending = False

    async def listed(self) -> list[ServerInstructions]:
        """What the servers say about themselves: every offered tool's server when the model is given it, else the
        servers connected so far."""
        await self.ready()
        return _server_instructions(self._pool)


async def _opened_instructions(pool: ClientPool, tools: Sequence[MCPTool | LocalTool]) -> list[ServerInstructions]:
    """Open the session of every MCP server of ``tools`` (up to :data:`_OPENING_AT_ONCE` at once) and return their
    instructions. A server that cannot be reached is logged and skipped: its calls fail later with the reason, and
    the other servers go on."""
    specs = list(dict.fromkeys(tool.server for tool in tools if isinstance(tool, MCPTool) and tool.kind == "mcp"))
    limiter = anyio.CapacityLimiter(_OPENING_AT_ONCE)

    async def open_one(spec: ServerSpec) -> None:
        calling_server.set(spec.display_name)  # a sign-in link the session asks for names its server (the chat)
        async with limiter:
            try:
                await pool.client(spec)
            except McpToolError as exc:
                logger.warning("%s: could not connect to read its instructions: %s", spec.display_name, exc)

    async with anyio.create_task_group() as group:
        for spec in specs:
            group.start_soon(open_one, spec)
    return _server_instructions(pool)


def _server_instructions(pool: ClientPool) -> list[ServerInstructions]:
    """The instructions of every server connected so far that gave some, capped, in the order they connected."""
    found = []
    for client in pool.clients:
        if text := (client.instructions or "").strip():
            found.append(_capped(client.server, text))
    return found


def _capped(server: str, text: str) -> ServerInstructions:
    """At most :data:`MAX_INSTRUCTION_BYTES` of ``text``, cut between characters, with a note saying so."""
    encoded = text.encode("utf-8", errors="surrogatepass")
    if len(encoded) <= MAX_INSTRUCTION_BYTES:
        return ServerInstructions(server, text, cut=False)
    kept = encoded[:MAX_INSTRUCTION_BYTES].decode("utf-8", errors="ignore")
    note = f"[The server's instructions were cut here: the first {MAX_INSTRUCTION_BYTES:,} of {len(encoded):,} bytes.]"
    return ServerInstructions(server, f"{kept}\n{note}", cut=True)


def _instructions_section(found: Sequence[ServerInstructions], fence: str) -> str:
    """The system message's section holding each server's instructions, fenced as its words; empty without any."""
    if not found:
        return ""
    fenced = [between_fences("server-instructions", item.text, fence, server=item.server) for item in found]
    return "\n\n".join(["The tool servers describe themselves as follows.", *fenced])
