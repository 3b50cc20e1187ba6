"""Figures 5 and 6: the Arrow tools table against plain JSON, and the CLI's cold start against a raw-SDK script."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from knime_mcp.arrow import tools_from_arrow, tools_to_arrow
from knime_mcp.config import ServerSpec
from knime_mcp.tool import MCPTool, ToolAnnotations

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


def synthetic_tools(count: int) -> list[MCPTool]:
    """``count`` tools shaped like real ones: a few typed parameters, an enum, a nested object, annotations."""
    server = ServerSpec(target="http://127.0.0.1:8000/mcp", name="bench")
    tools = []
    for number in range(count):
        schema = {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": f"What to look up, case {number}."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                "order": {"type": "string", "enum": ["asc", "desc"]},
                "filter": {"type": "object", "properties": {"field": {"type": "string"}, "value": {}}},
            },
            "required": ["query"],
        }
        tools.append(
            MCPTool(
                name=f"tool_{number:05d}",
                tool_name=f"tool_{number:05d}",
                title=f"Tool {number}",
                description=f"Searches collection {number} and returns the matching records as JSON.",
                input_schema=schema,
                parameter_schema=schema,
                output_schema={"type": "object", "properties": {"records": {"type": "array"}}},
                annotations=ToolAnnotations(read_only=number % 2 == 0, idempotent=True),
                server=server,
            )
        )
    return tools


def arrow_against_json(count: int, rounds: int) -> tuple[float, float]:
    """Best seconds (tools to Arrow and back, ``json.loads`` of the same tools as JSON text)."""
    tools = synthetic_tools(count)
    payload = json.dumps([tool.to_dict() for tool in tools])
    arrow_times, json_times = [], []
    for _ in range(rounds):
        started = time.perf_counter()
        back = tools_from_arrow(tools_to_arrow(tools))
        arrow_times.append(time.perf_counter() - started)
        started = time.perf_counter()
        json.loads(payload)
        json_times.append(time.perf_counter() - started)
    assert back == tools
    return min(arrow_times), min(json_times)


def _seconds(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def cold_starts(url: str, runs: int, script_dir: Path) -> tuple[float, float, float]:
    """Median seconds of ``knime-mcp tools URL`` and of the raw-SDK script as fresh processes, run in alternating
    order, and the median of the per-pair ratios."""
    script = script_dir / "raw_list_tools.py"
    script.write_text(RAW_LIST_SCRIPT)
    ours_command = [str(Path(sys.executable).with_name("knime-mcp")), "tools", url]
    raw_command = [sys.executable, str(script), url]
    ours, raw = [], []
    for number in range(runs):
        if number % 2:
            raw.append(_seconds(raw_command))
            ours.append(_seconds(ours_command))
        else:
            ours.append(_seconds(ours_command))
            raw.append(_seconds(raw_command))
    ratio = statistics.median(mine / theirs for mine, theirs in zip(ours, raw, strict=True))
    return statistics.median(ours), statistics.median(raw), ratio
