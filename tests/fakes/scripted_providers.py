"""Scripted chat model endpoints on 127.0.0.1 that speak each provider's own wire format: fakes, because a cloud
model cannot be scripted and no provider's server runs here.

One HTTP server, five dialects: OpenAI chat completions, Azure OpenAI's deployments URL (the same body, the key in
``api-key``), Anthropic Messages (``/v1/messages``, ``x-api-key``), Gemini ``generateContent`` (``x-goog-api-key``)
and Ollama ``/api/chat`` (NDJSON when the client streams, as langchain-ollama always does). Each request (path, query,
headers, JSON body) is recorded; each gets the next scripted reply: a text answer, tool calls, or an HTTP error with an
optional ``Retry-After`` whose message echoes the key it was sent (as a careless server might), so tests can show the
key never reaches an error. The dialects also read back what a client sent: tool results and images, in that
provider's format.

    with ScriptedEndpoint("anthropic", [tool_calls(("c1", "add", {"a": 2, "b": 3})), answer("5")]) as endpoint:
        config = ChatModelConfig(provider="anthropic", base_url=endpoint.base_url, model="claude-x")
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

from fakes.fake_openai_endpoint import Reply as _OpenAIReply
from fakes.fake_openai_endpoint import _completion

_HOST = "127.0.0.1"


@dataclass(frozen=True)
class Reply:
    """One scripted response."""

    content: str = ""
    tool_calls: tuple[tuple[str, str, dict[str, Any]], ...] = ()
    """``(id, name, arguments)``."""
    status: int = 200
    retry_after: str | None = None
    """The ``Retry-After`` header of an error reply."""
    message: str | None = None
    """An error reply's message; by default one that quotes the key the request carried."""
    cut_off: bool = False
    """The reply stopped at the token limit: the provider's own word for it (OpenAI ``length``, Anthropic
    ``max_tokens``, Gemini ``MAX_TOKENS``, Ollama ``done_reason: length``)."""


def answer(text: str) -> Reply:
    return Reply(content=text)


def tool_calls(*calls: tuple[str, str, dict[str, Any]]) -> Reply:
    return Reply(tool_calls=tuple(calls))


def cut_off(text: str = "") -> Reply:
    return Reply(content=text, cut_off=True)


def http_error(status: int, retry_after: str | None = None, message: str | None = None) -> Reply:
    return Reply(status=status, retry_after=retry_after, message=message)


@dataclass(frozen=True)
class Received:
    """One request as the endpoint got it; header names in lower case."""

    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: dict[str, Any]


class Dialect:
    """A provider's wire format: its route, its key headers, its replies and errors, and how to read a request."""

    key_headers: tuple[str, ...] = ("authorization",)
    """The headers the provider takes the key in; ``Authorization`` as ``Bearer KEY``."""
    root = ""
    """What the client's base URL adds to the server's address."""

    def routes(self, path: str) -> bool:
        raise NotImplementedError

    def key(self, headers: dict[str, str]) -> tuple[str, str] | None:
        """``(header, key)`` of the first key header the request carries."""
        found = next((name for name in self.key_headers if name in headers), None)
        return None if found is None else (found, headers[found].removeprefix("Bearer "))

    def reply(self, request: dict[str, Any], reply: Reply, number: int) -> tuple[str, bytes]:
        """``(content type, body)`` of a successful answer."""
        raise NotImplementedError

    def error(self, status: int, message: str) -> dict[str, Any]:
        return {"error": {"message": message, "type": "invalid_request_error", "code": str(status)}}

    def tool_results(self, request: dict[str, Any]) -> list[tuple[str, str]]:
        """``(call id or tool name, text)`` of each tool result the request carries."""
        raise NotImplementedError

    def images(self, request: dict[str, Any]) -> list[tuple[str, str]]:
        """``(mime type, base64 data)`` of each image the request carries."""
        raise NotImplementedError


def _json(payload: dict[str, Any]) -> tuple[str, bytes]:
    return "application/json", json.dumps(payload).encode()


class OpenAIChat(Dialect):
    root = "/v1"

    def routes(self, path: str) -> bool:
        return path == "/v1/chat/completions"

    def reply(self, request: dict[str, Any], reply: Reply, number: int) -> tuple[str, bytes]:
        finish = "tool_calls" if reply.tool_calls else "length" if reply.cut_off else "stop"
        return _json(_completion(request, _OpenAIReply(reply.content, reply.tool_calls, finish_reason=finish), number))

    def tool_results(self, request: dict[str, Any]) -> list[tuple[str, str]]:
        return [(m["tool_call_id"], _text(m["content"])) for m in request["messages"] if m["role"] == "tool"]

    def images(self, request: dict[str, Any]) -> list[tuple[str, str]]:
        urls = [part["image_url"]["url"] for m in request["messages"] for part in _parts(m, "image_url")]
        return [tuple(url.removeprefix("data:").split(";base64,")) for url in urls]  # type: ignore[misc]


class AzureChat(OpenAIChat):
    key_headers = ("api-key",)
    root = ""

    def routes(self, path: str) -> bool:
        return path.startswith("/openai/deployments/") and path.endswith("/chat/completions")


class AnthropicMessages(Dialect):
    key_headers = ("x-api-key", "authorization")
    """anthropic 2's client sends an API key as ``Authorization: Bearer``; older ones as ``x-api-key``."""

    def routes(self, path: str) -> bool:
        return path == "/v1/messages"

    def reply(self, request: dict[str, Any], reply: Reply, number: int) -> tuple[str, bytes]:
        content: list[dict[str, Any]] = [{"type": "text", "text": reply.content}] if reply.content else []
        content += [{"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in reply.tool_calls]
        return _json(
            {
                "id": f"msg_{number}",
                "type": "message",
                "role": "assistant",
                "model": request.get("model", "fake"),
                "content": content,
                "stop_reason": "tool_use" if reply.tool_calls else "max_tokens" if reply.cut_off else "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1},
            }
        )

    def error(self, status: int, message: str) -> dict[str, Any]:
        kind = {401: "authentication_error", 429: "rate_limit_error"}.get(status, "invalid_request_error")
        return {"type": "error", "error": {"type": kind, "message": message}}

    def tool_results(self, request: dict[str, Any]) -> list[tuple[str, str]]:
        blocks = [part for m in request["messages"] for part in _parts(m, "tool_result")]
        return [(part["tool_use_id"], _text(part["content"])) for part in blocks]

    def images(self, request: dict[str, Any]) -> list[tuple[str, str]]:
        sources = [part["source"] for m in request["messages"] for part in _parts(m, "image")]
        return [(source["media_type"], source["data"]) for source in sources if source["type"] == "base64"]


class GeminiGenerateContent(Dialect):
    key_headers = ("x-goog-api-key",)

    def routes(self, path: str) -> bool:
        return path.startswith(("/v1/models/", "/v1beta/models/")) and path.endswith(":generateContent")

    def reply(self, request: dict[str, Any], reply: Reply, number: int) -> tuple[str, bytes]:
        parts: list[dict[str, Any]] = [{"text": reply.content}] if reply.content else []
        parts += [{"functionCall": {"id": i, "name": n, "args": a}} for i, n, a in reply.tool_calls]
        return _json(
            {
                "candidates": [
                    {
                        "content": {"role": "model", "parts": parts},
                        "finishReason": "MAX_TOKENS" if reply.cut_off else "STOP",
                        "index": 0,
                    }
                ],
                "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
                "modelVersion": "fake",
                "responseId": f"response-{number}",
            }
        )

    def error(self, status: int, message: str) -> dict[str, Any]:
        kind = {401: "UNAUTHENTICATED", 429: "RESOURCE_EXHAUSTED"}.get(status, "INVALID_ARGUMENT")
        return {"error": {"code": status, "message": message, "status": kind}}

    def tool_results(self, request: dict[str, Any]) -> list[tuple[str, str]]:
        answers = [
            part["functionResponse"] for c in request["contents"] for part in c["parts"] if "functionResponse" in part
        ]
        return [(a["name"], json.dumps(a["response"])) for a in answers]

    def images(self, request: dict[str, Any]) -> list[tuple[str, str]]:
        inline = [part["inlineData"] for c in request["contents"] for part in c["parts"] if "inlineData" in part]
        return [(data.get("mimeType") or data["mime_type"], data["data"]) for data in inline]  # proto JSON takes both


class OllamaChat(Dialect):
    def routes(self, path: str) -> bool:
        return path == "/api/chat"

    def reply(self, request: dict[str, Any], reply: Reply, number: int) -> tuple[str, bytes]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = [{"function": {"name": n, "arguments": a}} for _, n, a in reply.tool_calls]
        head = {"model": request.get("model", "fake"), "created_at": "2025-01-01T00:00:00Z"}
        done = "length" if reply.cut_off else "stop"
        last = {**head, "message": {"role": "assistant", "content": ""}, "done": True, "done_reason": done}
        last |= {"prompt_eval_count": 1, "eval_count": 1}
        if not request.get("stream", True):
            return _json({**last, "message": message})
        lines = [{**head, "message": message, "done": False}, last]
        return "application/x-ndjson", "".join(json.dumps(line) + "\n" for line in lines).encode()

    def error(self, status: int, message: str) -> dict[str, Any]:
        return {"error": message}

    def tool_results(self, request: dict[str, Any]) -> list[tuple[str, str]]:
        return [(m.get("tool_name", ""), m["content"]) for m in request["messages"] if m["role"] == "tool"]

    def images(self, request: dict[str, Any]) -> list[tuple[str, str]]:
        return [("image/?", image) for m in request["messages"] for image in m.get("images") or []]


DIALECTS: dict[str, Dialect] = {
    "openai": OpenAIChat(),
    "azure": AzureChat(),
    "anthropic": AnthropicMessages(),
    "gemini": GeminiGenerateContent(),
    "ollama": OllamaChat(),
}


def _parts(message: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    content = message.get("content")
    return [part for part in content if part.get("type") == kind] if isinstance(content, list) else []


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content)


@dataclass
class _Script:
    dialect: Dialect
    replies: list[Reply]
    received: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next(self, request: Received) -> Reply | None:
        with self.lock:
            self.received.append(request)
            return self.replies.pop(0) if self.replies else None


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, script: _Script) -> None:
        super().__init__((_HOST, 0), _Handler)
        self.script = script


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:  # noqa: N802 (the http.server API)
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        parts = urlsplit(self.path)
        dialect = self.server.script.dialect
        if not dialect.routes(parts.path):
            self._send(404, *_json(dialect.error(404, f"No route {parts.path}")))
            return
        headers = {name.lower(): value for name, value in self.headers.items()}
        reply = self.server.script.next(Received(parts.path, parse_qs(parts.query), headers, body))
        if reply is None:
            self._send(500, *_json(dialect.error(500, "The scripted endpoint's script is exhausted.")))
        elif reply.status != 200:
            key = (dialect.key(headers) or ("", ""))[1]
            extra = {"Retry-After": reply.retry_after} if reply.retry_after else {}
            message = reply.message or f"Request refused for key {key}."
            self._send(reply.status, *_json(dialect.error(reply.status, message)), extra)
        else:
            self._send(200, *dialect.reply(body, reply, len(self.server.script.received)))

    def _send(self, status: int, content_type: str, data: bytes, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in {"Content-Type": content_type, "Content-Length": str(len(data)), **(extra or {})}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: pytest shows the test's own output."""


class ScriptedEndpoint:
    """Serves the scripted replies in ``provider``'s format in a background thread until the ``with`` block ends."""

    def __init__(self, provider: str, replies: Sequence[Reply]) -> None:
        self.dialect = DIALECTS[provider]
        self._script = _Script(self.dialect, list(replies))
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """The endpoint as the provider's client is given it."""
        assert self._server is not None, "start the endpoint with 'with'"
        return f"http://{_HOST}:{self._server.server_address[1]}{self.dialect.root}"

    @property
    def received(self) -> list[Received]:
        return self._script.received

    def keys(self) -> list[tuple[str, str] | None]:
        """``(header, key)`` of each request: which of the provider's key headers carried what."""
        return [self.dialect.key(request.headers) for request in self.received]

    def __enter__(self) -> ScriptedEndpoint:
        self._server = _Server(self._script)
        self._thread = threading.Thread(target=self._server.serve_forever, name="scripted-endpoint", daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
