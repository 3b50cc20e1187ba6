"""An HTTP response as the result value MCP tools give, so tables, logs and models treat both kinds alike.

A JSON body is structured content (an object as it is, anything else as ``{"result": …}``, as MCP servers wrap it)
plus its text; an image is image content; other text is text, its content type named unless plain; other binary
content is a line saying what it is. A status outside 2xx is a tool error naming the status, with at most
:data:`MAX_ERROR_EXCERPT` characters of the body: a failing API may answer with a whole HTML page or stack trace.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from knime_mcp.http.request import HttpRequest
from knime_mcp.tools.results import ImagePart, TextPart, ToolResult

__all__ = ["MAX_ERROR_EXCERPT", "error_result", "success_result"]

MAX_ERROR_EXCERPT = 1000
"""Characters of a failed response's body that its tool error keeps."""

_TEXT_TYPES = ("application/xml", "application/javascript", "application/yaml", "application/x-www-form-urlencoded")


def media_type(content_type: str | None) -> str:
    """``text/csv`` of ``text/csv; charset=utf-8``; empty when the response named none."""
    return (content_type or "").split(";", 1)[0].strip().lower()


def success_result(status: int, content_type: str | None, body: bytes, encoding: str) -> ToolResult:
    kind = media_type(content_type)
    if not body:
        return ToolResult(content=(TextPart(f"The request succeeded (HTTP {status}) without content."),))
    if kind.startswith("image/") and not kind.endswith("+xml"):
        return ToolResult(content=(ImagePart(base64.b64encode(body).decode("ascii"), kind),))
    text = _text(kind, body, encoding)
    if text is None:
        return ToolResult(content=(TextPart(f"[{len(body):,} bytes of {kind or 'binary data'}, not shown.]"),))
    if _is_json(kind) and (value := _json(text)) is not None:
        return ToolResult(content=(TextPart(text),), structured=value if isinstance(value, dict) else {"result": value})
    named = text if kind in ("text/plain", "") else f"Content-Type: {kind}\n\n{text}"
    return ToolResult(content=(TextPart(named),))


def error_result(
    status: int, reason: str, request: HttpRequest, content_type: str | None, body: bytes, encoding: str
) -> ToolResult:
    """A tool error naming the status and the request (its path, never its query, which may hold an API key)."""
    kind = media_type(content_type)
    text = _text(kind, body, encoding)
    if text is None:
        excerpt = f"[{len(body):,} bytes of {kind or 'binary data'}]"
    elif len(text) > MAX_ERROR_EXCERPT:
        excerpt = f"{text[:MAX_ERROR_EXCERPT]}… [{len(text) - MAX_ERROR_EXCERPT:,} more characters]"
    else:
        excerpt = text
    said = f"The API answered HTTP {status}{f' {reason}' if reason else ''} to {request.method} {request.path or '/'}."
    return ToolResult(content=(TextPart(f"{said}\n{excerpt}" if excerpt else said),), is_error=True)


def _is_json(kind: str) -> bool:
    return kind == "application/json" or kind.endswith("+json")


def _text(kind: str, body: bytes, encoding: str) -> str | None:
    """The body as text, if it is text: a textual type, or any type that decodes cleanly; else None."""
    if kind.startswith("text/") or _is_json(kind) or kind in _TEXT_TYPES or kind.endswith("+xml"):
        return body.decode(encoding, errors="replace")
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None
