"""Port declarations, port objects and the port-type registry, as in ``knime.extension.nodes`` (runtime).

Mirrored: built-in port types are plain strings (``PortType.TABLE == "PortType.TABLE"``); ``port_type`` fails
with ``AttributeError`` until a backend is installed (``import knime.extension.testing``); registering an
object class, spec class or id twice raises ``ValueError``. Unlike ktest, whose ``port_type`` returns ``None``,
the host's backend returns the registered ``PortType`` as the KNIME runtime does, since nodes declare their
ports with it. Default ids are ``f"{extension id}.{module}.{qualname}"`` with the host's extension id
``knext_host.extension`` (KNIME uses ``<group_id>.<name>`` from knime.yml): pass ``id=`` explicitly.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from knime.extension._schema import PortObjectSpec

_HOST_EXTENSION_ID = "knext_host.extension"


class PortObject(ABC):
    """Data of a custom port; KNIME stores ``serialize()`` and hands consumers ``deserialize(spec, bytes)``."""

    def __init__(self, spec: PortObjectSpec) -> None:
        self._spec = spec

    @property
    def spec(self) -> PortObjectSpec:
        return self._spec

    @abstractmethod
    def serialize(self) -> bytes: ...

    @classmethod
    @abstractmethod
    def deserialize(cls, spec: PortObjectSpec, storage: bytes) -> PortObject: ...


class ConnectionPortObject(PortObject):
    """A port object passed by reference within one Python process (non-serializable state)."""

    def serialize(self) -> bytes:
        raise NotImplementedError("A connection port object cannot be serialized")

    @classmethod
    def deserialize(cls, spec: PortObjectSpec, storage: bytes) -> PortObject:
        raise NotImplementedError("A connection port object cannot be deserialized")

    @abstractmethod
    def to_connection_data(self) -> Any: ...

    @classmethod
    @abstractmethod
    def from_connection_data(cls, spec: PortObjectSpec, data: Any) -> ConnectionPortObject: ...


@dataclass
class PortType:
    id: str
    name: str
    object_class: type
    spec_class: type

    def is_super_type_of(self, port_type: PortType) -> bool:
        return issubclass(port_type.spec_class, self.spec_class) and issubclass(
            port_type.object_class, self.object_class
        )


PortType.BINARY = "PortType.BINARY"  # type: ignore[attr-defined]
PortType.CONNECTION = "PortType.CONNECTION"  # type: ignore[attr-defined]
PortType.TABLE = "PortType.TABLE"  # type: ignore[attr-defined]
PortType.IMAGE = "PortType.IMAGE"  # type: ignore[attr-defined]
PortType.CREDENTIAL = "PortType.CREDENTIAL"  # type: ignore[attr-defined]
PortType.WORKFLOW = "PortType.WORKFLOW"  # type: ignore[attr-defined]
PortType.HUB_AUTHENTICATION = "PortType.HUB_AUTHENTICATION"  # type: ignore[attr-defined]
_BUILT_IN_PORT_TYPES = {v for k, v in vars(PortType).items() if k.isupper()}


@dataclass
class Port:
    type: PortType | str
    name: str
    description: str
    id: str | None = None
    optional: bool = False

    def __post_init__(self) -> None:
        if self.type in (PortType.BINARY, PortType.CONNECTION) and self.id is None:  # type: ignore[attr-defined]
            raise TypeError(f"{type(self)}s of type BINARY or CONNECTION must have a unique 'id' set")


@dataclass
class PortGroup:
    """A group of ports the user adds in KNIME's UI (0 or more); the node gets and returns a list for it."""

    type: PortType | str
    name: str
    description: str
    id: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise TypeError(f"name must be of type str. Got {type(self.name)}.")
        if not isinstance(self.description, str):
            raise TypeError(f"description must be of type str. Got {type(self.description)}.")


class _HostNodeBackend:
    """The runtime's port-type registry (installed by ``knime.extension.testing``)."""

    def __init__(self) -> None:
        self._by_object_class: dict[type, PortType] = {}
        self._by_spec_class: dict[type, PortType] = {}
        self._by_id: dict[str, PortType] = {}

    def register_port_type(self, name: str, object_class: type, spec_class: type, id: str | None) -> PortType:
        if object_class in self._by_object_class:
            raise ValueError(
                f"There is already a port type with the provided object class '{object_class}' registered."
            )
        if spec_class in self._by_spec_class:
            raise ValueError(f"There is already a port type with the provided spec class '{spec_class}' registered.")
        if id is None:
            id = f"{_HOST_EXTENSION_ID}.{object_class.__module__}.{object_class.__qualname__}"
        if id in self._by_id:
            raise ValueError(f"There is already a port type with the provided id '{id}' registered.")
        port_type = PortType(id, name, object_class, spec_class)
        self._by_object_class[object_class] = self._by_spec_class[spec_class] = self._by_id[id] = port_type
        return port_type

    def get_port_type_for_spec_type(self, spec_type: type) -> PortType:
        if spec_type in self._by_spec_class:
            return self._by_spec_class[spec_type]
        raise KeyError(f"The PortObjectSpec type {spec_type} is not registered.")

    def get_port_type_for_id(self, id: str) -> PortType:
        if id in self._by_id:
            return self._by_id[id]
        raise KeyError(f"No PortType for id '{id}' registered.")

    def has_port_type_for_id(self, id: str) -> bool:
        return id in self._by_id


_backend: _HostNodeBackend | None = None


def port_type(name: str, object_class: type[PortObject], spec_class: type[PortObjectSpec], id: str | None = None):
    """Register a custom port type; call it once, at module level."""
    return _backend.register_port_type(name, object_class, spec_class, id)  # type: ignore[union-attr]


def get_port_type_for_spec_type(spec_type: type[PortObjectSpec]) -> PortType:
    return _backend.get_port_type_for_spec_type(spec_type)  # type: ignore[union-attr]


def get_port_type_for_id(id: str) -> PortType:
    return _backend.get_port_type_for_id(id)  # type: ignore[union-attr]


def has_port_type_for_id(id: str) -> bool:
    return _backend.has_port_type_for_id(id)  # type: ignore[union-attr]
