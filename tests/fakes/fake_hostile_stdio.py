"""Fake: a stdio MCP server that answers as `fake_misbehaving_server.py` does at `/<mode>/mcp?<options>`, for faults
that must be shown over stdio, where the SDK reads the server's stdout line by line.

Usage: `fake_hostile_stdio.py MODE [NAME=VALUE ...]`. It answers the handshake (``server/discover`` refused as by a
legacy server, then ``initialize``) and ``tools/list`` with the one read-only tool ``echo`` (or the mode's tools), and:

- ``invalid-json``: answers every ``tools/call`` with a frame cut off in the middle (its id is still readable).
- ``deep-schema``: lists one tool whose input schema nests ``depth`` (default 1,000) objects.
- ``huge``: ``tools/call`` returns ``mb`` (default 50) megabytes of text, on one line.
- ``endless``: answers ``tools/call`` with a reply begun and never ended: ``mb`` megabytes (default: without end) of
  ``x`` and no line end, then waits until its stdin closes.
"""

from __future__ import annotations

import json
import sys
from itertools import repeat

from fake_misbehaving_server import _answer, _Request


def main() -> None:
    mode, options = sys.argv[1], "&".join(sys.argv[2:])
    request = _Request(f"/{mode}/mcp?{options}", "POST", b"")
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue
        if mode == "endless" and message["method"] == "tools/call":
            _write_without_end(message["id"], int(request.option("mb", "0")))
        if mode == "invalid-json" and message["method"] == "tools/call":
            answer = f'{{"jsonrpc": "2.0", "id": {json.dumps(message["id"])}, "result": {{"to'.encode()
        else:
            answer = _answer(request, message)
        sys.stdout.buffer.write(answer + b"\n")
        sys.stdout.buffer.flush()


def _write_without_end(request_id: object, mb: int) -> None:
    sys.stdout.buffer.write(f'{{"jsonrpc": "2.0", "id": {json.dumps(request_id)}, "result": {{"to'.encode())
    for chunk in repeat(b"x" * 1024 * 1024, mb) if mb else repeat(b"x" * 1024 * 1024):
        sys.stdout.buffer.write(chunk)
        sys.stdout.buffer.flush()
    sys.stdin.buffer.read()
    sys.exit()


if __name__ == "__main__":
    main()
