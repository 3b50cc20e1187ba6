"""Host-only test tools: what KNIME does around a node, which ``knime.extension.testing`` cannot show.

Not part of any KNIME package; tests reach it through ``tests/node_host.py``, which on KNIME's real API gives the
driver of ``tests/real_knime`` with the same interface instead.

- ``source_table(data, batch_size=None)``: a table as KNIME passes it into ``execute`` (``batches()`` works,
  schema columns carry KNIME's metadata dicts; without rows it has no batch, and ``to_pyarrow``/``to_pandas`` fail).
- ``save_settings(node)``, ``load_settings(node_id, settings, saved_version)``, ``validate_settings(node_id,
  settings, saved_version)``: settings as KNIME saves, loads and checks them (``EXTENSION_VERSION`` is the current
  version); ``save_port_object(port_object)``/``load_port_object(spec_json, data)``: a custom port object as a saved
  workflow keeps it and as the next node gets it back.
- ``configure_node(node, ctx, *specs, output_groups=None)`` / ``execute_node(node, ctx, *inputs,
  output_groups=None)``: run the node the way the KNIME launcher does (knext-api 2, 7) and return what downstream
  nodes would receive. The work is done by a fresh instance carrying ``node``'s settings, so instance state never
  leaks between calls; column parameters are checked against the input specs; results are checked per output port
  (a DataFrame is not a table, a custom spec must be its port type's class, duplicate column names fail); custom
  specs travel through JSON and custom objects through ``serialize``/``deserialize``; a canceled execution raises
  ``NodeCanceled``; the settings after the call are written back to ``node``.
- Port groups: the value for an input port group is a list (one spec or table per port the user added, possibly
  none), and the node gets a list; ``output_groups`` maps an output group's name to the number of ports the user
  added (default 0), and the call returns a list for the group. As KNIME's launcher does, the context is given the
  node's ports and the Java side's port maps, so ``get_connected_input_port_numbers``/
  ``get_connected_output_port_numbers`` work during the call.
- Results are packed as KNIME's launcher packs them (``_launcher_outputs``), and a node whose packed results do not
  number one per connected output port fails with a ``RuntimeError`` naming both counts, as the real-API driver's
  Java side does (``PortLayout.grouped`` of ``tests/port_layout.py``, which lays out ports for both hosts).

    spec, = configure_node(node, TestingConfigurationContext(), tools.schema)
    out, = execute_node(node, TestingExecutionContext(), tools)
    assert out.to_pandas()["name"].tolist() == ["echo"]
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import knime.extension as knext
import yaml
from knime.extension import _table, nodes
from knime.extension.nodes import PortGroup
from knime.extension.parameter import extract_parameters, inject_parameters, validate_parameters, validate_specs

from port_layout import PortLayout

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

_TABLE = knext.PortType.TABLE
_LAYOUT = PortLayout(PortGroup)
EXTENSION_VERSION = str(yaml.safe_load((Path(__file__).resolve().parents[2] / "knime.yml").read_text())["version"])
"""The extension's version (knime.yml): KNIME loads the extension with it and saves it with the settings."""


class NodeCanceled(Exception):
    """KNIME marks the node "Canceled" and drops its outputs when ``is_canceled()`` is true after ``execute``."""


def source_table(
    data: pd.DataFrame | pa.Table | knext.Table | knext.BatchOutputTable, batch_size: int | None = None
) -> knext.Table:
    """An ``execute`` input built from ``data``, as KNIME hands over a table from upstream: in one batch unless
    ``batch_size`` says otherwise, with only the batches that hold rows (those reported writing it), so a table
    without rows has no batch at all.

    A ``BatchOutputTable`` keeps its batches, and a source table (a node's output handed on) stays as it is unless
    ``batch_size`` is given.
    """
    import pandas as pd

    if isinstance(data, _table._SourceTable) and batch_size is None:
        return _batched(data._data, data._batch_size, data._num_batches)
    written = None
    if isinstance(data, knext.BatchOutputTable):
        arrow, written = _batch_output_arrow(data)
    elif isinstance(data, knext.Table):
        arrow = data._data
    elif isinstance(data, pd.DataFrame):
        arrow = knext.Table.from_pandas(data)._data
    else:
        arrow = knext.Table.from_pyarrow(data)._data
    size = max(batch_size or written or arrow.num_rows, 1)
    return _batched(arrow, size, -(-arrow.num_rows // size))


def _handed_on(table: knext.Table | knext.BatchOutputTable) -> knext.Table:
    """A node's output table as the next node receives it: KNIME reads it through its file's footer, so with every
    batch written, also the one empty batch written for a table without rows."""
    if isinstance(table, knext.BatchOutputTable):
        arrow, size = _batch_output_arrow(table)
        return _batched(arrow, size, len(table._batches))
    return _batched(table._data, table.num_rows, 1)


def _batch_output_arrow(table: knext.BatchOutputTable) -> tuple[pa.Table, int]:
    """The rows of all batches, and the size of the first batch."""
    import pyarrow as pa

    if not table._batches:
        return pa.table({_table._ROW_ID: pa.array([], pa.string())}), 0
    return pa.concat_tables(table._batches), table._batches[0].num_rows


def _batched(arrow: pa.Table, batch_size: int, num_batches: int) -> knext.Table:
    table = _table._SourceTable._wrap(arrow)
    table._batch_size, table._num_batches = max(batch_size, 1), num_batches
    return table


def configure_node(
    node: Any, ctx: knext.ConfigurationContext, *specs: Any, output_groups: Mapping[str, int] | None = None
) -> list[Any]:
    """The output specs KNIME would pass downstream after configuring ``node`` with ``specs``."""
    record = _record(node, specs)
    fresh = _fresh_instance(record, node)
    sizes = _launched(ctx, record, specs, output_groups)
    empty = knext.Schema.from_columns([])
    validate_specs(fresh, [empty if s is None and p.type == _TABLE else s for p, s in zip(record.input_ports, specs)])
    inputs = [_each(p, s, _incoming_spec) for p, s in zip(record.input_ports, specs)]
    result = fresh.configure(ctx, *inputs)
    given = [_outgoing_spec(p, s) for p, s in _launcher_outputs(result, record.output_ports, configure=True)]
    outputs = _LAYOUT.grouped(given, record.output_ports, sizes)
    inject_parameters(node, extract_parameters(fresh))
    return outputs


def execute_node(
    node: Any, ctx: knext.ExecutionContext, *inputs: Any, output_groups: Mapping[str, int] | None = None
) -> list[Any]:
    """The port objects KNIME would pass downstream after executing ``node`` on ``inputs``."""
    record = _record(node, inputs)
    fresh = _fresh_instance(record, node)
    sizes = _launched(ctx, record, inputs, output_groups)
    objects = [_each(p, o, _incoming_object) for p, o in zip(record.input_ports, inputs)]
    result = fresh.execute(ctx, *objects)
    if ctx.is_canceled():
        raise NodeCanceled("Execution canceled")
    produced = [_outgoing_object(p, o) for p, o in _launcher_outputs(result, record.output_ports, configure=False)]
    outputs = _LAYOUT.grouped(produced, record.output_ports, sizes)
    inject_parameters(node, extract_parameters(fresh))
    return outputs


def save_settings(node: Any) -> str:
    """The settings JSON KNIME saves for ``node``: what a fresh instance carrying its settings extracts."""
    return json.dumps(extract_parameters(_fresh_instance(_record(node, None), node)))


def load_settings(node_id: str, settings: str, saved_version: str) -> Any:
    """A node of ``node_id`` with the settings KNIME loads from ``settings``, saved by extension ``saved_version``."""
    node = nodes._nodes[node_id].factory()
    inject_parameters(node, json.loads(settings), saved_version)
    return node


def validate_settings(node_id: str, settings: str, saved_version: str) -> str | None:
    """KNIME's check of settings being applied or loaded: None, or the message of why not (as its launcher gives)."""
    try:
        validate_parameters(nodes._nodes[node_id].factory(), json.loads(settings), saved_version)
    except Exception as error:
        return str(error)
    return None


def save_port_object(port_object: Any) -> tuple[str, bytes]:
    """What a saved workflow keeps of a custom port object a node output: its spec as JSON text (with its port type's
    id, as KNIME wraps it), and the bytes of its file store."""
    port_type = nodes.get_port_type_for_spec_type(type(port_object.spec))
    return json.dumps({"id": port_type.id, "data": port_object.spec.serialize()}), port_object.serialize()


def load_port_object(spec_json: str, data: bytes) -> Any:
    """The port object the next node gets once the workflow saved as ``save_port_object`` gave is opened again."""
    saved = json.loads(spec_json)
    port_type = nodes.get_port_type_for_id(saved["id"])
    return port_type.object_class.deserialize(_deserialized_spec(port_type, saved["data"]), data)


def _record(node: Any, inputs: tuple[Any, ...] | None) -> nodes._Node:
    """The registration of ``node``'s class; ``inputs`` (unless None) are checked against its input ports."""
    record = next((r for r in nodes._nodes.values() if type(node) is r.node_class), None)
    if record is None:
        raise TypeError(f"{node!r} was not created by a @knext.node factory")
    if inputs is not None:
        _LAYOUT.check_inputs(record.id, record.input_ports, inputs)
    return record


class _JavaPortMaps:
    """What the Java side of a node context answers about ports: group (or optional port) name -> positions of
    its ports among all connected ports. Anything else is asked of the context's own Java side, if it has one."""

    def __init__(self, inner: Any, input_map: dict[str, list[int]], output_map: dict[str, list[int]]) -> None:
        self._inner, self._input_map, self._output_map = inner, input_map, output_map

    def get_input_port_map(self) -> dict[str, list[int]]:
        return self._input_map

    def get_output_port_map(self) -> dict[str, list[int]]:
        return self._output_map

    def __getattr__(self, name: str) -> Any:
        if self._inner is None:
            raise AttributeError(name)
        return getattr(self._inner, name)


def _launched(
    ctx: Any, record: nodes._Node, inputs: tuple[Any, ...], output_groups: Mapping[str, int] | None
) -> list[int]:
    """Give ``ctx`` the node's ports and the port maps, as the launcher does; return each output port's size."""
    in_sizes = _LAYOUT.input_sizes(record.input_ports, inputs)
    out_sizes = _LAYOUT.output_sizes(record.id, record.output_ports, output_groups)
    inner = getattr(ctx, "_java_ctx", None)
    inner = inner._inner if isinstance(inner, _JavaPortMaps) else inner
    ctx._input_ports, ctx._output_ports = record.input_ports, record.output_ports
    ctx._java_ctx = _JavaPortMaps(
        inner,
        _LAYOUT.port_map(record.input_ports, in_sizes, "Input"),
        _LAYOUT.port_map(record.output_ports, out_sizes, "Output"),
    )
    return out_sizes


def _each(port: Any, value: Any, convert: Any) -> Any:
    """``convert(port, value)``, or for a port group a list of it, one per port of the group."""
    return [convert(port, item) for item in value] if _LAYOUT.is_group(port) else convert(port, value)


def _fresh_instance(record: nodes._Node, node: Any) -> Any:
    fresh = record.factory()
    inject_parameters(fresh, extract_parameters(node))
    return fresh


def _launcher_outputs(result: Any, ports: list[Any], configure: bool) -> list[tuple[Any, Any]]:
    """What KNIME's launcher hands its Java side, each with the port it is converted for, as
    ``postprocess_configure_outputs``/``postprocess_execute_outputs`` and ``_postprocess_outputs`` do it:

    ``None`` from ``configure`` is one ``None`` per declared port (a group too gets one), from ``execute`` no object
    at all; a list of another length than the declared ports is the value of the first port, and anything but a list
    or tuple a list of one; then each entry that is not a list becomes a list of one, and every item of every entry
    is handed on with the port of the entry's position, ``configure``'s ``None`` as it is, ``execute``'s ``None``
    left out. Nothing counts a group's items or checks that a plain port got one: the node's own wrapper has turned
    a returned tuple into a list, and a tuple left here fails in the launcher as it does here."""
    if result is None:
        result = [None] * len(ports) if configure else []
    if isinstance(result, list) and len(result) != len(ports):
        result = [result]
    if not isinstance(result, (list, tuple)):
        result = [result]
    for index in range(len(result)):
        if not isinstance(result[index], list):
            result[index] = [result[index]]
    return [
        (ports[index], item) for index, items in enumerate(result) for item in items if configure or item is not None
    ]


def _incoming_spec(port: knext.Port, spec: Any) -> Any:
    if spec is None:
        return None
    if port.type == _TABLE:
        assert isinstance(spec, knext.Schema), f"Expected a Schema for table port '{port.name}', got {type(spec)}"
        return _with_metadata(spec)
    return _transfer_spec(_incoming_type(port, type(spec)), spec)


def _incoming_type(port: knext.Port, spec_class: type) -> knext.PortType:
    """KNIME accepts only port types registered in this extension that are sub-types of the port's type."""
    try:
        incoming = nodes.get_port_type_for_spec_type(spec_class)
    except KeyError:
        message = f"The provided input is unknown and therefore incompatible with '{port.name}'."
        raise knext.InvalidParametersError(message) from None
    expected: knext.PortType = port.type  # type: ignore[assignment]
    if not expected.is_super_type_of(incoming):
        raise knext.InvalidParametersError(
            f"The provided input port type {incoming.name} must be the same or a sub-type of {expected.name}."
        )
    return incoming


def _transfer_spec(port_type: knext.PortType, spec: Any) -> Any:
    assert isinstance(spec, port_type.spec_class), f"Expected a spec of type {port_type.spec_class}, got {type(spec)}"
    return _deserialized_spec(port_type, json.loads(json.dumps(spec.serialize())))


def _deserialized_spec(port_type: knext.PortType, data: Any) -> Any:
    """As KNIME does: ``deserialize(data, java_callback)``, and without the callback if that raises ``TypeError``."""
    try:
        return port_type.spec_class.deserialize(data, None)
    except TypeError:
        return port_type.spec_class.deserialize(data)


def _outgoing_spec(port: knext.Port, spec: Any) -> Any:
    if spec is None:
        return None
    if port.type == _TABLE:
        if isinstance(spec, knext.Column):
            spec = knext.Schema.from_columns(spec)
        assert isinstance(spec, knext.Schema), f"Expected a Schema for table port '{port.name}', got {type(spec)}"
        duplicates = sorted({n for n in spec.column_names if spec.column_names.count(n) > 1})
        if duplicates:
            raise RuntimeError(f"Duplicate column names detected: {duplicates}")
        return _with_metadata(spec)
    return _transfer_spec(port.type, spec)  # type: ignore[arg-type]


def _incoming_object(port: knext.Port, value: Any) -> Any:
    import pandas as pd

    if value is None:
        return None
    if port.type == _TABLE:
        if not isinstance(value, (knext.Table, knext.BatchOutputTable, pd.DataFrame)):
            raise TypeError(f"Table port '{port.name}' needs a table, got {type(value)}")
        return source_table(value)
    incoming = _incoming_type(port, type(value.spec))
    return _transfer_object(incoming, port, value)


def _outgoing_object(port: knext.Port, value: Any) -> Any:
    if value is None:
        return None
    if port.type == _TABLE:
        if not isinstance(value, (knext.Table, knext.BatchOutputTable)):
            raise TypeError(
                f"Object for port {port} should be of type Table or BatchOutputTable, but got {type(value)}"
            )
        return _handed_on(value)
    return _transfer_object(port.type, port, value)  # type: ignore[arg-type]


def _transfer_object(port_type: knext.PortType, port: knext.Port, value: Any) -> Any:
    """Consumers get a new object: deserialized from bytes, or rebuilt from shared connection data."""
    assert isinstance(value, port_type.object_class), f"Expected {port_type.object_class}, got {type(value)}"
    spec = _transfer_spec(port_type, value.spec)
    if isinstance(value, knext.ConnectionPortObject):
        return port.type.object_class.from_connection_data(spec, value.to_connection_data())  # type: ignore[union-attr]
    return port_type.object_class.deserialize(spec, value.serialize())


def _with_metadata(schema: knext.Schema) -> knext.Schema:
    """Input schemas in KNIME carry a metadata dict on every column."""
    return knext.Schema.from_columns(
        [knext.Column(c.ktype, c.name, c.metadata or _table._column_metadata(c.ktype)) for c in schema]
    )
