"""MCPTool: one server tool as this project's own frozen value, converted from the SDK at the boundary.

``name`` is what tables and models see (unique in its table, possibly prefixed or sanitised); ``tool_name`` is the
server's own name, used for the call. SDK models never travel further than :meth:`MCPTool.from_sdk`.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

import mcp_types

from knime_mcp.config import ServerSpec

__all__ = ["TASK_REQUIRED_NOTE", "MCPTool", "TaskSupport", "ToolAnnotations"]

TaskSupport = Literal["forbidden", "optional", "required"]
"""A tool's ``execution.taskSupport``: whether it may, or must, run as an MCP task; absent means ``forbidden``."""

TASK_REQUIRED_NOTE = (
    "runs only as an MCP task (execution.taskSupport 'required'), which knime-mcp cannot run yet: the agent does not "
    "offer it and calls of it are refused"
)


@dataclass(frozen=True, kw_only=True)
class ToolAnnotations:
    """Behaviour hints, with the MCP specification's defaults for hints a server leaves out."""

    read_only: bool = False
    destructive: bool = True
    idempotent: bool = False
    open_world: bool = True

    annotated: bool = False
    """Whether the server sent at least one behaviour hint. Without any, the values above are only the spec's
    defaults (a destructive tool), which most FastMCP and ``mcp`` 1.x servers leave every tool with."""

    @property
    def retry_safe(self) -> bool:
        """Whether repeating a call cannot change more than the first call did."""
        return self.read_only or self.idempotent

    @property
    def concurrency_safe(self) -> bool:
        """Whether calls may overlap: a tool that only reads, or whose repeats change nothing and destroy nothing.
        Overlapping calls of a tool that writes can overwrite each other (a read-modify-write of one file)."""
        return self.read_only or (self.idempotent and not self.destructive)

    @classmethod
    def from_sdk(cls, hints: mcp_types.ToolAnnotations | None) -> ToolAnnotations:
        if hints is None or all(
            hint is None
            for hint in (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint, hints.open_world_hint)
        ):
            return cls()
        default = cls()
        read_only = _or(hints.read_only_hint, default.read_only)
        return cls(
            read_only=read_only,
            # The spec gives destructive/idempotent meaning only for tools that write.
            destructive=False if read_only else _or(hints.destructive_hint, default.destructive),
            idempotent=_or(hints.idempotent_hint, default.idempotent),
            open_world=_or(hints.open_world_hint, default.open_world),
            annotated=True,
        )


def _or(value: bool | None, default: bool) -> bool:
    return default if value is None else value


@dataclass(frozen=True, kw_only=True)
class MCPTool:
    """A tool of an MCP server, ready to be offered to a model or called row by row.

    tools = await client.list_tools()
    result = await client.call_tool(tools[0].tool_name, {"text": "hi"})
    """

    name: str
    """Unique name in its table; what a model is offered."""

    tool_name: str
    """The server's own name for the tool, sent with every call."""

    title: str | None = None
    description: str = ""

    input_schema: dict[str, Any] = field(default_factory=dict)
    """The JSON Schema of the arguments exactly as the server sent it; arguments are validated against it."""

    parameter_schema: dict[str, Any] = field(default_factory=dict)
    """The schema a model is offered, after the schema mode (``full`` keeps it, ``simple`` flattens it)."""

    output_schema: dict[str, Any] | None = None
    annotations: ToolAnnotations = field(default_factory=ToolAnnotations)
    server: ServerSpec

    notes: tuple[str, ...] = ()
    """What shaping changed, e.g. parameters dropped by the ``simple`` schema mode."""

    task_support: TaskSupport = "forbidden"
    """Whether the tool may (``optional``) or must (``required``) run as an MCP task."""

    @property
    def task_required(self) -> bool:
        """A tool that can only run as an MCP task, which this client cannot run yet."""
        return self.task_support == "required"

    def __hash__(self) -> int:
        return hash((self.name, self.tool_name, self.server))

    @classmethod
    def from_sdk(cls, tool: mcp_types.Tool, server: ServerSpec) -> MCPTool:
        title = tool.title or (tool.annotations.title if tool.annotations else None)
        task_support = (tool.execution.task_support if tool.execution else None) or "forbidden"
        return cls(
            name=tool.name,
            tool_name=tool.name,
            title=title,
            description=tool.description or "",
            input_schema=tool.input_schema,
            parameter_schema=tool.input_schema,
            output_schema=tool.output_schema,
            annotations=ToolAnnotations.from_sdk(tool.annotations),
            server=server,
            notes=(TASK_REQUIRED_NOTE,) if task_support == "required" else (),
            task_support=task_support,
        )

    def with_changes(self, **changes: Any) -> MCPTool:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "tool_name": self.tool_name,
            "title": self.title,
            "description": self.description,
            "input_schema": self.input_schema,
            "parameter_schema": self.parameter_schema,
            "output_schema": self.output_schema,
            "annotations": asdict(self.annotations),
            "server": self.server.to_dict(),
            "notes": list(self.notes),
            "task_support": self.task_support,
        }

    def to_json(self) -> str:
        """The form a KNIME table cell holds (a pure-Python extension cannot add a column type)."""
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MCPTool:
        return cls(
            name=data["name"],
            tool_name=data["tool_name"],
            title=data.get("title"),
            description=data.get("description") or "",
            input_schema=data.get("input_schema") or {},
            parameter_schema=data.get("parameter_schema") or {},
            output_schema=data.get("output_schema"),
            # A table written before "annotated" existed cannot tell a tool without hints from one whose hints equal
            # the defaults, so it keeps the hints' face value (a destructive tool stays blocked).
            annotations=ToolAnnotations(**{"annotated": True, **(data.get("annotations") or {})}),
            server=ServerSpec.from_dict(data["server"]),
            notes=tuple(data.get("notes") or ()),
            task_support=data.get("task_support") or "forbidden",
        )

    @classmethod
    def from_json(cls, text: str) -> MCPTool:
        return cls.from_dict(json.loads(text))
