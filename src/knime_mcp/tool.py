"""MCPTool: one server tool as this project's own frozen value, converted from the SDK at the boundary.

``name`` is what tables and models see (unique in its table, possibly prefixed or sanitised); ``tool_name`` is the
server's own name, used for the call. SDK models never travel further than :meth:`MCPTool.from_sdk`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Literal, get_args

import mcp_types

from knime_mcp.config import ServerSpec
from knime_mcp.errors import ConfigError
from knime_mcp.seal import seal_spec, tool_seal, tool_seal_fits

__all__ = [
    "TASK_REQUIRED_NOTE",
    "MCPTool",
    "TableServers",
    "TaskSupport",
    "ToolAnnotations",
    "policy_facts",
    "server_from_table",
    "server_to_table",
    "server_to_table_json",
]

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

    def __post_init__(self) -> None:
        """A table may hold anything here; a hint such as ``"no"`` would count as true in the tool policy."""
        if wrong := [name for name in _HINTS if not isinstance(getattr(self, name), bool)]:
            raise ConfigError(f"The annotation {wrong[0]!r} is not true or false.")

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


_HINTS = tuple(hint.name for hint in fields(ToolAnnotations))


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

    def __post_init__(self) -> None:
        """A tool read from a table may hold anything; what is wrong is named now, not as a TypeError in a run."""
        if not isinstance(self.name, str) or not self.name:
            raise ConfigError("The tool has no name.")
        texts = {"tool_name": self.tool_name, "description": self.description}
        texts["title"] = "" if self.title is None else self.title
        if wrong := [field for field, value in texts.items() if not isinstance(value, str)]:
            raise ConfigError(f"The {wrong[0]} of tool {self.name!r} is not text.")
        if not self.tool_name:
            raise ConfigError(f"Tool {self.name!r} has no tool_name, the server's name for it.")
        if self.task_support not in get_args(TaskSupport):
            raise ConfigError(
                f"The task_support of tool {self.name!r} is {self.task_support!r}; "
                f"use one of {', '.join(get_args(TaskSupport))}."
            )

    @property
    def policy_facts(self) -> str:
        """What the tool policy and the task check read, as a table's seal covers it (:func:`policy_facts`)."""
        return policy_facts(self.name, self.tool_name, self.annotations, self.task_support)

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
            "server": server_to_table(self.server),
            "notes": list(self.notes),
            "task_support": self.task_support,
            "seal": tool_seal(self.server, self.policy_facts),
        }

    def to_json(self) -> str:
        """The form a KNIME table cell holds (a pure-Python extension cannot add a column type)."""
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_dict(cls, data: dict[str, Any], servers: TableServers | None = None) -> MCPTool:
        """The tool as a table holds it; its server counts as chosen by a person only if the tool's seal fits.
        ``servers``: those of the table read so far, shared by its rows."""
        unsealed, sealed = (servers or TableServers()).read(json.dumps(data["server"], sort_keys=True))
        tool = cls(
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
            server=unsealed,
            notes=tuple(data.get("notes") or ()),
            task_support=data.get("task_support") or "forbidden",
        )
        seal = data.get("seal")
        if seal is not None and not isinstance(seal, str):
            raise ConfigError(f"The seal of tool {tool.name!r} is not text.")
        return replace(tool, server=sealed) if tool_seal_fits(unsealed, tool.policy_facts, seal) else tool

    @classmethod
    def from_json(cls, text: str, servers: TableServers | None = None) -> MCPTool:
        return cls.from_dict(json.loads(text), servers)


class TableServers:
    """The servers of one table being read, each parsed and sealed once: a table lists thousands of tools of a few
    servers, and a server's identity (what a seal covers) takes a while to compute."""

    def __init__(self) -> None:
        self._read: dict[str, tuple[ServerSpec, ServerSpec]] = {}

    def read(self, text: str) -> tuple[ServerSpec, ServerSpec]:
        """The server whose JSON a table holds as ``text``: unsealed, and sealed here (for a tool whose seal fits)."""
        if text not in self._read:
            spec = server_from_table(json.loads(text))
            self._read[text] = (spec, seal_spec(spec))
        return self._read[text]


def policy_facts(name: str, tool_name: str, annotations: ToolAnnotations, task_support: str) -> str:
    """The fields of a tool that decide whether it may be called, as JSON: what a table's seal covers besides the
    server, so that editing a sealed tool's name or annotations cannot get it past the destructive-tool block."""
    hints = [getattr(annotations, hint) for hint in _HINTS]
    return json.dumps([name, tool_name, hints, task_support], separators=(",", ":"))


def server_to_table(spec: ServerSpec) -> dict[str, Any]:
    """A tool's server as a table holds it: without the server's seal, as the table's seal is the tool's."""
    data = spec.to_dict()
    data.pop("seal", None)
    return data


def server_to_table_json(spec: ServerSpec) -> str:
    """:func:`server_to_table` as JSON; the spec's cached identity when there is no handshake to add."""
    if spec.handshake is None:
        return spec.identity
    return json.dumps(server_to_table(spec), sort_keys=True, separators=(",", ":"))


def server_from_table(data: object) -> ServerSpec:
    """A tool's server as a table holds it, unsealed: the seal a table keeps belongs to the tool (its server's seal
    in tables written before it covers the server only, and so no longer counts).

    A table may hold anything, so what is wrong is named instead of surfacing as a TypeError in a run."""
    if not isinstance(data, Mapping):
        raise ConfigError("The tool's server is not a JSON object.")
    for field_name in ("headers", "env"):
        entries = data.get(field_name) or {}
        if not isinstance(entries, Mapping):
            raise ConfigError(f"The server's {field_name} is not a JSON object.")
        if wrong := [name for name, value in entries.items() if not isinstance(value, str)]:
            raise ConfigError(f"The server's {field_name} entry {wrong[0]!r} is not text.")
    try:
        return ServerSpec.from_dict({name: value for name, value in data.items() if name != "seal"})
    except (TypeError, AttributeError, ValueError) as exc:
        raise ConfigError(f"The tool's server is malformed ({exc}).") from exc
