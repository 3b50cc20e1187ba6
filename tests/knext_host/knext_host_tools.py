"""Host-only test tools: what KNIME does around a node, which ``knime.extension.testing`` cannot show.

Not part of any KNIME package; importable only when the headless host is in use, so tests that need it do
``knext_host_tools = pytest.importorskip("knext_host_tools")``.

- ``source_table(data, batch_size=None)``: a table as KNIME passes it into ``execute`` (``batches()`` works,
  schema columns carry KNIME's metadata dicts).
- ``configure_node(node, ctx, *specs)`` / ``execute_node(node, ctx, *inputs)``: run the node the way the KNIME
  launcher does (knext-api 2, 7) and return what downstream nodes would receive. The work is done by a fresh
  instance carrying ``node``'s settings, so instance state never leaks between calls; column parameters are
  checked against the input specs; results are checked per output port (a DataFrame is not a table, a custom
  spec must be its port type's class, duplicate column names fail); custom specs travel through JSON and
  custom objects through ``serialize``/``deserialize``; a canceled execution raises ``NodeCanceled``; the
  settings after the call are written back to ``node``.

    spec, = configure_node(node, TestingConfigurationContext(), tools.schema)
    out, = execute_node(node, TestingExecutionContext(), tools)
    assert out.to_pandas()["name"].tolist() == ["echo"]
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import knime.extension as knext
from knime.extension import _table, nodes
from knime.extension.parameter import extract_parameters, inject_parameters, validate_specs

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

_TABLE = knext.PortType.TABLE


class NodeCanceled(Exception):
    """KNIME marks the node "Canceled" and drops its outputs when ``is_canceled()`` is true after ``execute``."""


def source_table(
    data: pd.DataFrame | pa.Table | knext.Table | knext.BatchOutputTable, batch_size: int | None = None
) -> knext.Table:
    """An ``execute`` input built from ``data``, in one batch unless ``batch_size`` says otherwise.

    A ``BatchOutputTable`` and a source table (a node's output handed on) keep their batches. An empty table has no
    batches at all (the strictest reading).
    """
    import pandas as pd
    import pyarrow as pa

    if isinstance(data, knext.BatchOutputTable):
        empty = pa.table({_table._ROW_ID: pa.array([], pa.string())})
        arrow = pa.concat_tables(data._batches) if data._batches else empty
        batch_size = data._batches[0].num_rows if data._batches else None
    elif isinstance(data, _table._SourceTable):
        arrow = data._data
        batch_size = batch_size or data._batch_size
    elif isinstance(data, knext.Table):
        arrow = data._data
    elif isinstance(data, pd.DataFrame):
        arrow = knext.Table.from_pandas(data)._data
    else:
        arrow = knext.Table.from_pyarrow(data)._data
    table = _table._SourceTable._wrap(arrow)
    table._batch_size = max(batch_size or arrow.num_rows, 1)
    return table


def configure_node(node: Any, ctx: knext.ConfigurationContext, *specs: Any) -> list[Any]:
    """The output specs KNIME would pass downstream after configuring ``node`` with ``specs``."""
    record = _record(node, specs)
    fresh = _fresh_instance(record, node)
    empty = knext.Schema.from_columns([])
    validate_specs(fresh, [empty if s is None and p.type == _TABLE else s for p, s in zip(record.input_ports, specs)])
    inputs = [_incoming_spec(p, s) for p, s in zip(record.input_ports, specs)]
    result = fresh.configure(ctx, *inputs)
    outputs = [_outgoing_spec(p, s) for p, s in zip(record.output_ports, _per_port(result, record.output_ports))]
    inject_parameters(node, extract_parameters(fresh))
    return outputs


def execute_node(node: Any, ctx: knext.ExecutionContext, *inputs: Any) -> list[Any]:
    """The port objects KNIME would pass downstream after executing ``node`` on ``inputs``."""
    record = _record(node, inputs)
    fresh = _fresh_instance(record, node)
    objects = [_incoming_object(p, o) for p, o in zip(record.input_ports, inputs)]
    result = fresh.execute(ctx, *objects)
    if ctx.is_canceled():
        raise NodeCanceled("Execution canceled")
    outputs = [_outgoing_object(p, o) for p, o in zip(record.output_ports, _per_port(result, record.output_ports))]
    inject_parameters(node, extract_parameters(fresh))
    return outputs


def _record(node: Any, inputs: tuple[Any, ...]) -> nodes._Node:
    record = next((r for r in nodes._nodes.values() if type(node) is r.node_class), None)
    if record is None:
        raise TypeError(f"{node!r} was not created by a @knext.node factory")
    if len(inputs) != len(record.input_ports):
        raise TypeError(f"{record.id} has {len(record.input_ports)} input ports, got {len(inputs)} inputs")
    for port, value in zip(record.input_ports, inputs):
        if value is None and not port.optional:
            raise ValueError(f"Input port '{port.name}' is not optional; KNIME runs a node only when it is connected")
    return record


def _fresh_instance(record: nodes._Node, node: Any) -> Any:
    fresh = record.factory()
    inject_parameters(fresh, extract_parameters(node))
    return fresh


def _per_port(result: Any, ports: list[knext.Port]) -> list[Any]:
    """KNIME's packing: a list with one entry per port, or a single value for a single port."""
    if isinstance(result, list) and len(result) == len(ports):
        return result
    if len(ports) == 1:
        return [result]
    raise ValueError(f"Expected {len(ports)} results (one per output port), got {result!r}")


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
    data = json.loads(json.dumps(spec.serialize()))
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
        return source_table(value)
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
