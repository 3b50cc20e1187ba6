"""One call's arguments as an HTTP request: the path filled in, the query, the headers and the JSON body.

Pure: no connection, no secret. The arguments were validated against the tool's schema before; what a schema cannot
say (a path parameter the schema leaves optional, a header value with a line break) is a :class:`ToolCallError`
here, before anything is sent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from knime_mcp.config import header_value_problem
from knime_mcp.errors import ToolCallError
from knime_mcp.tools.http_operation import BODY_ARGUMENTS, HttpOperation

__all__ = ["NO_BODY", "HttpRequest", "build_request"]

NO_BODY = object()
""":attr:`HttpRequest.body` of a request without one (``None`` is a JSON body: ``null``)."""


@dataclass(frozen=True, kw_only=True)
class HttpRequest:
    """What to send, relative to the server's base URL."""

    method: str
    path: str
    """Percent-encoded, starting with ``/`` (or empty for a webhook, whose URL is the base URL)."""

    query: tuple[tuple[str, str], ...] = ()
    """In order; a list argument repeats its name."""

    headers: Mapping[str, str]
    body: Any = NO_BODY


def build_request(operation: HttpOperation, arguments: Mapping[str, Any]) -> HttpRequest:
    """The request for ``arguments``; an argument left out (or None) sends no parameter."""
    path = operation.path
    query: list[tuple[str, str]] = []
    headers: dict[str, str] = {}
    for parameter in operation.parameters:
        value = arguments.get(parameter.name)
        if parameter.location == "path":
            if value is None:
                raise ToolCallError(f"The path parameter {parameter.name!r} is missing.", hint=_ARGUMENTS_HINT)
            # Nothing is safe: a '/' or '?' in a value must not change which resource the request names.
            path = path.replace(f"{{{parameter.sent_as}}}", quote(_text(value), safe=""))
        elif value is None:
            continue
        elif parameter.location == "query":
            values = value if isinstance(value, list) else [value]
            query.extend((parameter.sent_as, _text(item)) for item in values)
        else:
            headers[parameter.sent_as] = _header(parameter.sent_as, value)
    _check_segments(path, operation)
    return HttpRequest(
        method=operation.method, path=path, query=tuple(query), headers=headers, body=_body(operation, arguments)
    )


_ARGUMENTS_HINT = "Call the tool again with arguments that match its input schema."
_MOVING_SEGMENTS = frozenset({"", ".", ".."})
"""Path segments that name another resource than their place in the template: '..' the parent (httpx and every
server resolve dot segments, so /users/../profile is /profile), '.' and an empty one the collection, for servers
that merge slashes."""


def _check_segments(path: str, operation: HttpOperation) -> None:
    """Refuse a path whose arguments made a segment empty, '.' or '..'. A value has its '/' encoded, so the filled
    path has the template's segments one for one."""
    for filled, template in zip(path.split("/"), operation.path.split("/"), strict=True):
        if filled in _MOVING_SEGMENTS and filled != template:
            names = [parameter.name for parameter in operation.parameters
                     if parameter.location == "path" and f"{{{parameter.sent_as}}}" in template]  # fmt: skip
            said = repr(filled) if filled else "an empty one"
            raise ToolCallError(
                f"The path parameter {names[0]!r} turns the path segment {template!r} into {said}, which would send "
                f"the request to another resource than {operation.method} {operation.path}.",
                hint=_ARGUMENTS_HINT,
            )


def _text(value: Any) -> str:
    """A parameter's value as the text a URL carries: JSON's spelling of true, false and numbers; objects as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _header(name: str, value: Any) -> str:
    text = _text(value)
    if problem := header_value_problem(text):
        raise ToolCallError(f"The value for header {name!r} {problem}, which HTTP forbids.", hint=_ARGUMENTS_HINT)
    return text


def _body(operation: HttpOperation, arguments: Mapping[str, Any]) -> Any:
    if operation.body == BODY_ARGUMENTS:
        parameters = {parameter.name for parameter in operation.parameters}
        return {name: value for name, value in arguments.items() if name not in parameters}
    if operation.body is None or operation.body not in arguments:
        return NO_BODY
    return arguments[operation.body]
