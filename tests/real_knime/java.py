"""Test doubles of the Java objects KNIME hands to a Python node process, modelled on what KNIME sends.

py4j passes Java objects to Python as proxies whose methods the launcher calls; these classes have the same method
names and return what the Java side returns (Python lists and dicts where py4j would give Java collections).

The workflow a node runs in is the test's context object (``tests/node_contexts.py``, or ``knime.extension.testing``'s
contexts for a workflow without credentials): the Java side asks it what a node would ask its context (credentials,
flow variables, whether the user canceled) and passes on to it what the node reports (warnings, progress, the flow
variables it set). KNIME's own contexts are then built around these doubles by the launcher.

- :class:`DataSink`, :class:`DataSource`, :class:`ReportedDataSource`: Arrow files between Python and Java
  (``PythonArrowDataSink``/``Source``).
- :class:`BufferedDataTable`, :class:`BinaryPortObject`: port objects as KNIME hands them to the next node.
- :class:`FileStores`: the workflow's file stores (file-store backed cells and custom port objects live there).
- :class:`ProcessCallback`, :class:`NodeCallback`: the callbacks of the node backend and of one node.
- :class:`ConfigurationContext`, :class:`ExecutionContext`, :class:`DialogContext`: the Java contexts of
  ``configure``, ``execute`` and of a dialog being opened.
- :class:`JavaException`: what py4j raises in Python when a Java method throws.
"""

from __future__ import annotations

import itertools
import json
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from py4j.protocol import Py4JJavaError

ARROW = "org.knime.python3.arrow"
BUFFERED_DATA_TABLE = "org.knime.core.node.BufferedDataTable"
BINARY_PORT_OBJECT = "org.knime.python3.nodes.ports.PythonBinaryBlobFileStorePortObject"
BINARY_PORT_OBJECT_SPEC = "org.knime.python3.nodes.ports.PythonBinaryBlobPortObjectSpec"
PortMap = dict[str, list[int]]
"""A declared port's name (or ``"Input <name> # <index>"``) → the positions of its connected ports."""

_VALUE_CLASSES = {
    "Number (Integer)": "org.knime.core.data.IntValue",
    "Number (Long Integer)": "org.knime.core.data.LongValue",
    "Number (Float)": "org.knime.core.data.DoubleValue",
    "Boolean": "org.knime.core.data.BooleanValue",
    "String": "org.knime.core.data.StringValue",
    "PNG Image": "org.knime.core.data.image.png.PNGImageValue",
    "Workflow Tool": "org.knime.core.node.agentic.tool.WorkflowToolValue",
    "Tool": "org.knime.core.node.agentic.tool.ToolValue",
}
"""Preferred value class per displayed type name (KNIME's class names; others get ``DataValue``)."""


class JavaException(Py4JJavaError):
    """A Java exception as py4j raises it in Python; it carries only the message (py4j's asks the JVM for it)."""

    def __init__(self, message: str) -> None:
        Exception.__init__(self, message)
        self.errmsg = message

    def __str__(self) -> str:
        return self.errmsg


@dataclass(frozen=True)
class FileStoreFile:
    """What ``create_filestore_file()`` returns: a file store for a port object."""

    key: str
    path: str

    def get_key(self) -> str:
        return self.key

    def get_file_path(self) -> str:
        return self.path


class FileStores:
    """The workflow's file stores: one file each in ``folder``, found again by key."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        self._numbers = itertools.count(1)

    def create_file_store(self) -> tuple[str, str]:
        """A new file store for a cell: its path and key."""
        key = f"fs-{next(self._numbers)}"
        return self.file_store_key_to_absolute_path(key), key

    def create_filestore_file(self) -> FileStoreFile:
        """A new file store for a port object."""
        path, key = self.create_file_store()
        return FileStoreFile(key, path)

    def file_store_key_to_absolute_path(self, key: str) -> str:
        return str(self._folder / key)


class DataSink:
    """``PythonArrowDataSink``: the Arrow file Python writes a table into, and where each batch starts as Python reports
    it (``ArrowDataSink`` reports only batches with rows). The columnar schema and the final size are taken note of
    and not kept."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self.batch_offsets: list[int] = []

    def getIdentifier(self) -> str:  # noqa: N802  (Java's names, here and below)
        return ARROW

    def getAbsolutePath(self) -> str:  # noqa: N802
        return str(self._path)

    def setColumnarSchema(self, schema: Any) -> None:  # noqa: N802
        pass

    def reportBatchWritten(self, offset: int) -> None:  # noqa: N802
        self.batch_offsets.append(offset)

    def setFinalSize(self, size: int) -> None:  # noqa: N802
        pass


class DataSource:
    """``PythonArrowDataSource`` of a finished table: an Arrow file read through its footer, its column names inside."""

    def __init__(self, path: str) -> None:
        self._path = path

    def getIdentifier(self) -> str:  # noqa: N802
        return ARROW

    def getAbsolutePath(self) -> str:  # noqa: N802
        return self._path

    def isFooterWritten(self) -> bool:  # noqa: N802
        return True

    def hasColumnNames(self) -> bool:  # noqa: N802
        return False


class ReportedDataSource(DataSource):
    """``PythonArrowDataSource`` of a table known by the batches reported while it was written (Java's
    ``PythonArrowBatchStoreDataSource`` with an offset provider): read batch by batch at those offsets, not through a
    footer."""

    def __init__(self, path: str, batch_offsets: list[int]) -> None:
        super().__init__(path)
        self._batch_offsets = batch_offsets

    def isFooterWritten(self) -> bool:  # noqa: N802
        return False

    def numBatches(self) -> int:  # noqa: N802
        return len(self._batch_offsets)

    def getRecordBatchOffset(self, index: int) -> int:  # noqa: N802
        return self._batch_offsets[index]


class BufferedDataTable:
    """A table as KNIME hands it to a node: each reader gets its own data source over the table's Arrow file.

    KNIME makes the source from the table's store (``PythonArrowDataUtils.createSource``). A finished store is read
    through the file's footer, which lists every batch written, also the empty batch Python writes for a table
    without rows: so a Python node's output reaches the next node. A store that knows its batch offsets is read at
    them and has only the batches reported: with ``reported=True`` those Python reported (only batches with rows), so
    a table without rows has no batch at all, as KNIME may hand over an empty table (a Java node's, say)."""

    def __init__(self, sink: DataSink, reported: bool = False) -> None:
        self._path = sink.getAbsolutePath()
        self._batch_offsets = list(sink.batch_offsets) if reported else None

    def getJavaClassName(self) -> str:  # noqa: N802
        return BUFFERED_DATA_TABLE

    def getDataSource(self) -> DataSource:  # noqa: N802
        if self._batch_offsets is None:
            return DataSource(self._path)
        return ReportedDataSource(self._path, self._batch_offsets)


class BinaryPortObject:
    """A custom port object as KNIME keeps it (also in a saved workflow) and hands it to the next node: its spec and
    its file-store file."""

    def __init__(self, spec: Any, path: str) -> None:
        self._spec = spec
        self._path = path

    @classmethod
    def returned(cls, python_object: Any, file_stores: FileStores) -> BinaryPortObject:
        """What KNIME keeps of a port object Python returned: the spec Python gave and the file store Python wrote."""
        path = file_stores.file_store_key_to_absolute_path(python_object.getFileStoreKey())
        return cls(python_object.getSpec(), path)

    def getJavaClassName(self) -> str:  # noqa: N802
        return BINARY_PORT_OBJECT

    def getSpec(self) -> Any:  # noqa: N802
        return self._spec

    def getFilePath(self) -> str:  # noqa: N802
        return self._path


class ProcessCallback:
    """The callback KNIME gives the node backend once per process: no proxy configured, the system's temp folder."""

    def get_global_proxy_list(self) -> list[dict[str, str]]:
        return []

    def get_global_tmp_dir_path(self) -> str:
        return tempfile.gettempdir()


@dataclass(frozen=True)
class Failure:
    """The message the launcher reported through ``set_failure``, and the exception it was handling then, if any."""

    message: str
    exception: BaseException | None


class NodeCallback:
    """``PythonNodeModelProxy.Callback`` for one node run in the workflow ``workflow`` (a test context)."""

    def __init__(self, workflow: Any, file_stores: FileStores, new_sink: Callable[[], DataSink]) -> None:
        self._workflow = workflow
        self._file_stores = file_stores
        self._new_sink = new_sink
        self.failure: Failure | None = None

    def set_failure(self, message: str, details: str, invalid_settings: bool) -> None:
        # The launcher calls this inside its ``except`` block, so the exception it handles is still current (and
        # ``invalid_settings`` says whether it is an InvalidParametersError).
        self.failure = Failure(message, sys.exc_info()[1])

    def get_flow_variables(self) -> dict[str, Any]:
        return dict(self._workflow.flow_variables)

    def set_flow_variables(self, flow_variables: dict[str, Any]) -> None:
        self._workflow.flow_variables.update(flow_variables)

    def get_preferred_value_types_as_json(self, table_schema_json: str) -> str:
        return preferred_value_types_as_json(table_schema_json)

    def create_sink(self) -> DataSink:
        return self._new_sink()

    def create_filestore_file(self) -> FileStoreFile:
        return self._file_stores.create_filestore_file()

    def file_store_key_to_absolute_path(self, key: str) -> str:
        return self._file_stores.file_store_key_to_absolute_path(key)

    def create_file_store(self) -> tuple[str, str]:
        return self._file_stores.create_file_store()


def preferred_value_types_as_json(table_schema_json: str) -> str:
    return json.dumps(column_metadata(json.loads(table_schema_json)))


def column_metadata(table_spec: dict[str, Any]) -> list[dict[str, str]]:
    """The metadata KNIME attaches to each data column of a table spec (the RowKey column has none)."""
    import knime.api.schema as ks

    return [
        {
            "preferred_value_type": _VALUE_CLASSES.get(str(column.ktype), "org.knime.core.data.DataValue"),
            "displayed_column_type": str(column.ktype),
        }
        for column in ks.Schema.deserialize(table_spec)
    ]


class _WorkflowContext:
    """What every Java context answers: the workflow's credentials and the map of the node's input ports."""

    def __init__(self, workflow: Any, input_port_map: PortMap) -> None:
        self._workflow = workflow
        self._input_port_map = input_port_map

    def get_credential_names(self) -> list[str]:
        return list(self._workflow.get_credential_names())

    def get_credentials(self, identifier: str) -> list[str]:
        try:
            credential = self._workflow.get_credentials(identifier)
        except KeyError as missing:
            raise JavaException(str(missing)) from None
        return [credential.username, credential.password, credential.credential_name]

    def get_input_port_map(self) -> PortMap:
        return self._input_port_map


class DialogContext(_WorkflowContext):
    """The Java context of a dialog being opened: also the specs at the node's connected input ports, as Java specs."""

    def __init__(self, workflow: Any, input_specs: list[Any], input_port_map: PortMap) -> None:
        super().__init__(workflow, input_port_map)
        self._input_specs = input_specs

    def get_input_specs(self) -> list[Any]:
        return self._input_specs


class ConfigurationContext(_WorkflowContext):
    """The Java context of ``configure``: also the node's id, its output ports and its warning."""

    def __init__(self, workflow: Any, node_id: str, port_maps: tuple[PortMap, PortMap]) -> None:
        super().__init__(workflow, port_maps[0])
        self._node_id = node_id
        self._output_port_map = port_maps[1]

    def get_output_port_map(self) -> PortMap:
        return self._output_port_map

    def get_node_id(self) -> str:
        return self._node_id

    def set_warning(self, message: str) -> None:
        self._workflow.set_warning(message)


@dataclass(frozen=True)
class ToolResult:
    """``WorkflowToolResult``: the tool's message, its output tables (``None`` when it failed) and view node ids."""

    _message: str
    _outputs: list[BufferedDataTable] | None
    _view_node_ids: list[str]

    def message(self) -> str:
        return self._message

    def outputs(self) -> list[BufferedDataTable] | None:
        return self._outputs

    def viewNodeIds(self) -> list[str]:  # noqa: N802
        return self._view_node_ids


class _RunsWorkflowTools:
    """``execute_tool`` as KNIME's execution and view contexts have it (Java's ``ToolExecutor`` behind both).

    A workflow tool is the test's scripted ``_execute_tool`` on its context: it gets the tool and the input tables
    decoded from what Python sent, as KNIME's tool execution would see them, and its output tables go back to
    Python as tables. A ``RuntimeError`` it raises is a failed tool (no outputs, its message)."""

    _workflow: Any
    _to_python: Callable[[Any], Any]
    _to_java: Callable[[Any], BufferedDataTable]
    _view_data: ViewData | None

    def get_view_data(self) -> ViewData | None:
        """What the node's view kept when it was applied (KNIME 5.6 and later ask; 5.5 has no view data)."""
        return self._view_data

    def execute_tool(
        self, tool_table: Any, parameter_json: str, inputs: list[Any], execution_hints: dict[str, str]
    ) -> ToolResult:
        (tool,) = self._to_python(tool_table).to_pandas()["tool"]
        tables = [self._to_python(table) for table in inputs]
        try:
            message, outputs, view_node_ids = self._workflow._execute_tool(
                tool, json.loads(parameter_json), tables, dict(execution_hints)
            )
        except RuntimeError as failed:
            return ToolResult(str(failed), None, [])
        return ToolResult(message, [self._to_java(table) for table in outputs], list(view_node_ids))


class ExecutionContext(_RunsWorkflowTools, ConfigurationContext):
    """The Java context of ``execute``: also progress, the cancel button, and running workflow tools."""

    def __init__(
        self,
        workflow: Any,
        node_id: str,
        port_maps: tuple[PortMap, PortMap],
        to_python: Callable[[Any], Any],
        to_java: Callable[[Any], BufferedDataTable],
        view_data: ViewData | None = None,
    ) -> None:
        super().__init__(workflow, node_id, port_maps)
        self._to_python = to_python
        self._to_java = to_java
        self._view_data = view_data

    def set_progress(self, progress: float, message: str | None = None) -> None:
        self._workflow.set_progress(progress, message)

    def is_canceled(self) -> bool:
        return bool(self._workflow.is_canceled())


class ViewContext(_RunsWorkflowTools, _WorkflowContext):
    """The Java context of ``get_data_service`` (``DefaultViewContext``): credentials, port maps, running workflow
    tools and the view data; no node id, progress, cancel or warning. KNIME 5.9+ also combine the view's tool runs
    into one workflow (``init_combined_tools_workflow``), which the node does not use."""

    def __init__(
        self,
        workflow: Any,
        port_maps: tuple[PortMap, PortMap],
        to_python: Callable[[Any], Any],
        to_java: Callable[[Any], BufferedDataTable],
        view_data: ViewData | None = None,
    ) -> None:
        super().__init__(workflow, port_maps[0])
        self._output_port_map = port_maps[1]
        self._to_python = to_python
        self._to_java = to_java
        self._view_data = view_data

    def get_output_port_map(self) -> PortMap:
        return self._output_port_map


@dataclass(frozen=True)
class ViewData:
    """``PythonViewData`` as Java keeps it between the view and the next execution: the JSON the data service's
    ``get_view_data`` gave, its tables as KNIME stores them, and the tables it named by id."""

    _data: str
    _ports: list[Any]
    _ports_for_ids: list[Any]

    def data(self) -> str:
        return self._data

    def ports(self) -> list[Any]:
        return self._ports

    def portsForIds(self) -> list[Any]:  # noqa: N802
        return self._ports_for_ids
