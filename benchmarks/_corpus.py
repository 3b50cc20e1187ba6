"""The corpus of real tool lists (``benchmarks/corpus/``, made by ``capture_corpus.py``), as the agent sees it, and
scaled to many servers.

Each file holds one published server's ``tools/list`` result as it sent it. :func:`real_tools` makes them the
product's tools the way a pasted configuration does: the SDK's ``Tool`` objects, then
:func:`~knime_mcp.mcp.tool_listing.listed_tools` and :func:`~knime_mcp.calls.listing.shape_tools` with the server's
key as the prefix (``github_create_issue``), so names are the names the model sees. :func:`copies` makes
copies of every real server as distinct servers, as a company would connect the same kind of server once per team or
customer: copy ``acme`` of ``github`` is the server ``github_acme``, its tools named ``github_acme_create_issue``,
descriptions and schemas kept. Copies go in rounds (every server's ``acme`` copy, then every ``initech`` copy, …) in
the corpus's order (alphabetical by key) until the count is reached, the words numbered once they run out
(``acme2``); the last copy is cut short to hit the count exactly. Deterministic: the same corpus gives the same
tools in the same order (:func:`listed` makes them the agent's tools).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import mcp_types

from knime_mcp.calls.listing import shape_tools
from knime_mcp.config import ServerSpec
from knime_mcp.mcp.tool_listing import listed_tools
from knime_mcp.tools.tool import MCPTool

CORPUS = Path(__file__).with_name("corpus")

COPIES = (
    "acme initech globex umbrella hooli stark wayne wonka tyrell cyberdyne soylent aperture oscorp gringotts "
    "monarch vandelay dunder pied nakatomi massive duff krusty sirius weyland ollivander zorg virtucon "
    "bluth prestige sterling"
).split()
"""The words telling copies apart: the key of copy ``acme`` of server ``github`` is ``github_acme``."""


@dataclass(frozen=True)
class Served:
    """One server's listing: its configuration key, the published package it came from, and its raw tools."""

    key: str
    family: str
    """The published server it is (or is a copy of): the key of its corpus file."""
    package: str
    version: str
    tools: list[dict[str, Any]]
    registry: str = "npm"

    @property
    def command(self) -> str:
        """How a pasted configuration would start it."""
        return f"{'npx -y' if self.registry == 'npm' else 'uvx'} {self.package}"


def corpus(folder: Path = CORPUS) -> list[Served]:
    """The real servers, in the order of their keys."""
    served = []
    for path in sorted(folder.glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        key, package, version, tools = record["key"], record["package"], record["version"], record["tools"]
        served.append(Served(key, key, package, version, tools, record["registry"]))
    return served


def agent_tools(server: Served) -> list[MCPTool]:
    """The server's tools as the product lists them from a pasted configuration under its key."""
    spec = ServerSpec(target=server.command, name=server.key)
    sdk_tools = [mcp_types.Tool.model_validate(tool) for tool in server.tools]
    return shape_tools(listed_tools(sdk_tools, spec).tools, prefix=server.key).tools


def copy_word(round_number: int) -> str:
    """The word of a round's copies: :data:`COPIES` in turn, numbered from their second use on (``acme2``)."""
    word = COPIES[round_number % len(COPIES)]
    return word if round_number < len(COPIES) else f"{word}{round_number // len(COPIES) + 1}"


def copies(real: list[Served], count: int) -> Iterator[Served]:
    """Copies of the real servers, round after round, ``count`` tools in all (the last copy cut short)."""
    if not any(server.tools for server in real):
        raise ValueError("the corpus holds no tools")
    left, round_number = count, 0
    while left > 0:
        word = copy_word(round_number)
        for server in real:
            tools = server.tools[:left]
            left -= len(tools)
            yield replace(server, key=f"{server.key}_{word}", tools=tools)
            if left <= 0:
                return
        round_number += 1


@dataclass(frozen=True)
class Listed:
    """Tools in table order, each with the family and key of the server it came from."""

    tools: list[MCPTool]
    families: list[str]
    keys: list[str]


def listed(servers: Iterator[Served] | list[Served]) -> Listed:
    tools: list[MCPTool] = []
    families: list[str] = []
    keys: list[str] = []
    for server in servers:
        shaped = agent_tools(server)
        tools += shaped
        families += [server.family] * len(shaped)
        keys += [server.key] * len(shaped)
    return Listed(tools, families, keys)


def real_tools(folder: Path = CORPUS) -> Listed:
    return listed(corpus(folder))
