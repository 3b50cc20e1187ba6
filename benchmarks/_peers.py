"""Figure 2: the project's client reusing one session against langchain-mcp-adapters' default, a session per call.

The adapters (0.3.2) need ``mcp<2``, beside this project's ``mcp`` 2: they run in a venv of their own under
``benchmarks/.peers/`` (git-ignored), made on first use from ``peers-requirements.txt`` (every package pinned) and
made again when that file changes. Their side is ``adapters_peer.py``, one process for the whole figure, timing its
own calls; ours times ``McpClient`` on one session in this process. Both call the demo server's ``echo`` over
Streamable HTTP the same number of times a round, in interleaved rounds.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import venv
from pathlib import Path
from typing import IO

import anyio
import anyio.to_thread
from _rounds import Rounds, interleave_async
from _sessions import our_session, sequential

_HERE = Path(__file__).parent
REQUIREMENTS = _HERE / "peers-requirements.txt"
PEERS = _HERE / ".peers"


def peer_python() -> Path:
    """The peers' venv's interpreter, the venv made (or made again) when ``peers-requirements.txt`` changed."""
    folder = PEERS / "adapters"
    stamp, python = folder / "requirements.sha256", folder / "bin" / "python"
    wanted = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()
    if not (python.exists() and stamp.exists() and stamp.read_text() == wanted):
        print(f"making the peers' venv in {folder} (first use) ...", file=sys.stderr, flush=True)
        venv.EnvBuilder(clear=True, with_pip=True).create(folder)
        pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        subprocess.run([*pip, "--no-deps", "-r", str(REQUIREMENTS)], check=True)
        stamp.write_text(wanted)
    return python


class _Peer:
    """The adapters' process: a line ``N`` in, the seconds of N calls out."""

    def __init__(self, url: str) -> None:
        command = [str(peer_python()), str(_HERE / "adapters_peer.py"), url]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def calls(self, count: int) -> float:
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        stdin.write(f"{count}\n")
        stdin.flush()
        line = stdout.readline()
        if not line:
            raise RuntimeError(f"adapters_peer.py ended (exit code {self.process.wait()})")
        return float(line)

    def close(self) -> None:
        pipe: IO[str] | None = self.process.stdin
        if pipe is not None:
            pipe.close()
        self.process.wait()


async def compare_adapters(url: str, calls: int, rounds: int) -> Rounds:
    """Seconds per round of ``calls`` sequential ``echo`` calls: ``McpClient`` on one session against the adapters'
    default (a session per call), both over Streamable HTTP."""
    peer = _Peer(url)
    try:
        async with our_session("streamable-http", url) as ours:
            await sequential(ours, 5)
            await anyio.to_thread.run_sync(peer.calls, 5)

            async def ours_round() -> float:
                return await sequential(ours, calls)

            async def peer_round() -> float:
                return await anyio.to_thread.run_sync(peer.calls, calls)

            return await interleave_async(ours_round, peer_round, rounds)
    finally:
        peer.close()
