"""The three places where KNIME's Python code needs a live py4j gateway to the JVM, each modelled by one small adapter.

Everything else the launcher calls on "Java" is a plain Python object of :mod:`real_knime.java`, as py4j would hand
it over; only these calls go through the gateway itself:

- ``knime._backend._gateway.client_server``: :class:`Gateway`. ``ArrowDataSink`` builds the columnar schema it reports
  to Java through ``client_server.jvm`` (``knime._arrow._backend.convert_schema``); here the JVM classes it names
  answer with a description of the schema, and the real ``convert_type`` still refuses what Java cannot store.
- ``_node_backend_launcher._to_java_list``: :func:`to_java_list`. py4j copies the list of output specs or port
  objects into a ``java.util.ArrayList``; here it stays a Python list.
- ``_node_backend_launcher._create_linked_hashmap``: :class:`JavaMap`. Flow variables go to Java in a
  ``java.util.LinkedHashMap``; ``put`` converts each value as py4j does and fails as py4j does (an
  ``AttributeError`` the launcher turns into a ``TypeError``) for values Java cannot receive.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from py4j import java_collections, protocol


def install() -> None:
    """Put the adapters where the launcher looks them up (module attributes, read at call time)."""
    import _node_backend_launcher as launcher
    import knime._backend._gateway as kg

    kg.client_server = Gateway()
    launcher._to_java_list = to_java_list
    launcher._create_linked_hashmap = JavaMap


class _DataSpec:
    """``org.knime.core.table.schema.DataSpec``: its static ``<kind>Spec()`` factories give the kind's name."""

    def __getattr__(self, factory: str) -> Callable[[], str]:
        return lambda: factory.removesuffix("Spec")


class _ColumnarSchemaBuilder:
    """``org.knime.python3.arrow.PythonColumnarSchemaBuilder``: collects the column specs."""

    def __init__(self) -> None:
        self._columns: list[Any] = []

    def addColumn(self, spec: Any) -> None:  # noqa: N802  (Java's name)
        self._columns.append(spec)

    def build(self) -> list[Any]:
        return self._columns


class Gateway:
    """``client_server``: only the JVM classes ``ArrowDataSink`` asks for, and ``new_array``."""

    def __init__(self) -> None:
        self.jvm = _packages(
            {
                "org.knime.core.table.schema.DataSpec": _DataSpec(),
                "org.knime.core.table.schema.StructDataSpec": lambda children: ("struct", list(children)),
                "org.knime.core.table.schema.ListDataSpec": lambda child: ("list", child),
                "org.knime.python3.arrow.PythonColumnarSchemaBuilder": _ColumnarSchemaBuilder,
            }
        )

    def new_array(self, java_class: Any, length: int) -> list[Any]:
        return [None] * length


def _packages(classes: dict[str, Any]) -> SimpleNamespace:
    """``{"org.knime.X": cls}`` as nested attributes, the way ``jvm.org.knime.X`` reaches a class."""
    root = SimpleNamespace()
    for name, java_class in classes.items():
        *packages, simple_name = name.split(".")
        package = root
        for part in packages:
            package = package.__dict__.setdefault(part, SimpleNamespace())
        setattr(package, simple_name, java_class)
    return root


def to_java_list(items: list[Any]) -> list[Any]:
    return list(items)


class JavaMap(dict):  # type: ignore[type-arg]
    """A ``java.util.LinkedHashMap`` reached through py4j: ``put`` sends each value the way py4j does."""

    def __setitem__(self, key: str, value: Any) -> None:
        _check_sendable(value)
        super().__setitem__(key, value)


def _check_sendable(value: Any) -> None:
    """py4j's automatic conversion: an iterable (a list, a set; a map by its keys) becomes a Java collection of its
    items; any other value is encoded by py4j's protocol, which raises ``AttributeError`` if it cannot be sent."""
    if java_collections.ListConverter().can_convert(value):
        for item in value:
            _check_sendable(item)
    else:
        protocol.get_command_part(value)
