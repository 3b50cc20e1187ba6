"""Tools as tables hold them: the JSON of KNIME's "MCP Tool" cell, read and written a table at a time.

Below :class:`knime_mcp.tools.tool.MCPTool`, whose JSON methods use it, and :mod:`knime_mcp.tools.arrow` (whole tables),
so it knows a tool only by its fields (:class:`CellTool`), and makes one with the function it is given. A table
lists thousands of tools of a few servers, so what the rows share (a server's JSON and seal key, a set of hints) is
serialised or parsed once per table, and each tool's schemas once for every column that shows them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from json.encoder import encode_basestring_ascii as _quote
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

from pydantic_core import from_json

from knime_mcp.config import ServerSpec
from knime_mcp.errors import ConfigError
from knime_mcp.seal import seal_spec, tool_seal_checker, tool_sealer
from knime_mcp.tools.annotations import ToolAnnotations, compact_json, policy_facts
from knime_mcp.tools.http_operation import HttpOperation
from knime_mcp.tools.program_call import ProgramCall

__all__ = [
    "CELL_FORMAT",
    "CellTool",
    "TableReader",
    "TableServer",
    "ToolWriter",
    "schema_texts",
    "server_from_table",
    "server_to_table",
    "server_to_table_json",
    "table_tags",
    "tool_cell",
]


class CellTool(Protocol):
    """What a cell is written from: an :class:`~knime_mcp.tools.tool.MCPTool`, which this module does not import, as
    the tool's own JSON methods use it."""

    name: str
    tool_name: str
    title: str | None
    description: str
    input_schema: dict[str, Any]
    parameter_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    annotations: ToolAnnotations
    server: ServerSpec
    notes: tuple[str, ...]
    task_support: str
    http: HttpOperation | None
    program: ProgramCall | None
    tags: tuple[str, ...]
    app_uri: str | None
    app_only: bool

    @property
    def input_json(self) -> str: ...

    @property
    def policy_facts(self) -> str: ...


ToolT = TypeVar("ToolT")
"""The tool a :class:`TableReader` makes of a row's fields (an :class:`~knime_mcp.tools.tool.MCPTool`)."""


class TableServer(NamedTuple):
    """A server as a table holds it: unsealed, sealed here (for a tool whose seal fits), and its seal check."""

    unsealed: ServerSpec
    sealed: ServerSpec
    fits: Callable[[str, object], bool]


class TableReader(Generic[ToolT]):
    """What the rows of one table being read share, each parsed once: a table lists thousands of tools of a few
    servers with a handful of hint combinations, and a server's identity (what a seal covers) takes a while to
    compute. ``make`` turns a row's checked fields into a tool (``MCPTool.from_fields``)."""

    def __init__(self, make: Callable[[dict[str, Any]], ToolT]) -> None:
        self._make = make
        self._read: dict[str, TableServer] = {}
        self._last: tuple[object, TableServer] | None = None
        self._hints: dict[tuple[tuple[str, Any], ...], ToolAnnotations] = {}
        self._ends: dict[str, tuple[TableServer, ToolAnnotations]] = {}
        self._end: tuple[str, tuple[TableServer, ToolAnnotations]] | None = None

    def read(self, text: str) -> TableServer:
        """The server whose JSON a table holds as ``text``."""
        try:
            return self._read[text]
        except KeyError:
            spec = server_from_table(json.loads(text))
            server = self._read[text] = TableServer(spec, seal_spec(spec), tool_seal_checker(spec))
            return server

    def server(self, data: object) -> TableServer:
        """:meth:`read` for a server already parsed; the rows of a table come in runs of one server, so each is
        compared with the previous row's before it is serialised."""
        if self._last is None or (self._last[0] is not data and self._last[0] != data):
            self._last = (data, self.read(json.dumps(data, sort_keys=True)))
        return self._last[1]

    @staticmethod
    def fitting(
        server: TableServer, name: Any, tool_name: Any, hints: ToolAnnotations, task_support: Any,
        http: HttpOperation | None, seal: object, program: ProgramCall | None = None,
    ) -> ServerSpec:  # fmt: skip
        """The sealed server if the tool's seal fits, else the unsealed one. Checked before the tool is made, so that
        a sealed tool is made once; a name that is not text cannot fit, and the tool's constructor names it."""
        if not (isinstance(name, str) and isinstance(tool_name, str) and isinstance(task_support, str)):
            return server.unsealed
        fits = server.fits(policy_facts(name, tool_name, hints, task_support, http, program), seal)
        return server.sealed if fits else server.unsealed

    def annotations(self, data: Mapping[str, Any]) -> ToolAnnotations:
        key = tuple(data.items())
        try:
            return self._hints[key]
        except KeyError:
            hints = self._hints[key] = ToolAnnotations(**{"annotated": True, **data})
            return hints
        except TypeError:  # an unhashable value: not a hint, which the constructor says
            return ToolAnnotations(**{"annotated": True, **data})

    def tool(self, data: dict[str, Any]) -> ToolT:
        """A row's tool as the table holds it; its server counts as chosen by a person only if the tool's seal
        fits."""
        server = self.server(data["server"])
        # A table written before "annotated" existed cannot tell a tool without hints from one whose hints equal
        # the defaults, so it keeps the hints' face value (a destructive tool stays blocked).
        return self._made(data, server, self.annotations(data.get("annotations") or {}))

    def cell(self, text: str) -> ToolT:
        """:meth:`tool` of a row's JSON cell. A cell in the layout :func:`tool_cell` writes (:data:`CELL_FORMAT`) is
        parsed without its hints and server, which it ends with and which the rows of a table share (half a lean
        cell): their text is compared with the previous row's, or looked up. Any other cell (one written by 0.5.0
        or by hand) is parsed whole."""
        if isinstance(text, str) and text.startswith(_FORMAT_HEAD) and (split := self._split(text)) is not None:
            data, (server, hints) = split
            return self._made(data, server, hints)
        return self.tool(from_json(text))

    def _split(self, text: str) -> tuple[dict[str, Any], tuple[TableServer, ToolAnnotations]] | None:
        """The cell's fields but the hints and server, and those two, from the end of the cell that holds them;
        None if the cell does not end with them. The fields are taken only where the text before that end, closed,
        parses as one JSON object, and the end, opened, as an object of those two keys alone: then the cut is
        outside any string and value, and the cell reads as a whole parse reads it (where the fields repeat a key
        of the end, the end's comes last and wins there too)."""
        end = self._end
        if end is None or not text.endswith(end[0]):
            cut = text.rfind(_HINTS)
            if cut < 0:
                return None
            end = (text[cut:], None)
        try:
            data = from_json(text[: len(text) - len(end[0])] + "}")  # an object: the cell starts with its opening
        except ValueError:
            return None
        shared = end[1] or self._shared(end[0])
        if shared is None:
            return None
        self._end = (end[0], shared)
        return data, shared

    def _shared(self, end: str) -> tuple[TableServer, ToolAnnotations] | None:
        """The server and hints of a cell's end, ``,"annotations":{…},"server":{…}}``, made once per table (its
        rows share a few); None for an end that is not that."""
        if end not in self._ends:
            try:
                data = from_json("{" + end[1:])
            except ValueError:
                return None
            if data.keys() != _SHARED_KEYS:
                return None
            self._ends[end] = (self.server(data["server"]), self.annotations(data["annotations"] or {}))
        return self._ends[end]

    def _made(self, data: Mapping[str, Any], server: TableServer, hints: ToolAnnotations) -> ToolT:
        if (cell_format := data.get("cell_format")) not in _FORMATS:
            raise ConfigError(
                f"The tool's cell format is {cell_format!r}; this knime-mcp reads formats 1 to {CELL_FORMAT}, so a "
                "later version may have written it.",
                hint="Update knime-mcp, or list the tools again with this version.",
            )
        name, tool_name = data["name"], data["tool_name"]
        input_schema = data.get("input_schema") or {}
        task_support = data.get("task_support") or "forbidden"
        http = None if data.get("http") is None else HttpOperation.from_dict(data["http"])
        program = None if data.get("program") is None else ProgramCall.from_dict(data["program"])
        seal = data.get("seal")
        tool = self._make(
            {
                "name": name,
                "tool_name": tool_name,
                "title": data.get("title"),
                "description": data.get("description") or "",
                "input_schema": input_schema,
                "parameter_schema": data.get("parameter_schema", input_schema) or {},
                "output_schema": data.get("output_schema"),
                "annotations": hints,
                "server": self.fitting(server, name, tool_name, hints, task_support, http, seal, program),
                "notes": tuple(data.get("notes") or ()),
                "task_support": task_support,
                "http": http,
                "program": program,
                "tags": table_tags(data.get("tags")),
                "app_uri": data.get("app_uri"),
                "app_only": data.get("app_only") or False,
            }
        )
        if seal is not None and not isinstance(seal, str):
            raise ConfigError(f"The seal of tool {name!r} is not text.")
        return tool


CELL_FORMAT = 2
"""The layout of the cells :func:`tool_cell` writes: ``cell_format`` first, the tool's own fields, its seal, then
what the rows of a table share (hints, server), with no parameter schema where it is the input schema. 0.5.0 wrote
no ``cell_format`` (format 1: the hints and server in the middle); both read, and a later format is refused.

Optional fields of the tool's own (``http``, ``program``, ``tags``, ``app_uri``, ``app_only``) are written only when
set and read as absent otherwise, so adding one keeps the format: a cell written before it reads as a tool without it,
and a knime-mcp that does not know it reads the cell without it (as the app fields, added to format 2 for MCP Apps;
``program`` for program tools: such a knime-mcp reads it as an MCP tool of a stdio server, whose seal, covering the
program's arguments, does not fit, so it never runs)."""

_FORMAT_HEAD = f'{{"cell_format":{CELL_FORMAT},'
_HINTS = ',"annotations":'
_SHARED_KEYS = {"annotations", "server"}
_FORMATS = (None, 1, CELL_FORMAT)


class ToolWriter:
    """Writes the tools of one table as JSON cells; each distinct server is serialised and checked for its seal
    once, as a table lists thousands of tools of a few servers."""

    def __init__(self) -> None:
        self._servers: dict[int, tuple[ServerSpec, str, Callable[[str], str | None]]] = {}
        self._last: tuple[ServerSpec, str, Callable[[str], str | None]] | None = None

    def server(self, spec: ServerSpec) -> tuple[str, Callable[[str], str | None]]:
        """The server as a table holds it (:func:`server_to_table_json`), and the sealer of its tools."""
        known = self._last
        if known is None or known[0] is not spec:  # the tools of a listing come in runs of one server
            known = self._servers.get(id(spec))
            if known is None:
                known = self._servers[id(spec)] = (spec, server_to_table_json(spec), tool_sealer(spec))
            self._last = known
        return known[1], known[2]

    def parts(self, tool: CellTool) -> tuple[tuple[str, str, str | None, str | None], str, str | None]:
        """What a table holds of ``tool`` besides its own fields: its schema texts (:func:`schema_texts`), its
        server's JSON and its seal."""
        server, sealer = self.server(tool.server)
        return schema_texts(tool), server, sealer(tool.policy_facts)

    def cell(self, tool: CellTool) -> str:
        """:meth:`MCPTool.to_dict` as JSON, put together from parts serialised once."""
        return tool_cell(tool, *self.parts(tool))


def tool_cell(tool: CellTool, texts: tuple[str, str, str | None, str | None], server: str, seal: str | None) -> str:
    """:meth:`MCPTool.to_dict` as JSON in the layout of :data:`CELL_FORMAT`, from parts a table has serialised
    already: the schemas and HTTP request (:func:`schema_texts`), the server (:meth:`ToolWriter.server`) and the
    tool's seal."""
    input_text, parameter_text, output_text, http_text = texts
    title = "null" if tool.title is None else _quote(tool.title)
    parameters = "" if parameter_text == input_text else f',"parameter_schema":{parameter_text}'
    notes = compact_json(list(tool.notes)) if tool.notes else "[]"
    http = "" if http_text is None else f',"http":{http_text}'
    program = "" if tool.program is None else f',"program":{compact_json(tool.program.to_dict())}'
    tags = f',"tags":{compact_json(list(tool.tags))}' if tool.tags else ""
    app = "" if tool.app_uri is None else f',"app_uri":{_quote(tool.app_uri)}'
    app_only = ',"app_only":true' if tool.app_only else ""
    return (
        f'{_FORMAT_HEAD}"name":{_quote(tool.name)},"tool_name":{_quote(tool.tool_name)},"title":{title},'
        f'"description":{_quote(tool.description)},"input_schema":{input_text}{parameters},'
        f'"output_schema":{output_text or "null"},"notes":{notes},"task_support":{_quote(tool.task_support)}'
        f'{http}{program}{tags}{app}{app_only},"seal":{"null" if seal is None else _quote(seal)}'
        f'{_HINTS}{tool.annotations.cell_json},"server":{server}}}'
    )


def schema_texts(tool: CellTool) -> tuple[str, str, str | None, str | None]:
    """The tool's input, parameter and output schemas and HTTP request as JSON (None for none); a parameter schema
    that is the input schema is serialised once."""
    input_text = tool.input_json
    parameters = tool.parameter_schema
    same = parameters is tool.input_schema or parameters == tool.input_schema
    return (
        input_text,
        input_text if same else compact_json(parameters),
        None if tool.output_schema is None else compact_json(tool.output_schema),
        None if tool.http is None else compact_json(tool.http.to_dict()),
    )


def table_tags(value: object) -> tuple[str, ...]:
    """A tool's tags as a table holds them: a list of texts, or nothing (a table written before tags existed)."""
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)) or not all(isinstance(tag, str) for tag in value):
        raise ConfigError("The tool's tags are not a list of texts.")
    return tuple(value)


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
