"""KNIME workflow tools as agent tools: configuration parameters in, and tables in and out through the data repository.

Layer: core, KNIME-free, below the agent's toolset. Tools are ``knime.types.tool.WorkflowTool`` values, read
duck-typed (this module never imports ``knime``); each call runs ``ctx._execute_tool`` in the node's own thread
through a :class:`~knime_mcp.mcp.sync.CallerThread`, and tables travel through a
:class:`~knime_mcp.agent.data.DataRepository`.

The model calls a tool without input ports with its configuration parameters as the arguments. A tool with input
ports is called as KNIME's own Agent Prompter calls it: ``{"configuration": {...}, "data_inputs": {<port>: <id>}}``,
one table id per input port. Before the call each table is checked against the port's spec (the table the tool was
built with): a column of the same name whose type KNIME cannot read as the expected one refuses the call, with both
types named. The tables a tool returns join the repository, named after the tool and its output port, and are
reported to the agent's toolset (:func:`~knime_mcp.agent.data.report_call_tables`), which lists them with their ids
after the tool message, past the output cap. Every failure (unknown id, refused table, failed workflow) is a
:class:`ToolCallError` for the model.

    local, notes = workflow_tools(tool_cells, ctx, caller, repository)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Protocol

from knime_mcp.agent.data import Column, DataRepository, DataTable, report_call_tables
from knime_mcp.calls.dispatch import LocalTool
from knime_mcp.errors import ConfigError, McpToolError, ToolCallError
from knime_mcp.mcp.sync import CallerThread
from knime_mcp.tools.results import TextPart, ToolResult

__all__ = ["WORKFLOW_EXECUTION_HINTS", "port_columns", "workflow_tools"]

WORKFLOW_EXECUTION_HINTS = {"execution-mode": "DEFAULT", "with-view-nodes": "False"}
"""What KNIME's own Agent Prompter sends with ``_execute_tool`` for a plain (non-debug) run."""

_WIDER = {
    ("Number (Integer)", "Number (Long Integer)"),
    ("Number (Integer)", "Number (Float)"),
    ("Number (Long Integer)", "Number (Float)"),
}
"""``(given, expected)`` column types KNIME reads as the expected one: integers are long integers and numbers too."""

_TYPE_ALIASES = {
    "Number (double)": "Number (Float)",
    "Number (Floating Decimal)": "Number (Float)",
    "Number (integer)": "Number (Integer)",
    "Number (long)": "Number (Long Integer)",
}
"""Other names of the same types: a port spec names types as KNIME's Java side does (``DataType.getName()``; current
knime-core calls doubles "Number (Floating Decimal)", older versions "Number (double)", "Number (integer)", "Number
(long)"), a table built in Python as KNIME's Python API does ("Number (Float)", ...). Compared by the latter."""


class _Port(Protocol):
    """The fields of ``knime.types.tool.ToolPort``. ``spec`` is JSON text as KNIME's ``WorkflowToolCell`` writes it
    for a table port: ``{"name": <table name>, "columns": [{"name": ..., "type": <type name>}, ...]}`` (compact, keys
    in no fixed order), and ``""`` for a port of another type."""

    name: str
    description: str
    type: str
    spec: str | None


class _WorkflowTool(Protocol):
    """The fields of ``knime.types.tool.WorkflowTool`` this module reads."""

    name: str
    description: str
    parameter_schema: dict[str, Any]
    input_ports: list[Any] | None
    output_ports: list[Any] | None


def workflow_tools(
    tools: Sequence[_WorkflowTool], ctx: Any, caller: CallerThread, data: DataRepository | None = None
) -> tuple[list[LocalTool], list[str]]:
    """KNIME workflow tools as :class:`LocalTool`, run by ``ctx._execute_tool`` in ``caller``'s thread.

    With ``data``, tools take their input tables from it and add their output tables to it. Without it, a tool
    with input ports is left out (the notes say which) and output tables are dropped.
    """
    if tools and not hasattr(ctx, "_execute_tool"):
        raise ConfigError(
            "This KNIME version cannot run workflow tools.",
            hint="Workflow tools need KNIME Analytics Platform 5.5 or later.",
        )
    local, notes = [], []
    for tool in tools:
        if _ports(tool, "input_ports") and data is None:
            notes.append(f"workflow tool {tool.name!r} left out: it needs input tables, which this node cannot give")
            continue
        local.append(_local_tool(tool, ctx, caller, data))
    return local, notes


def port_columns(spec: Any) -> list[Column] | None:
    """The columns of a port's spec (KNIME's JSON text, see ``_Port``), or None when the spec names none."""
    try:
        parsed = json.loads(spec) if isinstance(spec, str) else spec
    except ValueError:
        return None
    columns = parsed.get("columns") if isinstance(parsed, dict) else None
    if isinstance(columns, dict):
        return [Column(str(name), str(kind)) for name, kind in columns.items()]
    if isinstance(columns, list):
        return [Column(str(c["name"]), str(c.get("type", ""))) for c in columns if isinstance(c, dict) and "name" in c]
    return None


def _ports(tool: _WorkflowTool, attribute: str) -> list[Any]:
    return list(getattr(tool, attribute, None) or [])


def _local_tool(tool: _WorkflowTool, ctx: Any, caller: CallerThread, data: DataRepository | None) -> LocalTool:
    inputs, outputs = _ports(tool, "input_ports"), _ports(tool, "output_ports")
    keys = _port_keys(inputs)
    parameters = _workflow_schema(tool.parameter_schema or {})
    return LocalTool(
        name=tool.name,
        description=_description(tool.description or "", outputs),
        input_schema=_data_schema(parameters, inputs, keys) if inputs else parameters,
        run=_runner(tool, ctx, caller, data, list(zip(keys, inputs, strict=True))),
    )


def _workflow_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """KNIME gives a tool's configuration parameters as a map of name to schema (all required), or, rarely, as a
    whole object schema; the model is offered an object schema either way."""
    if isinstance(schema.get("type"), str):
        return schema
    return {"type": "object", "properties": schema, "required": list(schema)}


def _port_keys(ports: Sequence[Any]) -> list[str]:
    """A distinct argument name per input port: its name, numbered when two ports share one."""
    keys: list[str] = []
    for number, port in enumerate(ports, start=1):
        key = str(getattr(port, "name", "") or f"input_{number}")
        keys.append(key if key not in keys else f"{key}_{number}")
    return keys


def _data_schema(parameters: dict[str, Any], inputs: Sequence[Any], keys: Sequence[str]) -> dict[str, Any]:
    """KNIME's call shape for tools with input ports: the configuration, and a table id per input port."""
    properties: dict[str, Any] = {}
    if parameters.get("properties"):
        properties["configuration"] = {**parameters, "description": "Configures the tool for the task at hand."}
    properties["data_inputs"] = {
        "type": "object",
        "description": "The tables for the tool's input ports: the id of a table of the data repository per port.",
        "properties": {key: _port_schema(key, port) for key, port in zip(keys, inputs, strict=True)},
        "required": list(keys),
        "additionalProperties": False,
    }
    return {"type": "object", "properties": properties, "required": list(properties)}


def _port_schema(key: str, port: Any) -> dict[str, Any]:
    description = f"Id of the table for the input port {key!r}"
    if getattr(port, "description", None):
        description += f" ({port.description})"
    columns = port_columns(getattr(port, "spec", None))
    if columns:
        description += f". The tool was built for a table with the columns {_listed(columns)}"
    return {"type": "integer", "minimum": 0, "description": description + "."}


def _description(description: str, outputs: Sequence[Any]) -> str:
    if not outputs:
        return description
    ports = "; ".join(f"{getattr(p, 'name', '')!r}" + _also(getattr(p, "description", "")) for p in outputs)
    note = f"Output ports (each call adds their tables to the data repository): {ports}."
    return f"{description}\n{note}" if description else note


def _runner(
    tool: _WorkflowTool, ctx: Any, caller: CallerThread, data: DataRepository | None, inputs: list[tuple[str, Any]]
) -> Any:
    outputs = _ports(tool, "output_ports")

    async def run(arguments: dict[str, Any]) -> ToolResult:
        configuration = dict(arguments.get("configuration") or {}) if inputs else arguments
        tables = _chosen_tables(data, inputs, arguments.get("data_inputs") if inputs else None)
        chosen = zip(inputs, tables, strict=True)
        problems = [problem for (key, port), table in chosen if (problem := _refusal(key, port, table))]
        if problems:
            raise ToolCallError(
                f"Workflow tool {tool.name!r} cannot take these tables: {'; '.join(problems)}.",
                hint="Pass tables whose columns have the types the port expects, or prepare such a table first.",
            )

        def execute() -> tuple[str, list[DataTable]]:
            given = [data.host_table(table) for table in tables] if data is not None else []
            outcome = ctx._execute_tool(tool, configuration, given, dict(WORKFLOW_EXECUTION_HINTS))
            # KNIME 5.5 returns (message, outputs); 5.6 and later add the ids of view nodes.
            message, produced = str(outcome[0]), list(outcome[1] or [])
            added = [] if data is None else [_add_output(data, tool, outputs, i, t) for i, t in enumerate(produced)]
            return message, added

        try:
            message, added = await caller.run(execute)
        except McpToolError:
            raise
        except Exception as exc:  # KNIME's host code: a failed tool raises RuntimeError, py4j its own errors
            notes = _missing_columns(inputs, tables)
            raise ToolCallError(f"Workflow tool {tool.name!r} failed: {exc}{notes}") from exc
        report_call_tables(added)  # the toolset names them after capping the message, so their ids always get through
        return ToolResult(content=(TextPart(message),))

    return run


def _chosen_tables(data: DataRepository | None, inputs: list[tuple[str, Any]], chosen: Any) -> list[DataTable]:
    if not inputs or data is None:
        return []
    chosen = chosen if isinstance(chosen, dict) else {}
    missing = [key for key, _ in inputs if key not in chosen]
    if missing:
        raise ToolCallError(
            f"No table was given for the input port(s) {', '.join(map(repr, missing))}.",
            hint="Pass a table id for every input port in data_inputs.",
        )
    return [data.get(chosen[key]) for key, _ in inputs]


def _refusal(key: str, port: Any, table: DataTable) -> str | None:
    """Why ``table`` cannot go to ``port``: same-named columns of types KNIME cannot read as the expected ones."""
    expected = port_columns(getattr(port, "spec", None)) or []
    given = {column.name: column.type for column in table.columns}
    wrong = [
        f"column {c.name!r} is {given[c.name]}, not {c.type}"
        for c in expected
        if c.name in given and not _readable_as(given[c.name], c.type)
    ]
    return f"input port {key!r} got table {table.id} ({table.name}), whose {', '.join(wrong)}" if wrong else None


def _readable_as(given: str, expected: str) -> bool:
    given, expected = _TYPE_ALIASES.get(given, given), _TYPE_ALIASES.get(expected, expected)
    return not expected or given == expected or (given, expected) in _WIDER


def _missing_columns(inputs: list[tuple[str, Any]], tables: list[DataTable]) -> str:
    """For a failed call: the columns the tool was built with that the given tables lack, a likely cause."""
    notes = []
    for (key, port), table in zip(inputs, tables, strict=True):
        names = {column.name for column in table.columns}
        absent = [c.name for c in port_columns(getattr(port, "spec", None)) or [] if c.name not in names]
        if absent:
            notes.append(f"table {table.id} given to port {key!r} lacks the columns {', '.join(map(repr, absent))}")
    return f" (Note: {'; '.join(notes)}, which the tool was built with.)" if notes else ""


def _add_output(data: DataRepository, tool: _WorkflowTool, ports: Sequence[Any], index: int, table: Any) -> DataTable:
    port = ports[index] if index < len(ports) else None
    port_name = str(getattr(port, "name", "") or f"output {index + 1}")
    description = str(getattr(port, "description", "") or f"Output table {index + 1} of workflow tool {tool.name!r}")
    return data.add(table, name=f"{tool.name}: {port_name}", description=description)


def _listed(columns: Sequence[Column]) -> str:
    shown = ", ".join(f"{c.name!r} ({c.type})" for c in columns[:30])
    return shown + (f" and {len(columns) - 30} more" if len(columns) > 30 else "")


def _also(text: str) -> str:
    return f" ({text})" if text else ""
