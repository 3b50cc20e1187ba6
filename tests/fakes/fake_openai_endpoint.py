"""A scripted OpenAI-compatible chat endpoint on 127.0.0.1: a fake, because a real model cannot be scripted.

Each ``POST /v1/chat/completions`` gets the next scripted reply; every request body and its ``Authorization``
header are recorded so tests can check what the client sent (messages, tool schemas, the key). A reply is a text
answer, a message with tool calls, or an HTTP error whose message echoes the key it was sent (as a careless server
might), so tests can show that the key never reaches an error message.

    with FakeOpenAIEndpoint([tool_calls(("c1", "add", {"a": 2, "b": 3})), answer("5")]) as endpoint:
        model = ChatOpenAI(base_url=endpoint.base_url, model="fake", api_key="k")
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

_HOST = "127.0.0.1"


@dataclass(frozen=True)
class Reply:
    """One scripted response."""

    content: str | None = None
    tool_calls: tuple[tuple[str, str, Any], ...] = ()
    """``(id, name, arguments)``; arguments that are not a string are sent as JSON."""
    status: int = 200
    finish_reason: str | None = None


def answer(text: str, finish_reason: str = "stop") -> Reply:
    return Reply(content=text, finish_reason=finish_reason)


def tool_calls(*calls: tuple[str, str, Any]) -> Reply:
    return Reply(tool_calls=tuple(calls), finish_reason="tool_calls")


def http_error(status: int) -> Reply:
    return Reply(status=status)


@dataclass
class _Script:
    replies: list[Reply]
    requests: list[dict[str, Any]] = field(default_factory=list)
    authorizations: list[str | None] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next(self, body: dict[str, Any], authorization: str | None) -> Reply | None:
        with self.lock:
            self.requests.append(body)
            self.authorizations.append(authorization)
            return self.replies.pop(0) if self.replies else None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    script: _Script

    def __init__(self, script: _Script) -> None:
        super().__init__((_HOST, 0), _Handler, bind_and_activate=False)
        self.socket.close()
        # With its protocol number, so TCP options apply as on any proper TCP socket.
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.script = script
        try:
            self.server_bind()
            self.server_activate()
        except OSError:
            self.server_close()
            raise

    def get_request(self) -> tuple[socket.socket, Any]:
        connection, address = self.socket.accept()
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return connection, address


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:  # noqa: N802 (the http.server API)
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, {"error": {"message": f"No route {self.path}", "type": "not_found"}})
            return
        authorization = self.headers.get("Authorization")
        reply = self.server.script.next(body, authorization)
        if reply is None:
            self._send(500, {"error": {"message": "The fake endpoint's script is exhausted.", "type": "server_error"}})
        elif reply.status != 200:
            key = (authorization or "").removeprefix("Bearer ")
            message = f"Request refused for key {key}."
            self._send(reply.status, {"error": {"message": message, "type": "invalid_request_error"}})
        elif body.get("stream"):
            self._send_stream(_completion(body, reply, len(self.server.script.requests)))
        else:
            self._send(200, _completion(body, reply, len(self.server.script.requests)))

    def _send_stream(self, completion: dict[str, Any]) -> None:
        """The completion as OpenAI streams it (``stream: true``): server-sent chunks, the whole message in the
        first, the finish reason in the last, then ``[DONE]``."""
        (choice,) = completion["choices"]
        delta = dict(choice["message"])
        delta["tool_calls"] = [{"index": i, **call} for i, call in enumerate(delta.get("tool_calls", []))] or None
        chunk = {**completion, "object": "chat.completion.chunk"}
        chunks = [
            {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
        ]
        data = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(data.encode())))
        self.end_headers()
        self.wfile.write(data.encode())

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: pytest shows the test's own output."""


def _completion(request: dict[str, Any], reply: Reply, number: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
            }
            for call_id, name, args in reply.tool_calls
        ]
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": 0,
        "model": request.get("model", "fake"),
        "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason or "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


class FakeOpenAIEndpoint:
    """Serves the scripted replies in a background thread until the ``with`` block ends."""

    def __init__(self, replies: Sequence[Reply]) -> None:
        self._script = _Script(list(replies))
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start the endpoint with 'with'"
        return f"http://{_HOST}:{self._server.server_address[1]}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The JSON bodies received, in order."""
        return self._script.requests

    @property
    def authorizations(self) -> list[str | None]:
        """The ``Authorization`` header of each request."""
        return self._script.authorizations

    def __enter__(self) -> FakeOpenAIEndpoint:
        self._server = _Server(self._script)
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-openai-endpoint", daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
