"""Fake: an HTTP "MCP server" that misbehaves on purpose, one fault per URL path, for the fault suite.

No real server can be made to send a wrong JSON-RPC id, cut a response in half or trickle a byte a second, so this
fake speaks just enough Streamable HTTP (JSON responses, no session id, no GET stream) to get through the handshake
and then fails the way its path says. Outside its fault it answers like a correct MCP server, with one read-only
tool ``echo``. Prints `fake misbehaving server listening on http://127.0.0.1:PORT`; endpoints are
`/<mode>/mcp?<options>`:

- ``ok``: no fault.
- ``hang``: answers the handshake, then never answers (the connection stays open until the client leaves).
- ``drop``: sends the headers and half the body, then closes the connection.
- ``invalid-json``: a 200 JSON response whose body is cut-off JSON.
- ``wrong-id``: a well-formed answer to a request id that was never sent.
- ``status``: HTTP ``code`` (default 503) with ``Retry-After: retry_after`` for the first ``times`` matching
  requests counted per ``key``, then correct answers; with ``body=session-not-found`` the answer carries the
  JSON-RPC error the TypeScript SDK's Streamable HTTP transport sends for a session id it does not know (``-32001``
  "Session not found", with 404), which no server of the test peers sends on cue.
- ``huge``: ``tools/call`` returns ``mb`` (default 50) megabytes of text; with ``encoding=gzip``, gzip-encoded (a few
  hundred KB on the wire, whatever the client accepts).
- ``deep-schema``: one tool whose input schema nests ``depth`` (default 1,000) objects.
- ``wide-schema``: one tool whose input schema has ``properties`` (default 10,000) properties.
- ``odd-names``: tools named with spaces, unicode, 500 characters, and names that collide after sanitising.
- ``trickle``: answers as an SSE stream sent one byte every ``interval`` (default 1) seconds; a client that closes
  the stream before its end is recorded (``/seen``) as ``(response stream closed)``.
- ``schema-breaking``: for the first ``times`` (default 3) matching requests per ``key``, a well-formed JSON-RPC
  result that breaks the MCP schema (``content`` is a string, ``tools`` an object), then correct answers.
- ``auth-then-400``: a gateway in front of an OAuth-protected server: the first request (per ``key``) gets 401 with a
  ``WWW-Authenticate: Bearer resource_metadata=…`` challenge, every later one a bare 400; the handshake fails.

Every JSON-RPC method a request with a ``key`` option sends is recorded; ``GET /seen?key=K`` answers the list, so a
test can check that a timed-out call was cancelled on the server (``notifications/cancelled``).

Faults apply to the methods in ``on`` (comma-separated, default ``tools/list,tools/call``); the handshake
(``server/discover`` is refused as by a legacy server, then ``initialize``) always succeeds.
"""

from __future__ import annotations

import asyncio
import gzip
import json
from collections import Counter
from typing import Any
from urllib.parse import parse_qs, urlsplit

from knime_mcp.demo_server import HOST, listening_socket

_DEFAULT_FAULTY = "tools/list,tools/call"
_FAULTS = frozenset({"hang", "drop", "invalid-json", "wrong-id", "status", "trickle", "schema-breaking"})
"""Modes that misbehave on the methods in ``on``; the other modes only answer with unusual content."""
_MODES = _FAULTS | {"ok", "huge", "deep-schema", "wide-schema", "odd-names", "auth-then-400"}
_REASONS = {
    200: "OK",
    202: "Accepted",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    405: "Method Not Allowed",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}
_ECHO = {
    "name": "echo",
    "description": "Return the text it was given.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    "annotations": {"readOnlyHint": True, "idempotentHint": True, "destructiveHint": False, "openWorldHint": False},
}
ODD_NAMES = ("get weather", "météo du jour", "天気", "x" * 500, "get_data", "get data", "get.data")
"""The tool names of ``odd-names``; the last three all become ``get_data`` when sanitised."""

_SESSION_NOT_FOUND = json.dumps(
    {"jsonrpc": "2.0", "error": {"code": -32001, "message": "Session not found"}, "id": None}
).encode()
"""What the TypeScript SDK's transport answers a session id it does not know (webStandardStreamableHttp.js)."""

_status_counts: Counter[str] = Counter()
_seen: dict[str, list[str]] = {}


class _Request:
    def __init__(self, target: str, method: str, body: bytes) -> None:
        parts = urlsplit(target)
        self.http_method = method
        self.mode = parts.path.strip("/").split("/")[0] or "ok"
        self.options = {name: values[-1] for name, values in parse_qs(parts.query).items()}
        self.body = body

    def option(self, name: str, default: str) -> str:
        return self.options.get(name, default)


async def _read_request(reader: asyncio.StreamReader) -> _Request | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, target, _version = lines[0].split(" ", 2)
    fields = (line.split(":", 1) for line in lines[1:] if line)
    headers = {name.strip().lower(): value.strip() for name, value in fields}
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return _Request(target, method, body)


def _head(status: int, content_type: str | None, length: int | None, extra: dict[str, str] | None = None) -> bytes:
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}"]
    if content_type:
        lines.append(f"Content-Type: {content_type}")
    lines.append(f"Content-Length: {length}" if length is not None else "Connection: close")
    lines.extend(f"{name}: {value}" for name, value in (extra or {}).items())
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def _send(
    writer: asyncio.StreamWriter, status: int, body: bytes = b"", content_type: str = "application/json", **extra: str
) -> None:
    writer.write(_head(status, content_type if body else None, len(body), extra) + body)
    await writer.drain()


def _result(message_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": message_id, "result": result}


def _tools(request: _Request) -> str:
    """The ``tools/list`` result as JSON text, built by hand because a 1,000-level schema defeats ``json.dumps``."""
    match request.mode:
        case "deep-schema":
            depth = int(request.option("depth", "1000"))
            nested = '{"type":"object","properties":{"child":' * depth + '{"type":"string"}' + "}}" * depth
            tools = f'[{{"name":"deep","inputSchema":{nested}}}]'
        case "wide-schema":
            count = int(request.option("properties", "10000"))
            properties = {f"field_{index:05d}": {"type": "string"} for index in range(count)}
            tools = json.dumps([{"name": "wide", "inputSchema": {"type": "object", "properties": properties}}])
        case "odd-names":
            tools = json.dumps([{**_ECHO, "name": name} for name in ODD_NAMES], ensure_ascii=False)
        case _:
            tools = json.dumps([_ECHO])
    return f'{{"tools":{tools}}}'


def _answer(request: _Request, message: dict[str, Any]) -> bytes:
    """The correct answer to one JSON-RPC request."""
    method, message_id, params = message["method"], message["id"], message.get("params") or {}
    match method:
        case "initialize":
            result = {
                "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "fake-misbehaving", "version": "0"},
            }
        case "ping":
            result = {}
        case "tools/list":
            return f'{{"jsonrpc":"2.0","id":{json.dumps(message_id)},"result":{_tools(request)}}}'.encode()
        case "tools/call" if request.mode == "huge":
            text = "0123456789" * (int(request.option("mb", "50")) * 100_000)
            result = {"content": [{"type": "text", "text": text}], "isError": False}
        case "tools/call":
            text = str((params.get("arguments") or {}).get("text", ""))
            result = {"content": [{"type": "text", "text": text}], "isError": False}
        case _:
            error = {"code": -32601, "message": f"Method not found: {method}"}
            return json.dumps({"jsonrpc": "2.0", "id": message_id, "error": error}).encode()
    return json.dumps(_result(message_id, result), ensure_ascii=False).encode()


async def _respond(request: _Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
    """Answer one HTTP request; False when the connection must close afterwards."""
    key = request.option("key", "")
    if request.http_method == "GET" and request.mode == "seen":
        await _send(writer, 200, json.dumps(_seen.get(key, [])).encode())
        return True
    if request.mode not in _MODES:
        await _send(writer, 404, f"unknown fake mode {request.mode!r}".encode(), "text/plain")
        return True
    if request.mode == "auth-then-400":
        return await _refuse_auth_then_400(request, writer)
    if request.http_method != "POST":
        await _send(writer, 405)
        return True
    message = json.loads(request.body)
    if key:
        _seen.setdefault(key, []).append(message.get("method", "(response)"))
    if "id" not in message or "method" not in message:
        await _send(writer, 202)
        return True
    if request.mode in _FAULTS and message["method"] in request.option("on", _DEFAULT_FAULTY).split(","):
        return await _misbehave(request, message, reader, writer)
    if request.mode == "huge" and message["method"] == "tools/call" and request.option("encoding", "") == "gzip":
        await _send(writer, 200, gzip.compress(_answer(request, message), 1), **{"Content-Encoding": "gzip"})
        return True
    await _send(writer, 200, _answer(request, message))
    return True


async def _refuse_auth_then_400(request: _Request, writer: asyncio.StreamWriter) -> bool:
    counter = f"auth-then-400:{request.option('key', '')}"
    _status_counts[counter] += 1
    if _status_counts[counter] > 1:
        await _send(writer, 400, b"bad request", "text/plain")
        return True
    challenge = f'Bearer error="invalid_token", resource_metadata="http://{HOST}/.well-known/oauth-protected-resource"'
    await _send(writer, 401, b'{"error": "invalid_token"}', **{"WWW-Authenticate": challenge})
    return True


async def _misbehave(
    request: _Request, message: dict[str, Any], reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> bool:
    """Answer one JSON-RPC request the way the mode says; False when the connection must close afterwards."""
    match request.mode:
        case "hang":
            while await reader.read(65536):
                pass
            return False
        case "drop":
            body = _answer(request, message)
            writer.write(_head(200, "application/json", len(body)) + body[: len(body) // 2])
            await writer.drain()
            return False
        case "invalid-json":
            await _send(writer, 200, f'{{"jsonrpc": "2.0", "id": {json.dumps(message["id"])}, "result": {{"to'.encode())
        case "wrong-id":
            await _send(writer, 200, json.dumps(_result(f"not-{message['id']}", {})).encode())
        case "status" if _status_counts[request.option("key", "")] < int(request.option("times", "2")):
            _status_counts[request.option("key", "")] += 1
            retry_after = {"Retry-After": request.option("retry_after", "1")}
            if request.option("body", "") == "session-not-found":
                await _send(writer, int(request.option("code", "404")), _SESSION_NOT_FOUND, **retry_after)
            else:
                await _send(writer, int(request.option("code", "503")), b"try again later", "text/plain", **retry_after)
        case "status":
            await _send(writer, 200, _answer(request, message))
        case "schema-breaking" if _status_counts[_schema_counter(request)] < int(request.option("times", "3")):
            _status_counts[_schema_counter(request)] += 1
            broken = {"tools": {"echo": "not a list"}} if message["method"] == "tools/list" else {"content": "text"}
            await _send(writer, 200, json.dumps(_result(message["id"], broken)).encode())
        case "schema-breaking":
            await _send(writer, 200, _answer(request, message))
        case "trickle":
            interval = float(request.option("interval", "1"))
            await _trickle(writer, _answer(request, message), interval, request.option("key", ""))
            return False
    return True


def _schema_counter(request: _Request) -> str:
    return f"schema-breaking:{request.option('key', '')}"


async def _trickle(writer: asyncio.StreamWriter, answer: bytes, interval: float, key: str) -> None:
    """An SSE response, one byte per interval, until done or the client leaves, which is recorded as
    ``(response stream closed)`` for ``key``."""
    writer.write(_head(200, "text/event-stream", None))
    try:
        for byte in b"event: message\ndata: " + answer + b"\n\n":
            if writer.is_closing():
                raise ConnectionResetError
            writer.write(bytes([byte]))
            await writer.drain()
            await asyncio.sleep(interval)
    except ConnectionError:
        _seen.setdefault(key, []).append("(response stream closed)")
        raise


async def _serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while (request := await _read_request(reader)) is not None:
            if not await _respond(request, reader, writer):
                break
    except ConnectionError:
        pass
    finally:
        writer.close()


async def _main() -> None:
    listener = listening_socket()
    server = await asyncio.start_server(_serve, sock=listener)
    print(f"fake misbehaving server listening on http://{HOST}:{listener.getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(_main())
