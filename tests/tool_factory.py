"""Test helper: MCPTool values built directly, with realistic schemas, so shaping tests need no server."""

from __future__ import annotations

import dataclasses
from typing import Any

from knime_mcp.config import ServerSpec
from knime_mcp.seal import seal_spec
from knime_mcp.tools.tool import MCPTool, ToolAnnotations

SERVER = ServerSpec(target="http://127.0.0.1:8000/mcp", name="demo")

ENTITIES_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "entities": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "The name of the entity"},
                    "entityType": {"type": "string", "description": "The type of the entity"},
                    "observations": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["name", "entityType", "observations"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["entities"],
    "$schema": "http://json-schema.org/draft-07/schema#",
}
"""server-memory's ``create_entities``."""


def make_tool(name: str = "echo", input_schema: dict[str, Any] | None = None, **changes: Any) -> MCPTool:
    """A tool of the demo server as a provider on this machine lists it (its server sealed); ``input_schema`` also
    becomes the offered schema, as ``MCPTool.from_sdk`` does."""
    schema = input_schema if input_schema is not None else object_schema(text={"type": "string"})
    values: dict[str, Any] = {
        "name": name,
        "tool_name": name,
        "description": f"The {name} tool.",
        "input_schema": schema,
        "parameter_schema": schema,
        "server": SERVER,
    }
    tool = MCPTool(**{**values, **changes})
    return dataclasses.replace(tool, server=seal_spec(tool.server))


def object_schema(required: tuple[str, ...] = (), **properties: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return schema


def realistic_tools(count: int) -> list[MCPTool]:
    """``count`` tools of two servers, each with five parameters of the kinds real servers use."""
    servers = [SERVER, ServerSpec(target="npx -y @modelcontextprotocol/server-memory", name="memory")]
    return [
        make_tool(
            f"tool_{index}",
            object_schema(
                ("query",),
                query={"type": "string", "description": f"What to look for in collection {index}"},
                limit={"type": "integer", "minimum": 1, "maximum": 100, "default": 10},
                sort={"type": "string", "enum": ["relevance", "date", "name"]},
                include_archived={"type": "boolean", "default": False},
                tags={"type": "array", "items": {"type": "string"}, "description": "Only items with these tags"},
            ),
            title=f"Tool {index}",
            output_schema={"type": "object", "properties": {"hits": {"type": "integer"}}} if index % 3 == 0 else None,
            annotations=ToolAnnotations(read_only=index % 2 == 0, destructive=index % 2 == 1),
            server=servers[index % 2],
            notes=("parameter 'x' dropped: an array is not offered in simple schema mode",) if index % 7 == 0 else (),
        )
        for index in range(count)
    ]
