"""The column types KNIME's Java side registers in a Python process before loading an extension.

KNIME calls ``EntryPoint.registerPythonValueFactory`` once per ``PythonValueFactory`` declared in a plug-in, with the
Java ``ValueFactory``'s data spec and data traits serialized as JSON. Without it ``knext.logical(T)`` raises
``TypeError`` and cells of that type cannot be read. Registered here: what the extension's nodes read or write.

- PNG images: ``org.knime.core.data.image.png.PNGImageValueFactory`` ⇄ ``PIL.Image.Image``
  (``knime.types.builtin.PNGImageValueFactory``; a table-or-file-store value: file-store keys, then the bytes).
- Workflow tools: ``org.knime.core.node.agentic.tool.WorkflowToolValueFactory`` ⇄ ``knime.types.tool.WorkflowTool``
  (a file-store value: file-store keys, then name, description, parameter schema, input and output ports, and the
  message output port index).
"""

from __future__ import annotations

import json
from typing import Any

_Type = tuple[Any, dict[str, Any]]
"""A data spec and its data traits, as KNIME serializes them."""


def _simple(kind: str) -> _Type:
    return kind, {"type": "simple", "traits": {}}


def _list(inner: _Type) -> _Type:
    return {"type": "list", "inner_type": inner[0]}, {"type": "list", "traits": {}, "inner": inner[1]}


def _struct(*inner: _Type) -> _Type:
    specs, traits = zip(*inner, strict=True)
    return {"type": "struct", "inner_types": list(specs)}, {"type": "struct", "traits": {}, "inner": list(traits)}


def _file_store_value(java_value_factory: str, table_data: _Type) -> _Type:
    """KNIME's file-store backed values: a struct of the file-store keys and the data kept in the table."""
    spec, traits = _struct(_simple("string"), table_data)
    logical_type = '{"value_factory_class":"' + java_value_factory + '"}'
    return spec, {**traits, "traits": {"logical_type": logical_type}}


_STRING = _simple("string")
_TOOL_PORT = _struct(_STRING, _STRING, _STRING, _STRING)

VALUE_FACTORIES: list[tuple[str, str, str, _Type, str]] = [
    (
        "knime.types.builtin",
        "PNGImageValueFactory",
        "PNG Image",
        _file_store_value("org.knime.core.data.image.png.PNGImageValueFactory", _simple("variable_width_binary")),
        "PIL.Image.Image",
    ),
    (
        "knime.types.tool",
        "WorkflowToolValueFactory",
        "Workflow Tool",
        _file_store_value(
            "org.knime.core.node.agentic.tool.WorkflowToolValueFactory",
            _struct(_STRING, _STRING, _STRING, _list(_TOOL_PORT), _list(_TOOL_PORT), _simple("int")),
        ),
        "knime.types.tool.WorkflowTool",
    ),
]
"""(Python module, Python value factory, KNIME type name, data spec and traits, Python value type)."""


def tool_factory(discriminator: str = "int") -> tuple[str, str, str, _Type, str]:
    """KNIME's unified Tool (its unreleased mcp-tools branch, see ``real_knime.tool_overlay``), as the branch's
    ``tool.py`` writes it: the tool type's index, name, description, parameter schema (JSON), input and output ports
    (JSON text), message output port index, a reserved field, server URI and credential name. knime-core's
    ``ToolValueFactory`` declares the index as a byte (``discriminator="byte"``), which knime-python's schema cannot
    express (``knext.logical`` then raises TypeError); ``"int"`` is the form Python can use."""
    table_data = _struct(
        _simple(discriminator), _STRING, _STRING, _STRING, _STRING, _STRING, _simple("int"), _STRING, _STRING, _STRING
    )
    spec = _file_store_value("org.knime.core.node.agentic.tool.ToolValueFactory", table_data)
    return "knime.types.tool", "ToolValueFactory", "Tool", spec, "knime.types.tool.Tool"


def register(entry_point: Any) -> None:
    """Register every value factory through ``entry_point``, as KNIME does when it starts a Python process."""
    for entry in VALUE_FACTORIES:
        _register(entry_point, entry)


def register_tool(entry_point: Any, discriminator: str = "int") -> None:
    """Register :func:`tool_factory`, as a KNIME built from the mcp-tools branch does; never done by
    :func:`register`, as released KNIME has no such type."""
    _register(entry_point, tool_factory(discriminator))


def _register(entry_point: Any, entry: tuple[str, str, str, _Type, str]) -> None:
    module, factory, type_name, (spec, traits), value_type = entry
    entry_point.registerPythonValueFactory(
        module, factory, type_name, json.dumps(spec), json.dumps(traits), value_type, True
    )
