"""``knime-mcp`` for the sensitivity mode (``run.py --slowdown F``, figure 6): the console script with the CPU time of
the project's start and work spent again ``F - 1`` times before it exits, ``F`` read from :data:`ENV`.

Timed from after the SDK's own imports, which the raw script pays too. Benchmark-side only: the product never reads
:data:`ENV`. Kept free of imports of the project, whose import time is part of what is timed.
"""

from __future__ import annotations

import os
import sys
import time

import anyio  # noqa: F401 - the SDK's share of a start, not timed
import httpx  # noqa: F401
import mcp  # noqa: F401

ENV = "KNIME_MCP_BENCH_SLOWDOWN"
"""The factor, set by ``run.py --slowdown`` for the processes it starts."""


def spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def main() -> None:
    started = time.process_time()
    from knime_mcp.cli.main import run

    try:
        run()
    finally:
        spin((time.process_time() - started) * (float(os.environ.get(ENV) or 1) - 1))


if __name__ == "__main__":
    sys.argv[0] = "knime-mcp"
    main()
