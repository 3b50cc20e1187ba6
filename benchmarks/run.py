"""The benchmark figures, each ours against a baseline doing the same work, in interleaved rounds.

    python benchmarks/run.py [--slowdown F] [FIGURE ...]

Starts the demo server over Streamable HTTP and SSE on 127.0.0.1 (stdio servers are started by the clients), prints
each figure as it is measured with every round's ratio, and ends with a Markdown table (machine and date included)
for the README. Each figure alternates rounds of ours and its baseline (at least five, the side going first
alternating too), checks every result, and is judged by its median round (the round whose ratio is the median),
whose own times are the ones printed; the table shows the minimum and that ratio, so a bar is judged against the
noise. Exits 1 when a bar is missed. Arguments choose figures by number (``run.py 5 8``); none: all. ``--slowdown
F`` makes the project's own work F times as long (``_slowdown.py``) and says which figures would have failed.
Method and bars: ``benchmarks/README.md``.
"""

from __future__ import annotations

import contextlib
import datetime
import importlib.metadata
import os
import platform
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
from _agent import agent_figures
from _caller import call_table_rounds, caller_rounds, peak_memory_mb
from _listing import lean_tools, listing_rounds, wire_tools
from _many_servers import many_servers_rounds
from _peers import compare_adapters
from _programs import program_figures
from _registry import registry_figures
from _rounds import Rounds
from _search_figures import search_cost_figures, search_quality_figures
from _servers import DEMO_STDIO, FAST_STDIO, demo_server
from _sessions import compare_concurrent, compare_sequential, compare_sync
from _slowdown import slowed
from _slowed_cli import ENV as SLOWDOWN_ENV
from _startup import cold_starts
from _tasks import task_figures
from _utcp import utcp_figures

from knime_mcp.mcp.client import DEFAULT_MAX_CONCURRENCY

TRANSPORTS = ("stdio", "streamable-http", "sse")
ROUNDS = 7
SEQUENTIAL_CALLS = 300
PER_CALL_BAR = 1.05
"""The issue's goal for a call through our client (and through ``SyncMcpClient``) against the raw SDK."""
ADAPTER_CALLS = 50
ADAPTER_BAR = 15.0
"""Reuse against langchain-mcp-adapters' default (a session per call): at least 15x, the issue's goal (13.1x then)."""
CALLER_ROWS = 2000
CALLER_BAR = 1.6
"""Figure 4, the Tool Caller's per-row client cost against an instant server: 1.32x at load 3, 1.95x with that cost
doubled (``--slowdown 2``); 1.6x lies between (at load 6: 1.76x and 2.62x). The README says why not a call's goal."""
INSTANT_BAR = 1.8
"""Figure 7c, ``call-table``'s: 1.26x-1.62x over the four concurrencies (the issue saw 1.3x-1.8x), 2.05x-2.77x with
that cost doubled; 1.8x lies between at each concurrency."""
COLD_START_BAR = 1.10
BURST = 200
BURST_ROUNDS = 20
"""A burst is short and its rounds scatter widely (0.8x to 1.9x over stdio), so it is measured in more rounds."""
LISTED_TOOLS = 5000
CALL_TABLE_ROWS = 1000
CALL_TABLE_CONCURRENCY = (1, 4, 8, 16)
MEMORY_ROWS = 100_000
MEMORY_BAR = 1.10
MANY_SERVERS = 20


@dataclass(frozen=True)
class Figure:
    number: str
    what: str
    measured: str
    ratio: float
    spread: str
    rounds: str
    bar: str
    met: bool | None
    """None: a figure reported for what it costs, with no bar."""
    unit: str = "x"
    """What ``ratio`` is: ``x`` a ratio to the baseline, else the unit of a value judged by itself."""

    def line(self) -> str:
        verdict = {True: f"{self.bar}: met", False: f"{self.bar}: MISSED", None: self.bar}[self.met]
        value = f"{self.ratio:.2f}{self.unit}" if self.unit == "x" else f"{self.ratio:.3g}{self.unit}"
        return f"{self.number}. {self.what}: {self.measured} -> {value} ({verdict})\n     {self.rounds}"

    def row(self) -> str:
        bar = f"{self.bar} (**missed**)" if self.met is False else self.bar
        return f"| {self.number} | {self.what} | {self.measured} | {self.spread} | {bar} |"


def _judged(number: str, what: str, rounds: Rounds, measured: str, bar: float | None, at_most: bool = True) -> Figure:
    """The figure judged by its median ratio; ``bar`` None: reported for what it costs (the README says why)."""
    spread = f"{min(rounds.ratios):.2f}x / {rounds.ratio:.2f}x"
    if bar is None:
        return Figure(number, what, measured, rounds.ratio, spread, rounds.spread(), "reported, not judged", None)
    shown = round(rounds.ratio, 2)  # judged as printed: "1.05x (≤ 1.05x: MISSED)" would contradict itself
    met = shown <= bar if at_most else shown >= bar
    bar_text = f"{'≤' if at_most else '≥'} {bar:.2f}x"
    return Figure(number, what, measured, rounds.ratio, spread, rounds.spread(), bar_text, met)


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f}"


def sequential_figures(urls: dict[str, str | None]) -> Iterator[Figure]:
    for transport in TRANSPORTS:
        rounds = anyio.run(compare_sequential, transport, urls[transport], SEQUENTIAL_CALLS, ROUNDS * 2)
        ours, raw = rounds.medians(1 / SEQUENTIAL_CALLS)
        measured = f"{_ms(ours)} vs {_ms(raw)} ms/call"
        what = f"{SEQUENTIAL_CALLS} sequential calls vs the raw SDK, {transport}"
        yield _judged("1", what, rounds, measured, PER_CALL_BAR)


def adapters_figure(url: str) -> Iterator[Figure]:
    rounds = anyio.run(compare_adapters, url, ADAPTER_CALLS, ROUNDS)
    what = (
        f"{ADAPTER_CALLS} sequential calls, langchain-mcp-adapters' default (`get_tools()`, a session per call) vs "
        "`McpClient` on one session, Streamable HTTP"
    )
    inverse = Rounds(rounds.base, rounds.ours)
    theirs, ours = inverse.medians(1 / ADAPTER_CALLS)
    yield _judged("2", what, inverse, f"{_ms(theirs)} vs {_ms(ours)} ms/call", ADAPTER_BAR, at_most=False)


def burst_figures(urls: dict[str, str | None]) -> Iterator[Figure]:
    for transport in TRANSPORTS:
        rounds = anyio.run(compare_concurrent, transport, urls[transport], BURST, BURST_ROUNDS)
        ours, raw = rounds.medians()
        what = (
            f"{BURST} concurrent 50 ms calls at default settings (limit {DEFAULT_MAX_CONCURRENCY}) vs the raw SDK "
            f"(all at once), {transport}"
        )
        yield _judged("3", what, rounds, f"{ours:.3f} vs {raw:.3f} s", 1.10)


def caller_figure() -> Iterator[Figure]:
    rounds = caller_rounds(CALLER_ROWS, 8, ROUNDS)
    ours, raw = (seconds / CALLER_ROWS * 1e6 for seconds in rounds.medians())
    what = (
        f"Tool Caller, {CALLER_ROWS:,} rows of an instant tool (`fast_server.py`, stdio), concurrency 8, vs the raw "
        "SDK 8 at a time, each starting its server"
    )
    yield _judged("4", what, rounds, f"{ours:.0f} vs {raw:.0f} µs a row", CALLER_BAR)


def listing_figures() -> Iterator[Figure]:
    """Each direction judged by what the project does against ``json.loads`` of the response; to a table, the
    SDK's parse of the same bytes is shown beside it (its share is the SDK's, not ours to speed up)."""
    whats = (
        "response bytes to the provider's KNIME table",
        "back from the KNIME table",
        "response bytes to the Arrow extension table",
        "back from the Arrow extension table",
    )
    for payload, tools in (("", wire_tools(LISTED_TOOLS)), ("lean ", lean_tools(LISTED_TOOLS))):
        listed = listing_rounds(tools, ROUNDS)
        loads = f"`json.loads` of the {listed.size / 1e6:.2f} MB `tools/list` response"
        numbers = ("5", "5b", "5c", "5d") if not payload else ("5e", "5f", "5g", "5h")
        for number, what, rounds, sdk in zip(numbers, whats, listed.rounds, listed.sdk, strict=True):
            if sdk:
                whole = rounds
                rounds = Rounds([total - parse for total, parse in zip(whole.ours, sdk, strict=True)], whole.base)
                parse_ms = sdk[rounds.middle] * 1000
                ours_ms, base_ms = rounds.medians(1000)
                measured = (
                    f"SDK parse {parse_ms:.0f} ms + ours {ours_ms:.0f} ms vs {base_ms:.0f} ms (that round's whole path "
                    f"{(parse_ms + ours_ms) / base_ms:.1f}x, the SDK's parse alone {parse_ms / base_ms:.1f}x)"
                )
            else:
                ours_ms, base_ms = rounds.medians(1000)
                measured = f"{ours_ms:.0f} vs {base_ms:.0f} ms"
            what = f"{LISTED_TOOLS:,} {payload}tools: {what} vs {loads}"
            yield _judged(number, what, rounds, measured, 3.0)


def cold_start_figure(url: str) -> Iterator[Figure]:
    with tempfile.TemporaryDirectory() as folder:
        rounds = cold_starts(url, ROUNDS, Path(folder))
    ours, raw = rounds.medians()
    what = "cold start of `knime-mcp tools URL` vs a raw-SDK script"
    yield _judged("6", what, rounds, f"{ours:.2f} vs {raw:.2f} s", COLD_START_BAR)


def call_table_figures() -> Iterator[Figure]:
    with tempfile.TemporaryDirectory() as folder:
        # An instant server leaves nothing but the client's own work per row, which the raw loop skips (argument
        # checks, masking, the call record): judged at a bar that doubling that work fails (7c).
        for number, server, which, bar in (
            ("7", DEMO_STDIO, "the demo server", 1.10),
            ("7c", FAST_STDIO, "an instant server", INSTANT_BAR),
        ):
            for concurrency in CALL_TABLE_CONCURRENCY:
                rounds = call_table_rounds(Path(folder), CALL_TABLE_ROWS, concurrency, ROUNDS, server)
                what = (
                    f"`knime-mcp call-table`, {CALL_TABLE_ROWS:,} CSV rows to Parquet, concurrency {concurrency}, "
                    f"{which} over stdio, vs a raw-SDK loop doing the same I/O"
                )
                yield _judged(number, what, rounds, rows_per_second(rounds, CALL_TABLE_ROWS), bar)
        raw, raw_s = peak_memory_mb(Path(folder), MEMORY_ROWS, "raw")
        for number, path, what in (
            ("7b", "cli", "`call-table`"),
            ("7d", "caller", "the Tool Caller (`call_table_sync`, batch by batch as the node runs it)"),
        ):
            ours, ours_s = peak_memory_mb(Path(folder), MEMORY_ROWS, path)
            rounds = Rounds([_slowed_memory(ours, raw)], [raw])
            measured = f"{rounds.ours[0]:.0f} vs {raw:.0f} MB ({ours_s:.0f} s, {raw_s:.0f} s)"
            what = (
                f"{what} peak RSS incl. file I/O, {MEMORY_ROWS:,} rows, vs a raw-SDK loop streaming the same CSV "
                "blocks, fresh processes"
            )
            yield _judged(number, what, rounds, measured, MEMORY_BAR)


def _slowed_memory(ours: float, raw: float) -> float:
    """Under ``--slowdown F``: the raw loop's peak plus F times ours' excess over it, computed (a process's peak is not
    a time to spend again); otherwise ``ours``."""
    factor = float(os.environ.get(SLOWDOWN_ENV) or 1)
    return raw + factor * (ours - raw)


def rows_per_second(rounds: Rounds, rows: int) -> str:
    """The median round's rows a second on each side, and what ours took a row more (the ratio is their inverse)."""
    ours, raw = (rows / seconds for seconds in rounds.medians())
    return f"{ours:,.0f} vs {raw:,.0f} rows/s ({(1 / ours - 1 / raw) * 1e6:+.0f} µs a row)"


def sync_figures(urls: dict[str, str | None]) -> Iterator[Figure]:
    for transport in TRANSPORTS:
        rounds = anyio.run(compare_sync, transport, urls[transport], SEQUENTIAL_CALLS, ROUNDS * 2)
        ours, base = rounds.medians(1 / SEQUENTIAL_CALLS)
        what = f"`SyncMcpClient`, {SEQUENTIAL_CALLS} sequential calls from a thread vs the raw SDK, {transport}"
        yield _judged("8", what, rounds, f"{_ms(ours)} vs {_ms(base)} ms/call", PER_CALL_BAR)


def many_servers_figure() -> Iterator[Figure]:
    rounds = many_servers_rounds(MANY_SERVERS, ROUNDS)
    ours, one = rounds.medians()
    what = f"`list_servers_tools` over {MANY_SERVERS} servers that answer after 200 ms vs one of them"
    yield _judged("11", what, rounds, f"{ours:.2f} vs {one:.2f} s (one after the other: {MANY_SERVERS}x)", 2.0)


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    info = Path("/proc/cpuinfo")
    if info.exists():
        names = [line.split(":", 1)[1].strip() for line in info.read_text().splitlines() if "model name" in line]
        cpu = names[0] if names else cpu
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (
        f"{cpu}, {cores} cores, {platform.system()} {platform.release()}, Python {platform.python_version()}, "
        f"mcp {importlib.metadata.version('mcp')}"
    )


def _figures(chosen: set[str]) -> Iterator[Figure]:
    with demo_server("streamable-http") as http_url, demo_server("sse") as sse_url:
        urls: dict[str, str | None] = {"stdio": None, "streamable-http": http_url, "sse": sse_url}
        groups: dict[str, Callable[[], Iterator[Figure]]] = {
            "1": lambda: sequential_figures(urls),
            "2": lambda: adapters_figure(http_url),
            "3": lambda: burst_figures(urls),
            "4": caller_figure,
            "5": listing_figures,
            "6": lambda: cold_start_figure(http_url),
            "7": call_table_figures,
            "8": lambda: sync_figures(urls),
            "9": lambda: search_quality_figures(Figure),
            "10": lambda: search_cost_figures(Figure, _judged, ROUNDS),
            "11": many_servers_figure,
            "12": lambda: agent_figures(_judged, http_url, ROUNDS),
            "13": lambda: task_figures(Figure, ROUNDS),
            "14": lambda: program_figures(_judged, ROUNDS * 2),
            "15": lambda: utcp_figures(_judged, ROUNDS * 2),
            "16": lambda: registry_figures(_judged, ROUNDS * 2),
        }
        for number, figures in groups.items():
            if not chosen or number in chosen:
                yield from figures()


def main(argv: list[str]) -> int:
    factor = None
    if argv[:1] == ["--slowdown"]:
        factor, argv = float(argv[1]), argv[2:]
        os.environ[SLOWDOWN_ENV] = str(factor)
    started = datetime.datetime.now(datetime.UTC)
    machine = _machine()
    print(f"knime-mcp benchmarks, {started:%Y-%m-%d %H:%M} UTC\nmachine: {machine}\n", flush=True)
    if factor:
        print(f"--slowdown {factor:g}: the project's own work made {factor:g}x as long (benchmarks/_slowdown.py)\n")
    figures = []
    with slowed(factor) if factor else contextlib.nullcontext():
        for figure in _figures(set(argv)):
            print(figure.line(), flush=True)
            figures.append(figure)
    seconds = (datetime.datetime.now(datetime.UTC) - started).total_seconds()
    if factor:
        print(f"\nWith the project's own work {factor:g}x as long ({seconds:.0f} s, load {_load()}):\n")
        print("\n".join(_sensitivity(figure) for figure in figures))
        return 0
    print(f"\nResults of {started:%Y-%m-%d} on {machine} ({seconds:.0f} s, load {_load()}):\n")
    print("| # | figure | ours vs baseline (median round) | ratio: min / median round | bar |\n|---|---|---|---|---|")
    print("\n".join(figure.row() for figure in figures))
    return 1 if any(figure.met is False for figure in figures) else 0


def _sensitivity(figure: Figure) -> str:
    verdict = {True: "passes: blind to it", False: "fails", None: "not judged"}[figure.met]
    value = f"{figure.ratio:.2f}{figure.unit}" if figure.unit == "x" else f"{figure.ratio:.3g}{figure.unit}"
    return f"- {figure.number} ({figure.what}): {value} against {figure.bar}: {verdict}"


def _load() -> str:
    """The load averages (1, 5 and 15 minutes) at the end of the run: absolute times mean little without them."""
    return " ".join(f"{load:.1f}" for load in os.getloadavg())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
