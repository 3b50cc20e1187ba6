"""A server's tool list as this client's own tools: one tool that cannot be a tool here is left out with a note, and
the rest are kept.

Layer: wire, used by :meth:`~knime_mcp.mcp.client.McpClient.tool_listing`; above it the provider and the agent's
re-listing put the notes in a node warning and the log. A server may list anything, and one broken entry (a tool
with an empty name) must not cost the workflow every other tool of the server.

    listing = listed_tools(result.tools, spec)
    listing.tools, listing.left_out
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from knime_mcp.errors import ConfigError
from knime_mcp.tools.tool import MCPTool

if TYPE_CHECKING:
    import mcp_types

    from knime_mcp.config import ServerSpec

__all__ = ["ListedTools", "listed_tools"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ListedTools:
    """The tools of one listing that can be tools here, in the server's order, and a note per tool left out."""

    tools: list[MCPTool]
    left_out: list[str]
    """Names the server, the tool's place in the list and its title, and what is wrong with it."""


def listed_tools(tools: Sequence[mcp_types.Tool], server: ServerSpec) -> ListedTools:
    """The SDK's tools as :class:`MCPTool`; a tool that is not one (no name) is left out and noted (and logged at
    info level: the callers that show notes warn with them)."""
    kept: list[MCPTool] = []
    left_out: list[str] = []
    for place, tool in enumerate(tools, start=1):
        try:
            kept.append(MCPTool.from_sdk(tool, server))
        except ConfigError as exc:
            title = tool.title or (tool.annotations.title if tool.annotations else None)
            titled = f" (titled {title!r})" if title else ""
            note = (
                f"Tool {place} of {len(tools)} listed by server {server.display_name!r}{titled} was left out: "
                f"{exc.message} The server's other tools are kept."
            )
            logger.info("%s", note)
            left_out.append(note)
    return ListedTools(kept, left_out)
