"""Fake: a stdio "MCP server" that answers every line it reads with output no MCP client can accept.

It prints a banner that is not JSON, then answers each input line with HTML, a truncated JSON-RPC frame and a JSON
object that is not JSON-RPC 2.0, and never a valid response. It stays alive until stdin closes, so a client fails
by its own timeout or parse error, not by the process ending.
"""

from __future__ import annotations

import sys

_GARBAGE = (
    "<html><body>Service unavailable</body></html>\n",
    '{"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": \n',
    '{"jsonrpc": "1.0", "answer": 42}\n',
)


def main() -> None:
    sys.stdout.write("fake server starting up, this line is not JSON\n")
    sys.stdout.flush()
    for _line in sys.stdin:
        sys.stdout.writelines(_GARBAGE)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
