"""Fake: a stdio "MCP server" that fails at start, writing the reason to stderr and exiting with code 3; like some
real servers, it first prints the token it was given in ``FAKE_SERVER_TOKEN``, if any."""

from __future__ import annotations

import os
import sys

EXIT_CODE = 3
MESSAGE = "fake server: cannot start: configuration file /nonexistent/config.toml not found"


def main() -> int:
    if token := os.environ.get("FAKE_SERVER_TOKEN"):
        print(f"fake server: using token {token}", file=sys.stderr, flush=True)
    print(MESSAGE, file=sys.stderr, flush=True)
    return EXIT_CODE


if __name__ == "__main__":
    raise SystemExit(main())
