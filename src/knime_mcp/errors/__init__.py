"""The exception tree of knime-mcp, and the one seam that translates foreign errors into it.

The bottom of the value layer: it imports nothing else of knime_mcp. Import from here; the modules, bottom to top:

- :mod:`~knime_mcp.errors.tree`: :class:`McpToolError` and its subclasses, drawn with their exit codes;
- :mod:`~knime_mcp.errors.masking`: secret values masked in an error's message and hint (:func:`masked`);
- :mod:`~knime_mcp.errors.translation`: SDK, httpx2, anyio and OS errors as the most specific of them
  (:func:`translate_errors`).

    with translate_errors(spec.display_name):
        result = await session.call_tool(tool.tool_name, arguments)
"""

from __future__ import annotations

from knime_mcp.errors.masking import MASK, masked, scrub
from knime_mcp.errors.translation import SESSION_TERMINATED, translate, translate_errors
from knime_mcp.errors.tree import (
    MAX_RETRY_AFTER_SECONDS,
    CancelledByUser,
    ChatModelError,
    CircuitOpenError,
    ConfigError,
    IterationLimitError,
    McpToolError,
    OutcomeUnknownError,
    PromptError,
    ResourceError,
    ServerAuthError,
    ServerBusyError,
    ServerConnectError,
    ServerProtocolError,
    SessionExpiredError,
    SessionLostError,
    ToolCallError,
    ToolError,
    ToolTimeoutError,
    UsageError,
)

__all__ = [
    "MASK",
    "MAX_RETRY_AFTER_SECONDS",
    "SESSION_TERMINATED",
    "CancelledByUser",
    "ChatModelError",
    "CircuitOpenError",
    "ConfigError",
    "IterationLimitError",
    "McpToolError",
    "OutcomeUnknownError",
    "PromptError",
    "ResourceError",
    "ServerAuthError",
    "ServerBusyError",
    "ServerConnectError",
    "ServerProtocolError",
    "SessionExpiredError",
    "SessionLostError",
    "ToolCallError",
    "ToolError",
    "ToolTimeoutError",
    "UsageError",
    "masked",
    "scrub",
    "translate",
    "translate_errors",
]
