"""Column types, ``Column``, ``Schema`` and ``PortObjectSpec`` as in ``knime.api.schema`` (KNIME runtime).

Mirrored: primitive types are singletons and print like KNIME's; ``logical()`` knows one type that KNIME's Java side
registers, PNG images (``PIL.Image.Image``, see ``_png``), and raises ``TypeError`` for any other (outside KNIME,
types such as ``WorkflowTool`` do not exist);
``Column`` equality includes ``metadata``; ``Schema`` has no ``len()``; indexing, ``append``, ``insert`` and
``remove`` return lazy ``_ColumnarView``s, and ``schema == view`` is ``False`` while ``view == schema`` works.
Not provided: dictionary-encoded ``string``/``blob``, ``datetime()``, and ``Schema.serialize`` (KNIME-internal).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Union


class KnimeType(ABC):
    """Base of all column types; not instantiable itself."""

    def __init__(self) -> None:
        if type(self) is KnimeType:
            raise TypeError("KnimeType cannot be instantiated directly")

    @abstractmethod
    def __str__(self) -> str: ...


class PrimitiveType(KnimeType):
    """A built-in KNIME type; each exists exactly once."""

    def __init__(self, display: str) -> None:
        super().__init__()
        self._display = display

    def __str__(self) -> str:
        return self._display

    __repr__ = __str__


class ListType(KnimeType):
    def __init__(self, inner_type: KnimeType) -> None:
        super().__init__()
        if not isinstance(inner_type, KnimeType):
            raise TypeError(f"inner_type must be a KnimeType, got {type(inner_type)}")
        self.inner_type = inner_type

    def __str__(self) -> str:
        return f"List (Collection of: {self.inner_type})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ListType) and other.inner_type == self.inner_type

    def __hash__(self) -> int:
        return hash(("list", self.inner_type))


class StructType(KnimeType):
    def __init__(self, inner_types: Sequence[KnimeType]) -> None:
        super().__init__()
        if not all(isinstance(t, KnimeType) for t in inner_types):
            raise TypeError("all inner types of a struct must be KnimeTypes")
        self.inner_types = list(inner_types)

    def __str__(self) -> str:
        return f"struct<{', '.join(str(t) for t in self.inner_types)}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StructType) and other.inner_types == self.inner_types

    def __hash__(self) -> int:
        return hash(("struct", *self.inner_types))


class LogicalType(KnimeType):
    """A column type KNIME registers from Java for a Python value type; the host has PNG images only."""

    def __init__(self, value_type: str, display: str) -> None:
        super().__init__()
        self.value_type, self._display = value_type, display

    def __str__(self) -> str:
        return self._display

    __repr__ = __str__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LogicalType) and other.value_type == self.value_type

    def __hash__(self) -> int:
        return hash(("logical", self.value_type))

    def to_pandas(self) -> Any:
        """The pandas dtype of such a column, which keeps the type when no cell holds a value."""
        from knime.extension._png import PngDtype

        return PngDtype()


_LOGICAL_TYPES = {"PIL.Image.Image": "PNG Image"}
"""The Python value types KNIME registers that the host has, by full class name, with KNIME's type name."""


_INT32 = PrimitiveType("Number (Integer)")
_INT64 = PrimitiveType("Number (Long Integer)")
_DOUBLE = PrimitiveType("Number (Float)")
_BOOL = PrimitiveType("Boolean")
_STRING = PrimitiveType("String")
_BLOB = PrimitiveType("blob")
_NULL = PrimitiveType("null")


def int32() -> KnimeType:
    return _INT32


def int64() -> KnimeType:
    return _INT64


def double() -> KnimeType:
    return _DOUBLE


def bool_() -> KnimeType:
    return _BOOL


def string() -> KnimeType:
    return _STRING


def blob() -> KnimeType:
    return _BLOB


def null() -> KnimeType:
    return _NULL


def list_(inner_type: KnimeType) -> KnimeType:
    return ListType(inner_type)


def struct(*inner_types: KnimeType) -> KnimeType:
    return StructType(inner_types)


def logical(value_type: type) -> KnimeType:
    """The column type of ``value_type``: PNG images for ``PIL.Image.Image``; any other type raises ``TypeError``
    (KNIME registers logical types through Java plug-ins, knext-api 8.1)."""
    name = f"{value_type.__module__}.{value_type.__qualname__}" if isinstance(value_type, type) else None
    if name not in _LOGICAL_TYPES:
        raise TypeError(f"{value_type} is not a known logical type")
    return registered_logical_type(name)


def registered_logical_type(value_type: str) -> LogicalType:
    """The column type of the registered Python value type named ``value_type`` (a key of ``_LOGICAL_TYPES``)."""
    return LogicalType(value_type, _LOGICAL_TYPES[value_type])


class PortObjectSpec(ABC):
    """Spec of a port; custom specs must serialize to a JSON-compatible ``dict``."""

    @abstractmethod
    def serialize(self) -> dict: ...

    @classmethod
    @abstractmethod
    def deserialize(cls, data: dict, java_callback: Any = None) -> PortObjectSpec: ...


class Column:
    """A named, typed column; ``metadata`` takes part in equality (KNIME input specs carry metadata dicts)."""

    def __init__(self, ktype: KnimeType | type, name: str, metadata: dict | None = None) -> None:
        if not isinstance(ktype, KnimeType):
            ktype = logical(ktype)
        if not isinstance(name, str):
            raise TypeError(f"Column name must be of type str, got {type(name)}")
        if not name.strip():
            raise ValueError("Column name must not be empty or blank")
        self.ktype, self.name, self.metadata = ktype, name, metadata

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Column)
            and (self.ktype, self.name, self.metadata) == (other.ktype, other.name, other.metadata)
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Column<'{self.name}', {self.ktype}>"


_Key = Union[int, str, slice, Sequence[int | str]]


class _ColumnarView:
    """Lazy result of a schema operation; ``get()`` materializes it, other attributes are forwarded."""

    def __init__(self, producer: Callable[[], Schema | Column]) -> None:
        self._producer = producer

    def get(self) -> Schema | Column:
        return self._producer()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.get(), name)

    def __eq__(self, other: object) -> bool:
        return self.get() == other

    __hash__ = None  # type: ignore[assignment]

    def __getitem__(self, key: _Key) -> _ColumnarView:
        return _ColumnarView(lambda: _as_schema(self.get())[key].get())

    def append(self, other: Column | Schema | list[Column]) -> _ColumnarView:
        return _ColumnarView(lambda: _as_schema(self.get()).append(other).get())

    def insert(self, other: Column | Schema | list[Column], at: int) -> _ColumnarView:
        return _ColumnarView(lambda: _as_schema(self.get()).insert(other, at).get())

    def remove(self, key: int | str | list[str]) -> _ColumnarView:
        return _ColumnarView(lambda: _as_schema(self.get()).remove(key).get())

    def __repr__(self) -> str:
        return f"_ColumnarView({self.get()!r})"


def _as_schema(value: Schema | Column) -> Schema:
    return value if isinstance(value, Schema) else Schema.from_columns(value)


class Schema(PortObjectSpec):
    """Ordered columns of a table; the spec of table ports."""

    def __init__(self, ktypes: Sequence[KnimeType | type], names: Sequence[str], metadata: Sequence[Any] | None = None):
        ktypes, names = list(ktypes), list(names)
        metadata = [None] * len(ktypes) if metadata is None else list(metadata)
        if not len(ktypes) == len(names) == len(metadata):
            raise ValueError("Number of types, names and metadata must be equal")
        self._columns = [Column(t, n, m) for t, n, m in zip(ktypes, names, metadata)]

    @classmethod
    def from_columns(cls, columns: Column | Sequence[Column]) -> Schema:
        columns = [columns] if isinstance(columns, Column) else list(columns)
        if not all(isinstance(c, Column) for c in columns):
            raise TypeError("Schema.from_columns expects Columns")
        return cls([c.ktype for c in columns], [c.name for c in columns], [c.metadata for c in columns])

    @classmethod
    def from_types(cls, ktypes: Sequence[KnimeType], names: Sequence[str], metadata: Sequence[Any] | None = None):
        return cls(ktypes, names, metadata)

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self._columns]

    @property
    def num_columns(self) -> int:
        return len(self._columns)

    def __iter__(self) -> Iterator[Column]:
        return iter(list(self._columns))

    def __contains__(self, item: object) -> bool:
        name = item.name if isinstance(item, Column) else item
        return name in self.column_names

    def __eq__(self, other: object) -> bool:
        return type(other) is Schema and self._columns == other._columns

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Schema<{', '.join(repr(c) for c in self._columns)}>"

    def __getitem__(self, key: _Key) -> _ColumnarView:
        if isinstance(key, int) and not -self.num_columns <= key < self.num_columns:
            raise IndexError(f"Column index {key} out of bounds for {self.num_columns} columns")
        return _ColumnarView(lambda: self._select(key))

    def _select(self, key: _Key) -> Schema | Column:
        if isinstance(key, (int, str)):
            return self._column(key)
        if isinstance(key, slice):
            return Schema.from_columns(self._columns[key])
        return Schema.from_columns([self._column(k) for k in key])

    def _column(self, key: int | str) -> Column:
        if isinstance(key, int):
            return self._columns[key]
        for column in self._columns:
            if column.name == key:
                return column
        raise IndexError(f"Column '{key}' is not in the schema {self.column_names}")

    def append(self, other: Column | Schema | list[Column]) -> _ColumnarView:
        return self.insert(other, self.num_columns)

    def insert(self, other: Column | Schema | list[Column], at: int) -> _ColumnarView:
        new = list(other) if isinstance(other, (Schema, list)) else [other]
        return _ColumnarView(lambda: Schema.from_columns(self._columns[:at] + new + self._columns[at:]))

    def remove(self, key: int | str | list[str]) -> _ColumnarView:
        keys = key if isinstance(key, list) else [key]
        missing = [k for k in keys if isinstance(k, str) and k not in self.column_names]
        if missing:
            raise ValueError(f"Cannot remove unknown columns {missing}")
        doomed = [self._column(k).name for k in keys]
        return _ColumnarView(lambda: Schema.from_columns([c for c in self._columns if c.name not in doomed]))

    def serialize(self) -> dict:
        raise NotImplementedError("Schema serialization is KNIME-internal and not provided by the host")

    @classmethod
    def deserialize(cls, data: dict, java_callback: Any = None) -> Schema:
        raise NotImplementedError("Schema serialization is KNIME-internal and not provided by the host")
