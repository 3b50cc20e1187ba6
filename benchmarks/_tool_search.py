"""Figures 9 and 10: the agent's tool search over the corpus of real tool lists: how well it finds the tool a task
needs, and what it costs at 10,000 tools.

Quality (9): each task of ``tasks.json`` names a job in a user's words (never the tool's name) and the tool(s) of one
server family that do it. The search is asked the task and judged by recall at the hits the agent's search tool
returns (:data:`~knime_mcp.agent.tool_search.DEFAULT_RESULTS`: an expected tool among them), shown beside recall@5,
and MRR (one over the rank of the first expected tool within the first ten; 0 past them). The baseline is
what the agent offers without search: the first 128 tools in table order, fewer where their specs pass 200,000 bytes
(the toolset's caps); its recall is whether an expected tool is among them. On the real corpus (each server once,
under its key) the expected tool is that family's. On the scaled corpus (:mod:`_corpus`: copies of every server) the
task is aimed at ONE copy: the copy's word is added to the task (``…, for Initech``) and only that copy's tool counts;
the hit rate on any copy is shown beside it, not judged.

Cost (10): building the index for 10,000 tools against ``json.loads`` of the same tools' ``tools/list`` response
(interleaved rounds), its peak memory (tracemalloc, in a fresh process) against that of the same ``json.loads``,
one search's time (as many hits as the search tool returns; the median of every task's query, several times
over), and the bytes of tool specs a model turn
carries in search mode (the search tool and the tools found) against offering all 10,000.
"""

from __future__ import annotations

import itertools
import json
import re
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
from _corpus import Listed, copies, copy_word, corpus, listed
from _listing import wire_payload
from _rounds import Rounds, interleave, timed

from knime_mcp.agent.config import MAX_OFFERED_SPEC_BYTES, MAX_OFFERED_TOOLS, ToolBudget
from knime_mcp.agent.tool_offer import SEARCH_TOOL, ToolOffer, spec_bytes, tool_spec
from knime_mcp.agent.tool_search import DEFAULT_RESULTS, ToolIndex
from knime_mcp.calls.dispatch import LocalTool
from knime_mcp.tools.fences import new_fence
from knime_mcp.tools.names import ToolNameMap
from knime_mcp.tools.tool import MCPTool

TASKS = Path(__file__).with_name("tasks.json")
RECALL_AT = DEFAULT_RESULTS
"""Hits judged: as many as the agent's search tool returns."""
FIRST_FIVE = 5
MRR_DEPTH = 10
SEARCH_REPEATS = 5
"""Every task's query is searched this many times for the search's median time."""


@dataclass(frozen=True)
class Task:
    text: str
    family: str
    expected: tuple[str, ...]
    """The server's own names of the tools that do the job."""


GENERIC_WORDS = frozenset({"a", "api", "file", "files", "page"})
"""Words of tool names a task may use all the same: nouns a person cannot avoid for the thing itself."""


def tasks(path: Path = TASKS) -> list[Task]:
    """The tasks, each checked to name no word of its expected tools' names (but :data:`GENERIC_WORDS`)."""
    chosen = [Task(task["task"], task["family"], tuple(task["expected"])) for task in json.loads(path.read_text())]
    for task in chosen:
        words = set(re.findall(r"[a-z0-9]+", task.text.lower()))
        named = {word for name in task.expected for word in re.split(r"[_\-]+", name.lower())} - GENERIC_WORDS
        assert not words & named, f"task {task.text!r} names its tool ({sorted(words & named)})"
    return chosen


@dataclass(frozen=True)
class Aimed:
    """A task as asked of one corpus: the query and the server (by key) whose tool counts."""

    task: Task
    query: str
    key: str


def aimed_at_real(chosen: Sequence[Task]) -> list[Aimed]:
    return [Aimed(task, task.text, task.family) for task in chosen]


def aimed_at_copies(chosen: Sequence[Task], listing: Listed) -> list[Aimed]:
    """Each task aimed at one copy of its family, the copies taken in turn; only copies listed whole count."""
    families, keys = set(listing.families), set(listing.keys)
    words = (copy_word(number) for number in itertools.count())
    present = list(itertools.takewhile(lambda word: all(f"{family}_{word}" in keys for family in families), words))
    whole = present[:-1] if listing.keys[-1].endswith(f"_{present[-1]}") else present  # the last may be cut short
    aimed = []
    for number, task in enumerate(chosen):
        word = whole[number % len(whole)]
        aimed.append(Aimed(task, f"{task.text}, for {word.capitalize()}", f"{task.family}_{word}"))
    return aimed


@dataclass(frozen=True)
class Score:
    """One group of tasks' results."""

    count: int
    recall: float
    """recall@RECALL_AT of the search: the share of tasks with an expected tool among the hits the search tool
    returns."""
    recall_at_5: float
    mrr: float
    baseline: float
    """The share of tasks with an expected tool among the tools offered without search."""
    any_copy: float
    """recall@RECALL_AT counting an expected tool of any copy of the family (``recall`` on the real corpus)."""


@dataclass(frozen=True)
class Quality:
    overall: Score
    families: dict[str, Score]


def offered_without_search(tools: Sequence[MCPTool]) -> list[MCPTool]:
    """The tools the agent offered before search: the first 128, fewer where their specs pass 200,000 bytes."""
    fence = new_fence()
    total = 0
    for count, tool in enumerate(tools[:MAX_OFFERED_TOOLS]):
        total += spec_bytes(tool_spec(tool.name, tool, fence))
        if total > MAX_OFFERED_SPEC_BYTES:
            return list(tools[:count])
    return list(tools[:MAX_OFFERED_TOOLS])


def build_index(tools: Sequence[MCPTool]) -> ToolIndex:
    return ToolIndex((tool.name, tool) for tool in tools)


def quality(listing: Listed, aimed: Sequence[Aimed]) -> Quality:
    """recall@RECALL_AT, recall@5, MRR and the baseline's recall, overall and per family."""
    family_of = dict(zip(listing.keys, listing.families, strict=True))
    known = {(family_of[tool.server.name or ""], tool.tool_name) for tool in listing.tools}
    unknown = {(one.task.family, name) for one in aimed for name in one.task.expected} - known
    assert not unknown, f"tasks expect tools the corpus does not hold: {sorted(unknown)}"
    index = build_index(listing.tools)
    offered = {(tool.server.name, tool.tool_name) for tool in offered_without_search(listing.tools)}
    rows: dict[str, list[tuple[float, ...]]] = {}
    for one in aimed:
        hits = [hit.tool for hit in index.search(one.query, limit=MRR_DEPTH)]
        wanted = [tool.server.name == one.key and tool.tool_name in one.task.expected for tool in hits]
        any_copy = [
            family_of.get(tool.server.name or "") == one.task.family and tool.tool_name in one.task.expected
            for tool in hits
        ]
        rank = wanted.index(True) + 1 if True in wanted else None
        baseline = any((one.key, name) in offered for name in one.task.expected)
        row = (float(rank is not None and rank <= RECALL_AT), float(rank is not None and rank <= FIRST_FIVE),
               1 / rank if rank else 0.0, float(baseline), float(True in any_copy[:RECALL_AT]))  # fmt: skip
        rows.setdefault(one.task.family, []).append(row)
    everything = [row for family in rows.values() for row in family]
    return Quality(_score(everything), {family: _score(found) for family, found in sorted(rows.items())})


def _score(rows: list[tuple[float, ...]]) -> Score:
    recall, recall_at_5, mrr, baseline, any_copy = (statistics.fmean(column) for column in zip(*rows, strict=True))
    return Score(len(rows), recall, recall_at_5, mrr, baseline, any_copy)


def scaled(count: int) -> tuple[Listed, bytes]:
    """The scaled corpus as the agent sees it, and its tools' ``tools/list`` response as one server would send it."""
    servers = list(copies(corpus(), count))
    return listed(servers), wire_payload([tool for server in servers for tool in server.tools])


def build_rounds(listing: Listed, payload: bytes, rounds: int) -> Rounds:
    """Building the index against ``json.loads`` of the same tools' response."""

    def build() -> float:
        built: list[ToolIndex] = []
        seconds = timed(lambda: built.append(build_index(listing.tools)))
        assert built[0].search("create an issue", limit=1), "the index finds nothing"
        return seconds

    def loads() -> float:
        parsed: list[dict[str, object]] = []
        seconds = timed(lambda: parsed.append(json.loads(payload)))
        assert len(parsed[0]["result"]["tools"]) == len(listing.tools)  # type: ignore[index, arg-type]
        return seconds

    build(), loads()
    return interleave(build, loads, rounds)


def search_seconds(listing: Listed, queries: Sequence[str]) -> list[float]:
    """Seconds of each search (:data:`RECALL_AT` hits) of every query, ``SEARCH_REPEATS`` times over, on one index."""
    index = build_index(listing.tools)
    seconds = []
    for _ in range(SEARCH_REPEATS):
        for query in queries:
            started = time.perf_counter()
            hits = index.search(query, limit=RECALL_AT)
            seconds.append(time.perf_counter() - started)
            assert hits, query
    return seconds


def peak_megabytes(count: int) -> tuple[float, float]:
    """Peak traced MB of building the index for ``count`` tools and of ``json.loads`` of their response, measured
    in a fresh process (the corpus is made before tracing starts)."""
    script = f"import _tool_search as bench; print(*bench.traced_peaks({count}))"
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=Path(__file__).parent, capture_output=True, text=True, check=True
    )
    index_mb, loads_mb = (float(value) for value in done.stdout.split())
    return index_mb, loads_mb


def traced_peaks(count: int) -> tuple[float, float]:
    listing, payload = scaled(count)
    peaks = []
    for work in (lambda: build_index(listing.tools), lambda: json.loads(payload)):
        tracemalloc.start()
        kept = work()
        peaks.append(tracemalloc.get_traced_memory()[1] / 1e6)
        tracemalloc.stop()
        del kept
    return peaks[0], peaks[1]


@dataclass(frozen=True)
class TurnBytes:
    search_mode: int
    """What the agent's tool offer sends after one search: the search tool's spec and the found tools' specs."""
    found: int
    everything: int
    """Every tool's spec, as offering them all would send."""
    first_offered: int
    """The offer before search existed (128 tools or 200 KB)."""


def turn_bytes(listing: Listed, query: str) -> TurnBytes:
    """Spec bytes per model turn: the agent's offer (:class:`ToolOffer` at its default budget) after searching
    ``query``, against offering every tool, and against the first tools only."""
    fence = new_fence()
    offer = ToolOffer(listing.tools, fence, ToolBudget())
    assert offer.offered == [SEARCH_TOOL], f"not the search tool alone: {offer.offered[:5]}"
    search = offer.resolve(SEARCH_TOOL)
    assert isinstance(search, LocalTool)
    result = anyio.run(search.run, {"query": query})
    found = len((result.structured or {})["tools"])
    assert found and len(offer.offered) == 1 + found, (query, offer.offered)
    named = ToolNameMap([(tool.name, tool) for tool in listing.tools]).items()
    return TurnBytes(
        sum(spec_bytes(spec) for spec in offer.specs),
        found,
        sum(spec_bytes(tool_spec(name, tool, fence)) for name, tool in named),
        sum(spec_bytes(tool_spec(tool.name, tool, fence)) for tool in offered_without_search(listing.tools)),
    )
