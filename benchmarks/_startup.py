"""Figure 6: the CLI's cold start against a raw-SDK script."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

from _rounds import Rounds, interleave
from _slowed_cli import ENV

RAW_LIST_SCRIPT = """
import sys

import anyio
import mcp


async def main() -> None:
    async with mcp.Client(sys.argv[1]) as client:
        for tool in (await client.list_tools()).tools:
            print(tool.name)


anyio.run(main)
"""
"""The minimal raw-SDK program that does what ``knime-mcp tools URL`` does: connect, list, print."""


def _seconds(command: list[str]) -> float:
    started = time.perf_counter()
    listed = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    seconds = time.perf_counter() - started
    assert "echo" in listed, listed
    return seconds


def cold_starts(url: str, runs: int, script_dir: Path) -> Rounds:
    """Seconds of ``knime-mcp tools URL`` and of the raw-SDK script as fresh processes, in alternating order; each
    must list the demo server's ``echo``. Under ``run.py --slowdown``, ``knime-mcp`` runs through ``_slowed_cli.py``."""
    script = script_dir / "raw_list_tools.py"
    script.write_text(RAW_LIST_SCRIPT)
    ours_command = [str(Path(sys.executable).with_name("knime-mcp")), "tools", url]
    if os.environ.get(ENV):
        ours_command = [sys.executable, str(Path(__file__).with_name("_slowed_cli.py")), "tools", url]
    raw_command = [sys.executable, str(script), url]
    return interleave(partial(_seconds, ours_command), partial(_seconds, raw_command), runs)
