"""Stand-ins for KNIME workflow tools, which exist only inside KNIME 5.5+ and which the headless host cannot run.

``StandInWorkflowTool`` and ``StandInToolPort`` have the documented fields of ``knime.types.tool.WorkflowTool`` and
``ToolPort``; ``table_spec`` writes a port's spec as KNIME does (JSON text naming the table's columns and their
types). ``workflow_tool`` and ``workflow_tools_table`` give node tests workflow tools and tools tables that are
KNIME's own on the real API and stand-ins on the headless host. ``ExecutesWorkflowTools`` gives an execution context
KNIME's private ``_execute_tool``, which records each call (and the thread it came from) and answers in the shape of
the KNIME version given, or fails as KNIME does (``RuntimeError`` with the message). Its output tables come from
``outputs``: a list, or a function of ``(tool, parameters, inputs)``; with ``table_types`` it refuses inputs of other
types, as KNIME's does (``TypeError``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import knext_bootstrap

Outputs = list[Any] | Callable[[Any, dict[str, Any], list[Any]], list[Any]]


@dataclass
class StandInToolPort:
    name: str
    description: str = ""
    type: str = "Table"
    spec: str | None = None


@dataclass
class StandInWorkflowTool:
    name: str
    description: str
    parameter_schema: dict[str, Any]
    message_output_port_index: int = 0
    input_ports: list[Any] | None = None
    output_ports: list[Any] | None = None


def workflow_tool(
    name: str,
    description: str,
    parameter_schema: dict[str, Any],
    input_ports: Sequence[StandInToolPort] = (),
    output_ports: Sequence[StandInToolPort] = (),
) -> Any:
    """A workflow tool as a tools table holds it: KNIME's own ``WorkflowTool`` (its workflow in a file store) on the
    real API, a ``StandInWorkflowTool`` on the headless stand-in, which has no such column type."""
    if knext_bootstrap.REAL_KNIME:
        from real_knime.driver import workflow_tool as knime_workflow_tool

        return knime_workflow_tool(name, description, parameter_schema, input_ports, output_ports)
    return StandInWorkflowTool(name, description, parameter_schema, 0, list(input_ports), list(output_ports))


def workflow_tools_table(tools: Sequence[Any], monkeypatch: Any, table: Any = None) -> Any:
    """An Agent Prompter tools table: the rows of ``table`` (default: one row per tool) and a "Workflow Tool" column
    holding ``tools`` in its first rows, missing cells below. On KNIME's real API these are KNIME's WorkflowTool cells;
    the stand-in has no such column type, so there the column holds the tools' names and the node's cell reader
    (``nodes.knime_io.tools_table._cells``, patched with ``monkeypatch``) returns the tools."""
    import pyarrow as pa

    import node_host

    rows = len(tools) if table is None else table.num_rows
    cells = [*tools, *[None] * (rows - len(tools))]

    def with_column(column: pa.Array) -> Any:
        if table is None:
            return node_host.source_table(pa.table({"Workflow Tool": column}))
        return node_host.source_table(table.to_pyarrow().append_column("Workflow Tool", column))

    if knext_bootstrap.REAL_KNIME:
        from real_knime.driver import workflow_tool_cells

        return with_column(workflow_tool_cells(cells))
    monkeypatch.setattr(
        "nodes.knime_io.tools_table._cells", lambda arrow, column: list(tools) if column == "Workflow Tool" else []
    )
    return with_column(pa.array([None if cell is None else cell.name for cell in cells], pa.string()))


def table_spec(columns: Mapping[str, str], name: str = "default") -> str:
    """A table port's spec as KNIME's Java side writes it (``WorkflowToolCell.specToString``): compact JSON
    ``{"name": <table name>, "columns": [{"name": ..., "type": <type name>}, ...]}``; for ports of other types it
    writes ``""``."""
    spec = {"name": name, "columns": [{"name": n, "type": t} for n, t in columns.items()]}
    return json.dumps(spec, separators=(",", ":"))


class ExecutesWorkflowTools:
    """Mix into a context class, or use alone; call ``_setup_tools`` from ``__init__``."""

    def _setup_tools(
        self,
        version: str = "5.6",
        failure: str | None = None,
        outputs: Outputs | None = None,
        table_types: tuple[type, ...] | None = None,
    ) -> None:
        self.version = version
        self.failure = failure
        self.outputs = outputs
        self.table_types = table_types
        self.calls: list[tuple[Any, dict[str, Any], list[Any], dict[str, str]]] = []
        self.threads: list[int] = []

    def _execute_tool(self, tool: Any, parameters: dict[str, Any], inputs: list[Any], hints: dict[str, str]) -> Any:
        """``(message, outputs)`` in KNIME 5.5, ``(message, outputs, view_node_ids)`` since 5.6."""
        if self.table_types is not None:
            for table in inputs:
                if not isinstance(table, self.table_types):
                    raise TypeError(f"Expected a Table or BatchOutputTable as tool input, got {type(table)}")
        self.calls.append((tool, parameters, inputs, hints))
        self.threads.append(threading.get_ident())
        if self.failure:
            raise RuntimeError(self.failure)
        message = f"{tool.name} processed {parameters}"
        produced = self.outputs(tool, parameters, inputs) if callable(self.outputs) else list(self.outputs or [])
        return (message, produced) if self.version == "5.5" else (message, produced, ["view-1"])
