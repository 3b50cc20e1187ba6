"""Figure 5: listing 5,000 tools, from the bytes the server sent to the table the MCP Tool Provider writes, and back.

The baseline is ``json.loads`` of the same ``tools/list`` response, as the server sent it: the least any client must
do with those bytes. Ours starts from those bytes too: the SDK's own parse (the JSON-RPC message, then
``ListToolsResult``, as ``ClientSession.list_tools`` does), then what the provider does: tools converted from the SDK,
filtered, their schemas shaped, named, sealed, and written in the KNIME form (``tools_to_table``: "MCP Tool" as JSON
text), and in the Arrow extension form the CLI writes (``tools_to_arrow``). Back is what the Tool Caller and the
Agent Prompter do with the table (``tools_from_arrow``). Each side to a table times the SDK's parse and the rest
apart, so a figure shows both and judges what the project does. Two payloads: tools shaped like real ones, and lean
tools (a name and a small schema), where the cost per tool dominates. Both sides start from the same
garbage-collector state (:func:`_rounds.timed`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mcp_types
from _rounds import Rounds, interleave, timed
from mcp_types import jsonrpc_message_adapter

from knime_mcp.calls.listing import ToolListing, shape_tools
from knime_mcp.config import ServerSpec
from knime_mcp.seal import seal_spec
from knime_mcp.tools.arrow import tools_from_arrow, tools_to_arrow, tools_to_table
from knime_mcp.tools.tool import MCPTool


def wire_tools(count: int) -> list[dict[str, Any]]:
    """``count`` tools shaped like real ones: a few typed parameters, an enum, a nested object, annotations."""
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
            {
                "name": f"tool_{number:05d}",
                "title": f"Tool {number}",
                "description": f"Searches collection {number} and returns the matching records as JSON.",
                "inputSchema": schema,
                "outputSchema": {"type": "object", "properties": {"records": {"type": "array"}}},
                "annotations": {"readOnlyHint": number % 2 == 0, "idempotentHint": True},
            }
        )
    return tools


def lean_tools(count: int) -> list[dict[str, Any]]:
    """``count`` tools with little to each: a name, a line of description, one string parameter."""
    schema = {"type": "object", "properties": {"id": {"type": "string"}}}
    return [{"name": f"get_{n:05d}", "description": "Gets one item.", "inputSchema": schema} for n in range(count)]


def wire_payload(tools: list[dict[str, Any]]) -> bytes:
    """The ``tools/list`` response as an SDK server writes it: compact JSON, camelCase, no nulls."""
    result = mcp_types.ListToolsResult.model_validate({"tools": tools})
    body = {"jsonrpc": "2.0", "id": 2, "result": result.model_dump(mode="json", by_alias=True, exclude_none=True)}
    return json.dumps(body, separators=(",", ":")).encode()


def _listing(result: mcp_types.ListToolsResult, server: ServerSpec) -> ToolListing:
    """What the client and the provider do with the SDK's result (``McpClient.list_tools``, ``shape_tools``)."""
    return shape_tools([MCPTool.from_sdk(tool, server) for tool in result.tools])


def sdk_parse(payload: bytes) -> mcp_types.ListToolsResult:
    """What the SDK does with a ``tools/list`` response's bytes: the JSON-RPC message, then its result."""
    message = jsonrpc_message_adapter.validate_json(payload, by_name=False)
    return mcp_types.ListToolsResult.model_validate(message.result, by_name=False)  # type: ignore[union-attr]


@dataclass(frozen=True)
class Listed:
    """The listing figures of one payload: its size, and per direction the rounds of ours against ``json.loads``;
    to a table, ``sdk`` holds the seconds of the SDK's parse within each round of ours."""

    size: int
    rounds: list[Rounds]
    sdk: list[list[float]]


def listing_rounds(tools: list[dict[str, Any]], rounds: int) -> Listed:
    """Rounds of: to the KNIME table, back from it, to the Arrow extension table, back from it, each against
    ``json.loads`` of the payload; every result is checked against the tools listed."""
    payload = wire_payload(tools)
    server = seal_spec(ServerSpec(target="http://127.0.0.1:8000/mcp", name="bench"))
    expected = _listing(sdk_parse(payload), server).tools
    assert len(expected) == len(tools)
    written: dict[str, Any] = {}
    sdk: dict[str, list[float]] = {"knime": [], "arrow": []}

    def to(form: str, write: Callable[[list[MCPTool]], Any]) -> Callable[[], float]:
        def side() -> float:
            parsed: list[mcp_types.ListToolsResult] = []
            parse = timed(lambda: parsed.append(sdk_parse(payload)))
            rest = timed(lambda: written.__setitem__(form, write(_listing(parsed[0], server).tools)))
            sdk[form].append(parse)
            assert tools_from_arrow(written[form]) == expected
            return parse + rest

        return side

    def back(form: str) -> Callable[[], float]:
        def side() -> float:
            tools: list[MCPTool] = []
            seconds = timed(lambda: tools.extend(tools_from_arrow(written[form])))
            assert tools == expected and all(tool.server.seal for tool in tools)
            return seconds

        return side

    def loads() -> float:
        parsed: list[Any] = []
        seconds = timed(lambda: parsed.append(json.loads(payload)))
        assert len(parsed[0]["result"]["tools"]) == len(tools)
        return seconds

    sides = [to("knime", tools_to_table), back("knime"), to("arrow", tools_to_arrow), back("arrow")]
    for side in (*sides, loads):
        side()  # warm: first uses read the seal key and fill caches
    for parses in sdk.values():
        parses.clear()
    measured = [interleave(side, loads, rounds) for side in sides]
    return Listed(len(payload), measured, [sdk["knime"], [], sdk["arrow"], []])
