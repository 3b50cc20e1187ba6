"""Node declaration (``knext.node``, categories, port decorators) as in ``knime.extension.nodes`` (runtime).

Mirrored (knext-api 1-2): ``@knext.node`` instantiates the class three times while decorating (to read
``input_ports``, ``output_ports`` and ``output_view``) and returns a factory *function*; every factory call
rejects parameters created in ``__init__``, sets the port lists and ``output_view`` on the instance, and wraps
``configure``/``execute`` so lazy views are materialized and tuples become lists. Port decorators prepend, so
ports keep their top-to-bottom source order; a port decorator above ``@knext.node`` is silently lost.
Table port groups (``input_table_group``/``output_table_group``, 5.3) are ``PortGroup``s whose names must be unique
among the input (resp. output) groups (``ValueError``). Stricter than KNIME: ``input_port``/``output_port`` reject
anything but a ``PortType`` or built-in port type (KNIME fails only when it loads the extension). Not provided:
binary, image and non-table group ports, views.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from knime.extension._contexts import (
    ConfigurationContext,
    Credential,
    DialogCreationContext,
    ExecutionContext,
)
from knime.extension._params import _BaseParameter
from knime.extension._ports import (
    _BUILT_IN_PORT_TYPES,
    ConnectionPortObject,
    Port,
    PortGroup,
    PortObject,
    PortType,
    get_port_type_for_id,
    get_port_type_for_spec_type,
    has_port_type_for_id,
    port_type,
)
from knime.extension._schema import _ColumnarView

__all__ = [
    "ConfigurationContext",
    "ConnectionPortObject",
    "Credential",
    "DialogCreationContext",
    "ExecutionContext",
    "InvalidParametersError",
    "NodeType",
    "Port",
    "PortGroup",
    "PortObject",
    "PortType",
    "PythonNode",
    "WorkflowExecutionError",
    "category",
    "get_port_type_for_id",
    "get_port_type_for_spec_type",
    "has_port_type_for_id",
    "input_port",
    "input_table",
    "input_table_group",
    "node",
    "output_port",
    "output_table",
    "output_table_group",
    "port_type",
]


class InvalidParametersError(Exception):
    """Bad settings or incompatible input specs; KNIME reports it as a configuration problem."""


class WorkflowExecutionError(RuntimeError):
    """Raised by KNIME when executing a workflow port object fails."""


class NodeType(Enum):
    SOURCE = "Source"
    SINK = "Sink"
    LEARNER = "Learner"
    PREDICTOR = "Predictor"
    MANIPULATOR = "Manipulator"
    VISUALIZER = "Visualizer"
    OTHER = "Other"


class PythonNode(ABC):
    """Optional base class; KNIME only needs ``configure`` and ``execute``."""

    input_ports: list[Port] | None = None
    output_ports: list[Port] | None = None
    output_view: Any = None

    @abstractmethod
    def configure(self, config_context: ConfigurationContext, *inputs: Any) -> Any: ...

    @abstractmethod
    def execute(self, exec_context: ExecutionContext, *inputs: Any) -> Any: ...


_categories: list[dict[str, Any]] = []


def category(
    path: str, level_id: str, name: str, description: str, icon: str, after: str = "", locked: bool = True
) -> str:
    """Register a category once and return its full path."""
    _categories.append(
        {"path": path, "level_id": level_id, "name": name, "description": description, "icon": icon,
         "after": after, "locked": locked}
    )
    return path + level_id if path.endswith("/") else f"{path}/{level_id}"


@dataclass
class _Node:
    """What KNIME registers for a node; ``node_class`` is the undecorated class behind ``factory``."""

    id: str
    name: str
    node_type: str
    icon_path: str
    category: str
    after: str | None
    keywords: list[str]
    is_deprecated: bool
    is_hidden: bool
    node_class: type
    factory: Callable[..., Any]
    input_ports: list[Port | PortGroup] = field(default_factory=list)
    output_ports: list[Port | PortGroup] = field(default_factory=list)


_nodes: dict[str, _Node] = {}


def node(
    name: str,
    node_type: NodeType,
    icon_path: str,
    category: str,
    after: str | None = None,
    keywords: list[str] | None = None,
    id: str | None = None,
    is_deprecated: bool = False,
    is_hidden: bool = False,
) -> Callable[[type], Callable[..., Any]]:
    """Declare a node; must be the outermost decorator. Returns a factory function, not the class."""

    def register(node_class: type) -> Callable[..., Any]:
        input_ports = _declared(node_class, "input_ports") or []
        output_ports = _declared(node_class, "output_ports") or []
        view = _declared(node_class, "output_view")

        def port_injector(*args: Any, **kwargs: Any) -> Any:
            instance = node_class(*args, **kwargs)
            if any(isinstance(v, _BaseParameter) for v in vars(instance).values()):
                raise AttributeError(
                    "Only parameter group composition is allowed at the node-level. Individual parameters need to "
                    "be moved out of the node's `__init__` method and be either defined at the class-level or "
                    "encapsulated in a parameter group."
                )
            instance.input_ports, instance.output_ports, instance.output_view = input_ports, output_ports, view
            instance.execute = _unwrap_results(instance.execute)
            instance.configure = _unwrap_results(instance.configure)
            return instance

        node_id = id if id is not None else node_class.__name__
        kind = node_type.value if isinstance(node_type, NodeType) else "Unknown"
        _nodes[node_id] = _Node(
            node_id, name, kind, icon_path, category, after, keywords or [], is_deprecated, is_hidden,
            node_class, port_injector, input_ports, output_ports,
        )
        return port_injector

    return register


def _declared(node_class: type, attr: str) -> Any:
    """Read ``attr`` from a fresh instance, then from the class (each call instantiates the class once)."""
    value = getattr(node_class(), attr, None)
    return value if value is not None else getattr(node_class, attr, None)


def _unwrap_results(func: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        results = func(*args, **kwargs)
        if isinstance(results, (list, tuple)):
            return [r.get() if isinstance(r, _ColumnarView) else r for r in results]
        return results.get() if isinstance(results, _ColumnarView) else results

    return wrapper


def _add_port(node_class: Any, slot: str, port: Port | PortGroup) -> Any:
    marker = f"__knime_added_{slot}"
    if getattr(node_class, slot, None) is None:
        setattr(node_class, slot, [])
        setattr(node_class, marker, True)
    elif not hasattr(node_class, marker):
        raise ValueError(f"Cannot use '{slot}' decorator on object which has an attribute '{slot}' already")
    ports = getattr(node_class, slot)
    if isinstance(port, PortGroup) and any(isinstance(p, PortGroup) and p.name == port.name for p in ports):
        raise ValueError(
            f"A PortGroup named '{port.name}' already exists in the '{slot}' list. For Input and Output PortGroups, "
            "the name of a PortGroup must be unique."
        )
    ports.insert(0, port)
    return node_class


def _checked_port_type(port_type: Any) -> PortType | str:
    if not isinstance(port_type, PortType) and port_type not in _BUILT_IN_PORT_TYPES:
        raise TypeError(f"port_type must be a PortType returned by knext.port_type(), got {port_type!r}")
    return port_type


def input_table(name: str, description: str, optional: bool = False) -> Callable[[Any], Any]:
    return lambda cls: _add_port(cls, "input_ports", Port(PortType.TABLE, name, description, optional=optional))


def output_table(name: str, description: str) -> Callable[[Any], Any]:
    return lambda cls: _add_port(cls, "output_ports", Port(PortType.TABLE, name, description))


def input_port(name: str, description: str, port_type: PortType, optional: bool = False) -> Callable[[Any], Any]:
    port = Port(_checked_port_type(port_type), name, description, optional=optional)
    return lambda cls: _add_port(cls, "input_ports", port)


def output_port(name: str, description: str, port_type: PortType) -> Callable[[Any], Any]:
    port = Port(_checked_port_type(port_type), name, description)
    return lambda cls: _add_port(cls, "output_ports", port)


def input_table_group(name: str, description: str) -> Callable[[Any], Any]:
    """A group of input tables: ``configure`` gets a list of schemas, ``execute`` a list of tables."""
    return lambda cls: _add_port(cls, "input_ports", PortGroup(PortType.TABLE, name, description))


@dataclass(frozen=True)
class ViewDeclaration:
    name: str
    description: str
    static_resources: str | None = None
    index_html_path: str | None = None


def output_view(
    name: str, description: str, static_resources: str | None = None, index_html_path: str | None = None
) -> Callable[[Any], Any]:
    """A view of the node, declared only: the stand-in runs no view and no data service (``knime_launcher``)."""

    def declare(cls: Any) -> Any:
        cls.output_view = ViewDeclaration(name, description, static_resources, index_html_path)
        return cls

    return declare


def output_table_group(name: str, description: str) -> Callable[[Any], Any]:
    """A group of output tables: return a list with one schema (or table) per port the user added."""
    return lambda cls: _add_port(cls, "output_ports", PortGroup(PortType.TABLE, name, description))
