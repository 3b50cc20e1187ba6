"""``knime.extension`` (``knext``) for headless tests: the subset our nodes use, with KNIME's semantics.

Only importable when the real ``knime-extension`` package is missing (see ``tests/knext_bootstrap.py``). Like
the real package it needs ``import knime.extension.testing`` before tables or port types can be created.
Each module states which KNIME behaviour it mirrors and where it is deliberately stricter.
"""

from knime.extension._schema import (
    Column,
    KnimeType,
    ListType,
    LogicalType,
    PortObjectSpec,
    PrimitiveType,
    Schema,
    StructType,
    blob,
    bool_,
    double,
    int32,
    int64,
    list_,
    logical,
    null,
    string,
    struct,
)
from knime.extension._table import BatchOutputTable, Table
from knime.extension.nodes import (
    ConfigurationContext,
    ConnectionPortObject,
    DialogCreationContext,
    ExecutionContext,
    InvalidParametersError,
    NodeType,
    Port,
    PortObject,
    PortType,
    PythonNode,
    WorkflowExecutionError,
    category,
    input_port,
    input_table,
    input_table_group,
    node,
    output_port,
    output_table,
    output_table_group,
    output_view,
    port_type,
)
from knime.extension.parameter import (
    And,
    BoolParameter,
    ColumnParameter,
    Condition,
    DoubleParameter,
    Effect,
    EnumParameter,
    EnumParameterOptions,
    EnumSetParameter,
    IntParameter,
    MultilineStringParameter,
    OneOf,
    Or,
    StringParameter,
    Version,
    parameter_group,
)

__all__ = [
    "And", "BatchOutputTable", "BoolParameter", "Column", "ColumnParameter", "Condition", "ConfigurationContext",
    "ConnectionPortObject", "DialogCreationContext", "DoubleParameter", "Effect", "EnumParameter",
    "EnumParameterOptions", "EnumSetParameter", "ExecutionContext", "IntParameter", "InvalidParametersError",
    "KnimeType", "ListType", "LogicalType", "MultilineStringParameter", "NodeType", "OneOf", "Or", "Port",
    "PortObject", "PortObjectSpec", "PortType", "PrimitiveType", "PythonNode", "Schema", "StringParameter",
    "StructType", "Table", "Version", "WorkflowExecutionError", "blob", "bool_", "category", "double",
    "input_port", "input_table", "input_table_group", "int32", "int64", "list_", "logical", "node", "null",
    "output_port", "output_table", "output_table_group", "output_view", "parameter_group", "port_type", "string",
    "struct",
]
