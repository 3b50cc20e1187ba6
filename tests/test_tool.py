"""MCPTool values: converted from the SDK at the boundary, with the specification's defaults for missing hints."""

from __future__ import annotations

import dataclasses

import mcp_types
import pytest

from knime_mcp import MCPTool, ServerSpec, ToolAnnotations
from knime_mcp.errors import ConfigError

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


def test_a_tool_made_by_read_equals_the_constructed_one_and_is_checked_alike() -> None:
    tool = MCPTool.from_sdk(_sdk_tool(mcp_types.ToolAnnotations(idempotent_hint=True)), SERVER)
    values = {field.name: getattr(tool, field.name) for field in dataclasses.fields(MCPTool)}

    assert MCPTool.read(**values) == tool
    assert hash(MCPTool.read(**values)) == hash(tool)
    with pytest.raises(ConfigError, match="The tool has no name"):
        MCPTool.read(**{**values, "name": 7})
    with pytest.raises(dataclasses.FrozenInstanceError):
        MCPTool.read(**values).name = "other"  # type: ignore[misc]


def test_read_without_every_field_is_the_constructor() -> None:
    assert MCPTool.read(name="echo", tool_name="echo", server=SERVER) == MCPTool(
        name="echo", tool_name="echo", server=SERVER
    )
