"""Test server: the demo tools over the legacy HTTP+SSE transport only, at `/events` instead of the usual `/sse`.

A Streamable HTTP POST to `/events` is answered 405, which is what a client's `auto` transport must take as the cue
to fall back to SSE; the URL does not end in `/sse`, so the fallback cannot be guessed from the path.
Prints `SSE-only test server listening on http://127.0.0.1:PORT/events`.
"""

from __future__ import annotations

from knime_mcp.demo_server import HOST, build_server, serve_http

EVENTS_PATH = "/events"


def main() -> None:
    app = build_server().sse_app(host=HOST, sse_path=EVENTS_PATH, message_path=f"{EVENTS_PATH}/messages/")
    serve_http(app, EVENTS_PATH, name="SSE-only test server")


if __name__ == "__main__":
    main()
