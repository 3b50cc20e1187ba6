"""How long a server asks to be left alone: its ``Retry-After`` header, read one way for every answer knime-mcp
gets (an MCP server's, an HTTP tool's API, a chat model provider's).

Layer: net, below :mod:`knime_mcp.mcp.diagnostics`, :mod:`knime_mcp.http.call` and :mod:`knime_mcp.llm.retry_after`.

    retry_after({"Retry-After": "120"})                            # 120.0
    retry_after({"retry-after": "Fri, 27 Nov 2026 03:00:00 GMT"})  # seconds until then, or 0.0 if past
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from time import time

__all__ = ["retry_after"]


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asks to wait: ``retry-after-ms`` (OpenAI's, Azure's), else ``Retry-After`` in seconds or as
    an HTTP date (RFC 9110); None when it names no wait. ``headers`` looks names up without regard to case, as
    httpx's do."""
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        try:
            seconds = float(headers.get(name) or "nan") / divisor
        except ValueError:
            continue
        if math.isfinite(seconds):
            return max(seconds, 0.0)
    try:
        return max(parsedate_to_datetime(headers.get("retry-after") or "").timestamp() - time(), 0.0)
    except (TypeError, ValueError):
        return None
