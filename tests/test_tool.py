"""MCPTool values: converted from the SDK at the boundary, with the specification's defaults for missing hints."""

from __future__ import annotations

import mcp_types

from knime_mcp import MCPTool, ServerSpec, ToolAnnotations

SERVER = ServerSpec(target="http://127.0.0.1:8000/mcp")


def _sdk_tool(annotations: mcp_types.ToolAnnotations | None) -> mcp_types.Tool:
    return mcp_types.Tool(name="t", input_schema={"type": "object"}, annotations=annotations)


def test_missing_annotations_take_the_specifications_defaults() -> None:
    hints = MCPTool.from_sdk(_sdk_tool(None), SERVER).annotations
    assert hints == ToolAnnotations(read_only=False, destructive=True, idempotent=False, open_world=True)


def test_a_read_only_tool_is_never_destructive_and_is_safe_to_retry() -> None:
    hints = MCPTool.from_sdk(_sdk_tool(mcp_types.ToolAnnotations(read_only_hint=True)), SERVER).annotations
    assert (hints.read_only, hints.destructive, hints.retry_safe) == (True, False, True)


def test_a_tool_round_trips_through_its_json_cell_form() -> None:
    tool = MCPTool.from_sdk(_sdk_tool(mcp_types.ToolAnnotations(idempotent_hint=True)), SERVER)
    assert MCPTool.from_json(tool.to_json()) == tool
