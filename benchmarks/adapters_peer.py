"""Figure 2's peer side, run in its own venv (``_peers.py``): langchain-mcp-adapters calling the demo server its
default way, timing itself.

``python adapters_peer.py URL`` lists the tools once (``MultiServerMCPClient(...).get_tools()``), then for each line
``N`` read from stdin calls ``echo`` N times through the listed tool (``tool.ainvoke``, which opens a session for
each call: the adapters' default), checks every answer and prints the seconds the N calls took.
"""

from __future__ import annotations

import asyncio
import sys
import time

from langchain_mcp_adapters.client import MultiServerMCPClient


def _text(answer: object) -> str:
    if isinstance(answer, str):
        return answer
    return "".join(part["text"] if isinstance(part, dict) else str(part) for part in answer)  # type: ignore[attr-defined]


async def main(url: str) -> None:
    client = MultiServerMCPClient({"demo": {"transport": "streamable_http", "url": url}})
    echo = next(tool for tool in await client.get_tools() if tool.name == "echo")
    for line in sys.stdin:
        calls = int(line)
        started = time.perf_counter()
        for number in range(calls):
            answer = _text(await echo.ainvoke({"text": f"call {number}"}))
            assert answer == f"call {number}", answer
        print(time.perf_counter() - started, flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
