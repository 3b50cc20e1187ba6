"""Runs the extension's nodes through KNIME's real node backend, with the interface of ``knext_host_tools``.

KNIME starts ``_node_backend_launcher._KnimeNodeBackend``, registers its column types, loads the extension
(``loadExtension``) and, for every configure or execute, creates a node proxy (``createNodeFromExtension``), gives
it its callback and settings and calls it with Java specs or port objects and a Java context. :func:`install` and
:func:`configure_node`/:func:`execute_node` do exactly that, with :mod:`real_knime.java` as the Java side:

- tables travel as Arrow files written by KNIME's ``ArrowDataSink`` and read as ``ArrowSourceTable``: a node's
  output through the file's footer, an input from upstream with the batches Python reported (none for a table
  without rows), see ``java.BufferedDataTable``;
- output specs and port objects come back as the next node would receive them (``spec_to_python``,
  ``port_object_to_python``), custom port objects through a file store;
- a failure the launcher reports (``set_failure``) is raised again as the exception the node raised;
  ``NodeCanceled`` when the node was canceled;
- the settings after the call are written back to the test's node (``getParameters``).

What else KNIME asks the launcher goes through the same calls: the node descriptions and categories
(``retrieveNodesAsJson``, ``retrieveCategoriesAsJson``: :func:`describe_node`, :func:`categories`), a dialog
(``getDialogRepresentation``: :func:`dialog`), settings saved, loaded and checked (``getParameters``,
``setParameters``, ``validateParameters``: :func:`save_settings`, :func:`load_settings`, :func:`validate_settings`),
and a custom port object in a saved workflow (:func:`save_port_object`, :func:`load_port_object`).

Between node calls, tables the test builds use KNIME's Arrow table backend too (the launcher removes its own after
each execute).
"""

from __future__ import annotations

import inspect
import itertools
import json
import tempfile
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import _node_backend_launcher as launcher
import knime._arrow._table as kat
import knime._backend._gateway as kg
import knime.api.table as kt
import knime.extension as knext
import knime.extension.nodes as kn
import yaml
from knime.extension.parameter import extract_parameters, inject_parameters

from port_layout import PortLayout
from real_knime import gateway, java, value_types
from real_knime.sources import REPO

_MANIFEST = yaml.safe_load((REPO / "knime.yml").read_text())
EXTENSION_ID = f"{_MANIFEST['group_id']}.{_MANIFEST['name']}"
VERSION = str(_MANIFEST["version"])
_TABLE_PORT = kn.Port(kn.PortType.TABLE, "Table", "A table.")
_DATA_TABLE_SPEC = "org.knime.core.data.DataTableSpec"
_LAYOUT = PortLayout(kn.PortGroup)


class NodeCanceled(Exception):
    """KNIME marks the node "Canceled" and drops its outputs when ``is_canceled()`` is true after ``execute``."""


class _Knime:
    """KNIME's side of one Python node process: a folder for tables and file stores, and the node backend."""

    def __init__(self) -> None:
        self._folder = tempfile.TemporaryDirectory(prefix="knime-mcp-real-knime-")
        root = Path(self._folder.name)
        (root / "tables").mkdir()
        (root / "filestores").mkdir()
        self._tables = root / "tables"
        self._table_numbers = itertools.count(1)
        self.file_stores = java.FileStores(root / "filestores")
        self._java_tables: weakref.WeakKeyDictionary[Any, java.BufferedDataTable] = weakref.WeakKeyDictionary()
        gateway.install()
        self.backend = launcher._KnimeNodeBackend()
        value_types.register(self.backend)
        self.backend.loadExtension(EXTENSION_ID, "extension", VERSION)
        self.backend.initializeJavaCallback(java.ProcessCallback())
        self.restore_table_backend()

    @property
    def registry(self) -> Any:
        return self.backend._port_type_registry

    def new_sink(self) -> java.DataSink:
        return java.DataSink(self._tables / f"table-{next(self._table_numbers)}.arrow")

    def restore_table_backend(self) -> None:
        """KNIME's Arrow backend for tables built outside a node; the launcher sets and removes its own."""
        kt._backend = kat._ArrowBackend(lambda: kg.data_sink_mapper(self.new_sink()))
        kt._backend.file_store_handler = self.file_stores

    def store(self, port_object: Any) -> Any:
        """What KNIME keeps of a port object Python returned, and hands to the next node."""
        if port_object.getJavaClassName() == java.BUFFERED_DATA_TABLE:
            return java.BufferedDataTable(port_object.getPythonArrowDataSink())
        if port_object.getJavaClassName() == java.BINARY_PORT_OBJECT:
            return java.BinaryPortObject.returned(port_object, self.file_stores)
        raise TypeError(f"Port objects of {port_object.getJavaClassName()} are not modelled")

    def receive(self, java_object: Any, port: kn.Port) -> Any:
        """A Java port object as a node receives it: tables with KNIME's column metadata."""
        python_object = self.registry.port_object_to_python(java_object, port, None)
        if isinstance(python_object, kat.ArrowSourceTable):
            python_object._inject_metadata(java.preferred_value_types_as_json)
            self._java_tables[python_object] = java_object
        return python_object

    def upstream_table(self, table: Any) -> java.BufferedDataTable:
        """An input table as KNIME holds it: the same Java table for one KNIME handed out, else ``table`` with the
        batches Python reported writing it, so without rows it has none (see ``java.BufferedDataTable``)."""
        known = self._java_tables.get(table)
        if known is not None:
            return known
        return java.BufferedDataTable(self.registry.table_from_python(table).getPythonArrowDataSink(), reported=True)

    def table_to_python(self, port_object: Any) -> Any:
        return self.receive(self.store(port_object), _TABLE_PORT)


_knime: _Knime | None = None


def install() -> None:
    """Start KNIME's node backend with its column types and load the extension; once, before tests import it."""
    global _knime
    _knime = _Knime()


def _session() -> _Knime:
    assert _knime is not None, "real_knime.driver.install() has not run"
    return _knime


def backend() -> Any:
    """KNIME's node backend of this process (``_KnimeNodeBackend``), e.g. to register a column type as Java does."""
    return _session().backend


def source_table(data: Any, batch_size: int | None = None) -> Any:
    """An ``execute`` input built from ``data``, as KNIME hands over a table from upstream: in one batch unless
    ``batch_size`` says otherwise, with the batches Python reported writing it, so without rows in none at all.

    ``data`` is a DataFrame, a pyarrow table or a KNIME table; a ``BatchOutputTable`` keeps its batches, and a table
    KNIME handed out (a node's output) stays the same table unless ``batch_size`` is given."""
    table = _knime_table(data)
    if batch_size is not None and isinstance(table, knext.Table):
        table = _rebatched(table, batch_size)
    knime = _session()
    return knime.receive(knime.upstream_table(table), _TABLE_PORT)


def _knime_table(data: Any) -> Any:
    import pandas as pd
    import pyarrow as pa

    if isinstance(data, pd.DataFrame):
        return knext.Table.from_pandas(data)
    if isinstance(data, pa.Table):
        return knext.Table.from_pyarrow(data)
    if isinstance(data, (knext.Table, knext.BatchOutputTable)):
        return data
    raise TypeError(f"Expected a DataFrame, a pyarrow table or a KNIME table, got {type(data)}")


def _rebatched(table: Any, batch_size: int) -> Any:
    data = table.to_pyarrow()
    out = knext.BatchOutputTable.create(row_ids="keep")
    for start in range(0, max(data.num_rows, 1), batch_size):
        out.append(data.slice(start, batch_size).combine_chunks())
    return out


class _NodeRun:
    """One configure or execute of a fresh node proxy carrying the settings of the test's ``node``.

    A port group's value is a list (one spec or table per port the user added); ``output_groups`` gives the number of
    ports the user added to each output group (default 0)."""

    _node_ids = itertools.count(1)

    def __init__(
        self, node: Any, workflow: Any, inputs: tuple[Any, ...], output_groups: Mapping[str, int] | None
    ) -> None:
        record = kn._nodes[_node_id(node)]
        _LAYOUT.check_inputs(record.id, record.input_ports, inputs)
        self.knime = _session()
        self.node_id = f"0:{next(self._node_ids)}"
        self.inputs = [
            (port, item)
            for port, value in zip(record.input_ports, inputs, strict=True)
            for item in _LAYOUT.items(port, value)
        ]
        self.output_ports: list[Any] = record.output_ports
        self.output_sizes = _LAYOUT.output_sizes(record.id, record.output_ports, output_groups)
        self.port_maps = (
            _LAYOUT.port_map(record.input_ports, _LAYOUT.input_sizes(record.input_ports, inputs), "Input"),
            _LAYOUT.port_map(record.output_ports, self.output_sizes, "Output"),
        )
        self.callback = java.NodeCallback(workflow, self.knime.file_stores, self.knime.new_sink)
        self.proxy = self.knime.backend.createNodeFromExtension(record.id)
        self.proxy.initializeJavaCallback(self.callback)
        self.proxy.setParameters(json.dumps(extract_parameters(node)), VERSION)

    def raise_failure(self) -> None:
        """The failure the launcher reported, if any, raised again: the node's exception, or ``NodeCanceled``."""
        failure = self.callback.failure
        if failure is not None:
            if failure.exception is None:  # the launcher reports only the cancellation outside an except block
                raise NodeCanceled(failure.message)
            raise failure.exception

    def outputs(self, java_outputs: list[Any] | None) -> list[tuple[kn.Port, Any]]:
        """The launcher's answer with the port of each output, or the failure it reported raised again."""
        self.raise_failure()
        assert java_outputs is not None
        ports = _LAYOUT.connected(self.output_ports, self.output_sizes, len(java_outputs))
        return list(zip(ports, java_outputs, strict=True))

    def grouped(self, values: list[Any]) -> list[Any]:
        """One value per output port, a list for a port group."""
        return _LAYOUT.grouped(values, self.output_ports, self.output_sizes)

    def write_back(self, node: Any) -> None:
        inject_parameters(node, json.loads(self.proxy.getParameters()), VERSION)


def _node_id(node: Any) -> str:
    """The id under which ``@knext.node`` registered the class of ``node`` (its factory closes over the class)."""
    for node_id, record in kn._nodes.items():
        if inspect.getclosurevars(record.node_factory).nonlocals.get("node_factory") is type(node):
            return node_id
    raise TypeError(f"{node!r} was not created by a @knext.node factory")


def configure_node(node: Any, ctx: Any, *specs: Any, output_groups: Mapping[str, int] | None = None) -> list[Any]:
    """The output specs KNIME would pass downstream after configuring ``node`` with ``specs`` in ``ctx``."""
    run = _NodeRun(node, ctx, specs, output_groups)
    java_specs = [_spec_to_java(run, port, spec) for port, spec in run.inputs]
    java_ctx = java.ConfigurationContext(ctx, run.node_id, run.port_maps)
    outputs = run.outputs(run.proxy.configure(java_specs, java_ctx))
    result = run.grouped([_spec_downstream(spec, port) for port, spec in outputs])
    run.write_back(node)
    return result


def execute_node(
    node: Any,
    ctx: Any,
    *inputs: Any,
    output_groups: Mapping[str, int] | None = None,
    view_data: java.ViewData | None = None,
) -> list[Any]:
    """The port objects KNIME would pass downstream after executing ``node`` on ``inputs`` in ``ctx``; with
    ``view_data``, after its view was applied (``DataService.view_data``)."""
    run = _NodeRun(node, ctx, inputs, output_groups)
    knime = run.knime
    java_inputs = [_object_to_java(run, port, value) for port, value in run.inputs]
    java_ctx = java.ExecutionContext(
        ctx, run.node_id, run.port_maps, knime.table_to_python, knime.upstream_table, view_data
    )
    try:
        java_outputs = run.proxy.execute(java_inputs, java_ctx)
    finally:
        knime.restore_table_backend()
    result = run.grouped([knime.receive(knime.store(out), port) for port, out in run.outputs(java_outputs)])
    run.write_back(node)
    return result


class DataService:
    """A node view's data service as KNIME's UI reaches it: each page call a JSON-RPC request through
    ``handleJsonRpcRequest``; ``view_data`` is what Java asks when the view is applied or closed (``getViewData``)."""

    def __init__(self, service: Any, knime: _Knime) -> None:
        self._service = service
        self._knime = knime
        self._ids = itertools.count(1)

    def request(self, method: str, *params: Any) -> Any:
        """The result of the page's call ``method(*params)``; an error answer raises RuntimeError with its message."""
        request = {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": list(params)}
        answer = json.loads(self._service.handleJsonRpcRequest(json.dumps(request)))
        if "error" in answer:
            raise RuntimeError(answer["error"]["message"])
        return answer["result"]

    def view_data(self) -> java.ViewData | None:
        """The view data KNIME keeps for the next execution; None where the launcher has none (KNIME 5.5)."""
        if not hasattr(self._service, "getViewData"):
            return None
        kept = self._service.getViewData()
        return java.ViewData(kept.data(), [self._knime.store(port) for port in kept.ports()], [])


def data_service(node: Any, ctx: Any, *inputs: Any, view_data: java.ViewData | None = None) -> DataService:
    """The data service of ``node``'s view over ``inputs``, as KNIME creates it when the view opens
    (``getDataService``); ``view_data``: what an earlier view kept. A failure the launcher reports is raised."""
    run = _NodeRun(node, ctx, inputs, None)
    knime = run.knime
    java_inputs = [_object_to_java(run, port, value) for port, value in run.inputs]
    java_ctx = java.ViewContext(ctx, run.port_maps, knime.table_to_python, knime.upstream_table, view_data)
    try:
        service = run.proxy.getDataService(java_ctx, java_inputs)
    finally:
        knime.restore_table_backend()
    run.raise_failure()
    return DataService(service, knime)


def describe_node(node_id: str) -> dict[str, Any]:
    """The node's entry in the JSON KNIME reads of the extension's nodes (``retrieveNodesAsJson``): id, category,
    ports and the descriptions KNIME renders from the docstring, port and parameter texts."""
    nodes = json.loads(_session().backend.retrieveNodesAsJson())
    return next(entry for entry in nodes if entry["id"] == node_id)


def categories() -> list[dict[str, Any]]:
    """The categories the extension registers, as KNIME reads them (``retrieveCategoriesAsJson``)."""
    return json.loads(_session().backend.retrieveCategoriesAsJson())


def dialog(node: Any, ctx: Any, *specs: Any) -> dict[str, Any]:
    """What KNIME's dialog gets for ``node`` with ``specs`` at its input ports in the workflow ``ctx`` (credentials,
    flow variables): the settings (``data``), the JSON schema and the UI schema of ``getDialogRepresentation``. A
    failure the launcher reports is raised again."""
    run = _NodeRun(node, ctx, specs, None)
    java_specs = [_spec_to_java(run, port, spec) for port, spec in run.inputs]
    dialog_ctx = java.DialogContext(ctx, java_specs, run.port_maps[0])
    representation = run.proxy.getDialogRepresentation(json.dumps(extract_parameters(node)), VERSION, dialog_ctx)
    run.raise_failure()
    return json.loads(representation)


def save_settings(node: Any) -> str:
    """The settings JSON KNIME saves for ``node`` (``getParameters`` of a node proxy carrying its settings)."""
    proxy = _session().backend.createNodeFromExtension(_node_id(node))
    proxy.setParameters(json.dumps(extract_parameters(node)), VERSION)
    return proxy.getParameters()


def load_settings(node_id: str, settings: str, saved_version: str) -> Any:
    """A node of ``node_id`` with the settings KNIME loads from ``settings``, saved by extension ``saved_version``
    (``setParameters`` on a fresh node proxy)."""
    proxy = _session().backend.createNodeFromExtension(node_id)
    proxy.setParameters(settings, saved_version)
    node = kn._nodes[node_id].node_factory()
    inject_parameters(node, json.loads(proxy.getParameters()), VERSION)
    return node


def validate_settings(node_id: str, settings: str, saved_version: str) -> str | None:
    """KNIME's check of settings being applied or loaded (``validateParameters``): None, or the message of why not."""
    proxy = _session().backend.createNodeFromExtension(node_id)
    return proxy.validateParameters(settings, saved_version)


def save_port_object(port_object: Any) -> tuple[str, bytes]:
    """What a saved workflow keeps of a custom port object a node output: its spec as JSON text, and its file store."""
    knime = _session()
    upstream = _upstream_port(port_object.spec)
    kept = knime.store(
        knime.registry.port_object_from_python(port_object, knime.file_stores.create_filestore_file, upstream, "0:0", 0)
    )
    return kept.getSpec().toJsonString(), Path(kept.getFilePath()).read_bytes()


def load_port_object(spec_json: str, data: bytes) -> Any:
    """The port object the next node gets once the workflow saved as ``save_port_object`` gave is opened again."""
    knime = _session()
    path, _ = knime.file_stores.create_file_store()
    Path(path).write_bytes(data)
    spec = launcher._PythonPortObjectSpec(java.BINARY_PORT_OBJECT_SPEC, json.loads(spec_json))
    port_type = knime.registry.get_port_type_for_id(spec.data["id"])
    return knime.receive(java.BinaryPortObject(spec, path), kn.Port(port_type, "Saved", "The saved port object."))


def _upstream_port(value: Any) -> kn.Port:
    """The output port of the node that produced a custom spec or port object: its registered port type."""
    return kn.Port(kn.get_port_type_for_spec_type(type(value)), "Upstream", "The producing node's port.")


def _spec_to_java(run: _NodeRun, port: kn.Port, spec: Any) -> Any:
    if isinstance(spec, launcher._PythonPortObjectSpec):  # already as Java holds it: another extension's spec
        return spec
    if port.type == kn.PortType.TABLE:
        return launcher._PythonPortObjectSpec(_DATA_TABLE_SPEC, _with_column_metadata(spec.serialize()))
    return run.knime.registry.spec_from_python(spec, _upstream_port(spec), "0:0", 0)


def _with_column_metadata(table_spec: dict[str, Any]) -> dict[str, Any]:
    """A table spec as KNIME sends it: every data column with KNIME's metadata."""
    row_key_metadata = table_spec["columnMetaData"][0]
    return {**table_spec, "columnMetaData": [row_key_metadata, *java.column_metadata(table_spec)]}


def _spec_downstream(spec: Any, port: kn.Port) -> Any:
    """An output spec as the next node receives it: KNIME keeps the JSON (and gives table columns metadata)."""
    if spec is None:
        return None
    if spec.getJavaClassName() == _DATA_TABLE_SPEC:
        spec = launcher._PythonPortObjectSpec(_DATA_TABLE_SPEC, _with_column_metadata(spec.data))
    return _session().registry.spec_to_python(spec, port, None)


def _object_to_java(run: _NodeRun, port: kn.Port, value: Any) -> Any:
    knime = run.knime
    if isinstance(value, java.BinaryPortObject):  # already as Java holds it: another extension's port object
        return value
    if port.type == kn.PortType.TABLE:
        return knime.upstream_table(_knime_table(value))
    upstream = _upstream_port(value.spec)
    return knime.store(
        knime.registry.port_object_from_python(value, knime.file_stores.create_filestore_file, upstream, "0:0", 0)
    )


def foreign_port_object(port_type_id: str, data: dict[str, Any], content: bytes = b"") -> java.BinaryPortObject:
    """A port object of a port type another Python extension registered, as KNIME hands it to a node of this one.

    KNIME's Java side knows every Python-defined port type as one Java type, ``PythonBinaryBlobFileStorePortObject``
    (``PythonPortTypeRegistry.getPortTypeForIdentifier``: "for other custom ports"), so it connects any of them to
    any custom input port. What travels is the spec JSON ``{"id": <port type id>, "data": <spec.serialize()>}`` the
    other extension's launcher wrote, and the file its ``serialize()`` filled; ``getSpec()`` gives the spec alone,
    for ``configure``."""
    path, _ = _session().file_stores.create_file_store()
    Path(path).write_bytes(content)
    spec = launcher._PythonPortObjectSpec(java.BINARY_PORT_OBJECT_SPEC, {"id": port_type_id, "data": data})
    return java.BinaryPortObject(spec, path)


def workflow_tool(
    name: str, description: str, parameter_schema: dict[str, Any], input_ports: Any = (), output_ports: Any = ()
) -> Any:
    """A workflow tool as KNIME puts it into a table: ``knime.types.tool.WorkflowTool``, its workflow in a file store
    of its own; ports are given by their name, description, type and spec."""
    from knime.types.tool import ToolPort, WorkflowTool

    path, key = _session().file_stores.create_file_store()
    Path(path).write_bytes(b"the tool's workflow, read by KNIME's Java side only")

    def ports(given: Any) -> list[ToolPort]:
        return [ToolPort(port.name, port.description, port.type, port.spec) for port in given]

    return WorkflowTool(
        name, description, parameter_schema, 0, ports(input_ports), ports(output_ports), _filestore_keys=key
    )


def workflow_tool_cells(tools: list[Any]) -> Any:
    """A column of workflow tools (``None``: a missing cell) as KNIME's Java side writes it into a table.

    KNIME's Python side cannot write one with missing cells (``WorkflowToolValueFactory.encode(None)`` fails), so the
    cells are encoded one by one, as the type's storage, around the missing ones."""
    import pyarrow as pa
    from knime.types.tool import WorkflowTool, WorkflowToolValueFactory

    kind = knext.logical(WorkflowTool).to_pyarrow()
    factory = WorkflowToolValueFactory()
    storage = pa.array([None if tool is None else factory.encode(tool) for tool in tools], kind.storage_type)
    return pa.ExtensionArray.from_storage(kind, storage)
