"""Fake: a stdio "MCP server" that fails at start, writing the reason to stderr and exiting with code 3."""

from __future__ import annotations

import sys

EXIT_CODE = 3
MESSAGE = "fake server: cannot start: configuration file /nonexistent/config.toml not found"


def main() -> int:
    print(MESSAGE, file=sys.stderr, flush=True)
    return EXIT_CODE


if __name__ == "__main__":
    raise SystemExit(main())
