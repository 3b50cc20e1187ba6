"""MCPTool: one server tool as this project's own frozen value, converted from the SDK at the boundary.

``name`` is what tables and models see (unique in its table, possibly prefixed or sanitised); ``tool_name`` is the
server's own name, used for the call. SDK models never travel further than :meth:`MCPTool.from_sdk`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, Literal, get_args

import mcp_types
from pydantic_core import from_json

from knime_mcp.config import ServerSpec
from knime_mcp.errors import ConfigError
from knime_mcp.seal import tool_sealer
from knime_mcp.tools.annotations import ToolAnnotations, compact_json, policy_facts
from knime_mcp.tools.app_link import app_link
from knime_mcp.tools.http_operation import HttpOperation
from knime_mcp.tools.program_call import ProgramCall
from knime_mcp.tools.tool_cells import CELL_FORMAT, TableReader, ToolWriter, server_to_table
from knime_mcp.tools.tool_ids import server_address, tool_id

if TYPE_CHECKING:
    from knime_mcp.tools.tool_hints import ToolHints

__all__ = [
    "KIND_LABELS",
    "MCPTool",
    "TaskSupport",
    "ToolAnnotations",
    "compact_json",
    "policy_facts",
]

TaskSupport = Literal["forbidden", "optional", "required"]
"""A tool's ``execution.taskSupport``: whether it may, or must, run as an MCP task; absent means ``forbidden``."""

_TASK_SUPPORTS = frozenset(get_args(TaskSupport))

KIND_LABELS = {"mcp": "MCP", "http": "HTTP", "program": "Program", "workflow": "workflow"}
"""How a tools table's *Kind* column and the tool-call log name a tool's kind (:attr:`MCPTool.kind`; ``workflow``
for KNIME's workflow tools)."""


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

    http: HttpOperation | None = None
    """For an HTTP tool (:mod:`knime_mcp.http`), the request a call makes to ``server``; None for an MCP tool."""

    program: ProgramCall | None = None
    """For a program tool (:mod:`knime_mcp.programs`), the arguments after the program, which ``server`` names with
    its working folder and environment; None for an MCP or HTTP tool."""

    tags: tuple[str, ...] = ()
    """The tags a provider gave the tool (its server's key, a person's tags for the server), by which the agents
    and the Tool Caller select tools (:mod:`knime_mcp.tools.tags`); not covered by the table's seal."""

    app_uri: str | None = None
    """The ``ui://`` resource of the tool's MCP App (:mod:`knime_mcp.tools.app_link`), which shows its results in the
    Agent Chat; None for a tool without one. Not covered by the table's seal: it names a resource of the tool's own
    (sealed) server and decides nothing about whether a call may run."""

    app_only: bool = False
    """True for a tool only its app may call (``_meta.ui.visibility`` without ``"model"``): never offered to a model,
    kept in the tools table for the app. Not covered by the table's seal: it only narrows what a model is offered."""

    timeout: float | None = None
    """Seconds a call of this tool may take, from a person's *Timeout (s)* column beside the tools table's MCP Tool
    column (:mod:`knime_mcp.tools.tool_columns`); None: the node's own call timeout. Not in the tool's cell, so not
    covered by the seal: it bounds how long a call may take (at most a day), never whether it may run."""

    hints: ToolHints | None = None
    """A person's *Expected time (s)* and *Cost* for the tool, from columns beside the MCP Tool column
    (:mod:`knime_mcp.tools.tool_columns`), which the agents tell the model when asked to; None without them. Not in
    the tool's cell, so not covered by the seal: a hint decides nothing about whether a call may run."""

    def __post_init__(self) -> None:
        """A tool read from a table may hold anything; what is wrong is named now, not as a TypeError in a run."""
        if (
            isinstance(self.name, str) and self.name and isinstance(self.tool_name, str) and self.tool_name
            and isinstance(self.description, str) and (self.title is None or isinstance(self.title, str))
            and isinstance(self.task_support, str) and self.task_support in _TASK_SUPPORTS
            and type(self.tags) is tuple and (not self.tags or all(type(tag) is str for tag in self.tags))
            and (self.app_uri is None or type(self.app_uri) is str) and type(self.app_only) is bool
        ):  # fmt: skip
            return  # the usual case, checked at once: a provider makes thousands of tools
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
        if not isinstance(self.tags, tuple) or not all(isinstance(tag, str) for tag in self.tags):
            raise ConfigError(f"The tags of tool {self.name!r} are not a list of texts.")
        if not (self.app_uri is None or isinstance(self.app_uri, str)):
            raise ConfigError(f"The app_uri of tool {self.name!r} is not text.")
        if not isinstance(self.app_only, bool):
            raise ConfigError(f"The app_only of tool {self.name!r} is not true or false.")

    @classmethod
    def read(cls, **values: Any) -> MCPTool:
        """The tool with these fields, as a table read makes thousands: a frozen dataclass's ``__init__`` sets each
        field through ``object.__setattr__``, which costs more than the rest of reading a tool. The checks are the
        constructor's (:meth:`__post_init__`); without every field, this is the constructor."""
        if values.keys() != _FIELD_NAMES:
            return cls(**values)
        return cls.from_fields(values)  # a new dict, the call's own

    @classmethod
    def from_fields(cls, values: dict[str, Any]) -> MCPTool:
        """:meth:`read` of a dict holding every field, made for this tool alone: it becomes the tool's
        ``__dict__``."""
        tool = object.__new__(cls)
        object.__setattr__(tool, "__dict__", values)
        tool.__post_init__()
        return tool

    @property
    def input_json(self) -> str:
        """``input_schema`` as compact JSON, made once: shaping reads it, and the tools table holds it. Kept in the
        instance's ``__dict__`` by hand: ``cached_property`` takes a lock, which costs more than the JSON."""
        try:
            return self.__dict__["_input_json"]  # type: ignore[no-any-return]
        except KeyError:
            text = self.__dict__["_input_json"] = compact_json(self.input_schema)
            return text

    @property
    def policy_facts(self) -> str:
        """What the tool policy and the task check read, as a table's seal covers it (:func:`policy_facts`)."""
        return policy_facts(self.name, self.tool_name, self.annotations, self.task_support, self.http, self.program)

    @property
    def kind(self) -> str:
        """``mcp``, ``http`` for an HTTP tool or ``program`` for a program tool: the tool-call log's kind column."""
        return "http" if self.http is not None else "program" if self.program is not None else "mcp"

    @property
    def kind_label(self) -> str:
        """The tools table's *Kind*: ``MCP``, ``HTTP`` or ``Program``."""
        return KIND_LABELS[self.kind]

    @property
    def tool_id(self) -> str:
        """The same for the same tool of the same server in every listing, process and machine
        (:mod:`knime_mcp.tools.tool_ids`): ``mcp-`` and a hash of the server's address and the server's own name for
        the tool, ``http-`` and a hash of the API's base URL, the method and the path, or ``program-`` and a hash of
        the program and its argument template."""
        address = server_address(self.server.target)
        if self.http is not None:
            return tool_id(address, "http", [self.http.method, self.http.path])
        if self.program is not None:
            return tool_id(address, "program", list(self.program.args))
        return tool_id(address, "mcp", [self.tool_name])

    @property
    def task_required(self) -> bool:
        """A tool that can only run as an MCP task (:mod:`knime_mcp.mcp.tasks`), which KNIME's own Tool type cannot."""
        return self.task_support == "required"

    def __hash__(self) -> int:
        return hash((self.name, self.tool_name, self.server))

    @classmethod
    def from_sdk(cls, tool: mcp_types.Tool, server: ServerSpec) -> MCPTool:
        title = tool.title or (tool.annotations.title if tool.annotations else None)
        task_support = (tool.execution.task_support if tool.execution else None) or "forbidden"
        app = app_link(tool.meta, tool.name)
        return cls.from_fields(
            {
                "name": tool.name,
                "tool_name": tool.name,
                "title": title,
                "description": tool.description or "",
                "input_schema": tool.input_schema,
                "parameter_schema": tool.input_schema,
                "output_schema": tool.output_schema,
                "annotations": ToolAnnotations.from_sdk(tool.annotations),
                "server": server,
                "task_support": task_support,
                "http": None,
                "program": None,
                "tags": (),
                "notes": () if app.note is None else (app.note,),
                "app_uri": app.uri,
                "app_only": app.only,
            }
        )

    def with_changes(self, **changes: Any) -> MCPTool:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """The tool as a table's cell holds it (:data:`~knime_mcp.tools.tool_cells.CELL_FORMAT`): no parameter
        schema where it is the input schema, the hints and the server last."""
        same = self.parameter_schema is self.input_schema or self.parameter_schema == self.input_schema
        return {
            "cell_format": CELL_FORMAT,
            "name": self.name,
            "tool_name": self.tool_name,
            "title": self.title,
            "description": self.description,
            "input_schema": self.input_schema,
            **({} if same else {"parameter_schema": self.parameter_schema}),
            "output_schema": self.output_schema,
            "notes": list(self.notes),
            "task_support": self.task_support,
            **({"http": self.http.to_dict()} if self.http is not None else {}),
            **({"program": self.program.to_dict()} if self.program is not None else {}),
            **({"tags": list(self.tags)} if self.tags else {}),
            **({"app_uri": self.app_uri} if self.app_uri is not None else {}),
            **({"app_only": True} if self.app_only else {}),
            "seal": tool_sealer(self.server)(self.policy_facts),
            "annotations": asdict(self.annotations),
            "server": server_to_table(self.server),
        }

    def to_json(self) -> str:
        """The form a KNIME table cell holds (a pure-Python extension cannot add a column type)."""
        return ToolWriter().cell(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MCPTool:
        """The tool as a table holds it; its server counts as chosen by a person only if the tool's seal fits
        (:class:`knime_mcp.tools.tool_cells.TableReader` reads a whole table)."""
        return TableReader(cls.from_fields).tool(data)

    @classmethod
    def from_json(cls, text: str) -> MCPTool:
        return cls.from_dict(from_json(text))


_FIELD_NAMES = frozenset(field.name for field in fields(MCPTool))
