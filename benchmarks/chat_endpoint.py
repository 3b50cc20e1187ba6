"""A loopback OpenAI-compatible chat endpoint for figure 12: ``--turns`` turns of one tool call, then an answer.

Stateless: each ``POST /v1/chat/completions`` counts the tool messages the conversation already holds; fewer than
``--turns`` get one call of ``echo`` (its text names the turn), the rest the final answer ``done``. Both sides of the
figure talk to one process, over keep-alive HTTP/1.1 as an OpenAI endpoint speaks it, so the model's own cost is
the same small constant on each side and what differs is the client's work per turn.

    python benchmarks/chat_endpoint.py --turns 20   # prints "chat endpoint listening on http://127.0.0.1:PORT/v1"
"""

from __future__ import annotations

import argparse
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_HOST = "127.0.0.1"
TOOL = "echo"
ANSWER = "done"


def reply(body: dict[str, Any], turns: int) -> dict[str, Any]:
    """The completion for a request: the next turn's call of :data:`TOOL`, or :data:`ANSWER` after ``turns``."""
    done = sum(1 for message in body.get("messages", []) if message.get("role") == "tool")
    message: dict[str, Any] = {"role": "assistant", "content": ANSWER if done >= turns else None}
    if done < turns:
        arguments = json.dumps({"text": f"turn {done + 1}"})
        message["tool_calls"] = [
            {"id": f"call-{done + 1}", "type": "function", "function": {"name": TOOL, "arguments": arguments}}
        ]
    return {
        "id": f"chatcmpl-{done}",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "bench"),
        "choices": [{"index": 0, "message": message, "finish_reason": "stop" if done >= turns else "tool_calls"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    """Headers and body go out as two writes: with Nagle's algorithm the body waits for the client's delayed ACK."""
    turns = 0

    def do_POST(self) -> None:  # noqa: N802 (the http.server API)
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        data = json.dumps(reply(body, self.turns)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the benchmark prints its own lines."""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, required=True, help="tool-calling turns before the final answer")
    _Handler.turns = parser.parse_args().turns
    server = ThreadingHTTPServer((_HOST, 0), _Handler)  # a thread per keep-alive connection: one per side
    server.daemon_threads = True
    print(f"chat endpoint listening on http://{_HOST}:{server.server_address[1]}/v1", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
