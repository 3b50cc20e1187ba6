"""Cell values to JSON: a table cell becomes the JSON type its parameter's schema asks for.

Layer: pure functions under :mod:`knime_mcp.caller.arguments` (which builds a row's arguments) and the Tool Caller
engine, with no I/O. Cells arrive as the Python values pyarrow gives (``int``, ``float``, ``bool``, ``str``, lists,
dicts, ``None``); numpy scalars and arrays from pandas are accepted too. ``"42"`` becomes an integer, ``3.0`` becomes
``3``, ``"true"`` a boolean, a list cell an array with converted items, JSON text an object or an array. A value the
schema cannot take raises :class:`ConversionError`; local ``$ref``\\ s are followed, remote ones never fetched. Only
what JSON can carry is sent: a NaN or infinite double, number text written with digits other than 0-9 (``"٣"``,
``"３"``, which Python's ``int()`` reads), and numbers in JSON text beyond the range of a double (``1e999``, which
Python reads as an infinity and the SDK sends as null) are refused, never sent as null or read as something else.

    to_json("42", {"type": "integer"})                             # 42
    to_json('{"a": 1}', {"type": "object"})                        # {"a": 1}
"""

from __future__ import annotations

import datetime
import json
import math
import re
from collections.abc import Callable
from typing import Any

from knime_mcp.redaction import HIDDEN_VALUE, is_secret_key
from knime_mcp.tools.json_text import NotAJsonNumber, strict_json
from knime_mcp.tools.schema import resolve_local_ref

__all__ = [
    "MAX_JSON_DEPTH",
    "ConversionError",
    "declared_properties",
    "is_missing",
    "items_schema",
    "property_schema",
    "to_json",
    "to_text",
]

_MAX_SCHEMA_DEPTH = 16
MAX_JSON_DEPTH = 100
"""Levels of objects and arrays JSON text in a cell may nest; real arguments use a handful. Deeper values would
exhaust the Python stack further on (checking, redacting, sending), stopping the whole run instead of failing a row."""
_NUMBER_TEXT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
"""A number as text may be written: decimal digits 0-9, a sign, a point, an exponent (JSON's numbers, a little more
lenient: ``+1``, ``.5``, ``5.``)."""
_TRUE = frozenset({"true", "yes", "1"})
_FALSE = frozenset({"false", "no", "0"})


class ConversionError(ValueError):
    """A cell cannot become the JSON type its parameter asks for."""


def is_missing(value: Any) -> bool:
    """KNIME's missing cell in any of its Python forms: None (Arrow's null), pandas' NA or NaT. A NaN double is no
    missing cell: KNIME keeps the two apart, and a NaN is a value JSON cannot carry."""
    return value is None or type(value).__name__ in ("NAType", "NaTType")


# -- schemas --------------------------------------------------------------------------------------------------------


def _deref(schema: Any, root: Any) -> Any:
    """Follow local ``$ref``\\ s (keeping sibling keywords), a bounded number of times."""
    for _ in range(_MAX_SCHEMA_DEPTH):
        if not isinstance(schema, dict) or not isinstance(schema.get("$ref"), str):
            return schema
        target = resolve_local_ref(schema["$ref"], root)
        siblings = {key: value for key, value in schema.items() if key != "$ref"}
        schema = {**target, **siblings} if isinstance(target, dict) else siblings
    return schema


def _kind_of(value: Any) -> str | None:
    match value:
        case bool():
            return "boolean"
        case int():
            return "integer"
        case float():
            return "number"
        case str():
            return "string"
        case list() | tuple():
            return "array"
        case dict():
            return "object"
        case None:
            return "null"
        case _:
            return None


def _kinds(schema: Any, root: Any, depth: int = 0) -> tuple[str, ...]:
    """The JSON types a schema accepts, in its own order; empty when it accepts anything or cannot say."""
    schema = _deref(schema, root)
    if not isinstance(schema, dict) or depth > _MAX_SCHEMA_DEPTH:
        return ()
    kind = schema.get("type")
    if isinstance(kind, str):
        return (kind,)
    if isinstance(kind, list):
        return tuple(k for k in kind if isinstance(k, str))
    for key in ("anyOf", "oneOf", "allOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches:
            found = [_kinds(branch, root, depth + 1) for branch in branches]
            if key == "allOf":
                return next((kinds for kinds in found if kinds), ())
            if not all(found):
                return ()
            return tuple(dict.fromkeys(kind for kinds in found for kind in kinds))
    if "const" in schema:
        return tuple(filter(None, [_kind_of(schema["const"])]))
    if isinstance(schema.get("enum"), list):
        return tuple(dict.fromkeys(filter(None, map(_kind_of, schema["enum"]))))
    if "properties" in schema:
        return ("object",)
    if "items" in schema:
        return ("array",)
    return ()


def _branches(schema: Any, root: Any) -> list[dict[str, Any]]:
    """The schema itself and the object or array schemas among its ``anyOf``/``oneOf``/``allOf`` branches."""
    schema = _deref(schema, root)
    if not isinstance(schema, dict):
        return []
    found = [schema]
    for key in ("anyOf", "oneOf", "allOf"):
        branches = schema.get(key)
        if isinstance(branches, list):
            found += [b for b in (_deref(branch, root) for branch in branches) if isinstance(b, dict)]
    return found


def declared_properties(schema: Any) -> dict[str, Any]:
    """The parameters an input schema declares, by name, including those of its ``allOf``/``anyOf`` branches."""
    properties: dict[str, Any] = {}
    for branch in _branches(schema, schema):
        if isinstance(branch.get("properties"), dict):
            properties.update(branch["properties"])
    return properties


def property_schema(schema: Any, name: str, root: Any) -> Any:
    """The schema of field ``name`` of an object schema; None when it does not say."""
    for branch in _branches(schema, root):
        properties = branch.get("properties")
        if isinstance(properties, dict) and name in properties:
            return properties[name]
    return None


def items_schema(schema: Any, root: Any) -> Any:
    """The schema of an array schema's items; None when it does not say."""
    for branch in _branches(schema, root):
        if isinstance(branch.get("items"), dict):
            return branch["items"]
    return None


# -- values ---------------------------------------------------------------------------------------------------------


def _native(value: Any) -> Any:
    """numpy scalars and arrays (what pandas holds) as plain Python values."""
    if type(value).__module__ == "numpy":
        return value.tolist()
    return value


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def to_json(value: Any, schema: Any, root: Any = None) -> Any:
    """``value`` as the JSON type ``schema`` asks for; ``root`` resolves local ``$ref``\\ s. Missing becomes None.

    Raises :class:`ConversionError` when no type the schema allows fits the value.
    """
    value = _native(value)
    if is_missing(value):
        return None
    kinds = [kind for kind in _kinds(schema, root) if kind in _CONVERTERS and kind != "null"]
    if not kinds:
        return _plain(value)
    natural = _kind_of(value)
    if natural == "integer" and "integer" not in kinds and "number" in kinds:
        natural = "number"
    if natural in kinds:
        kinds.remove(natural)
        kinds.insert(0, natural)
    problems: list[ConversionError] = []
    for kind in kinds:
        try:
            return _CONVERTERS[kind](value, schema, root)
        except ConversionError as exc:
            problems.append(exc)
    if len(problems) == 1:
        raise problems[0]
    raise ConversionError(f"expected {' or '.join(_NAMES[kind] for kind in kinds)}, got {_show(value)}")


def _plain(value: Any) -> Any:
    """A value for a parameter of any type: containers and dates made JSON-ready, everything else as is."""
    match value:
        case dict():
            return {str(key): _plain(_native(item)) for key, item in value.items()}
        case list() | tuple():
            return [None if is_missing(item) else _plain(_native(item)) for item in value]
        case datetime.date() | datetime.time():
            return value.isoformat()
        case bytes():
            raise ConversionError("binary values cannot be sent as JSON")
        case float() if not math.isfinite(value):
            raise ConversionError(f"expected a finite number, got {_show(value)}")  # JSON has none; it would be null
        case _:
            return value


def _finite(number: float, value: Any) -> float:
    if not math.isfinite(number):
        raise ConversionError(f"expected a finite number, got {_show(value)}")
    return number


def _parse_number(text: str, name: str) -> int | float:
    """A number written as text in digits 0-9: an int when it is one, else a float (NaN when it is no number at all).
    Other digits are refused with ``name``, the type asked for: ``int()`` reads ``"٣"`` as 3, no tool does."""
    text = text.strip()
    if not _NUMBER_TEXT.fullmatch(text):
        if any(character.isdigit() for character in text if not character.isascii()):
            raise ConversionError(f"expected {name}, got {_show(text)}, written with digits other than 0-9")
        return math.nan
    try:
        return int(text)
    except ValueError:
        return float(text)  # a fraction or an exponent; an integer of over 4,300 digits: an infinity


def _to_integer(value: Any, schema: Any, root: Any) -> int:
    number = _parse_number(value, "an integer") if isinstance(value, str) else value
    match number:
        case bool():
            pass
        case int():
            return number
        case float() if math.isfinite(number) and number.is_integer():
            return int(number)
    raise ConversionError(f"expected an integer, got {_show(value)}")


def _to_number(value: Any, schema: Any, root: Any) -> float | int:
    number = _parse_number(value, "a number") if isinstance(value, str) else value
    match number:
        case bool():
            pass
        case int():
            return number
        case float() if not math.isnan(number) or not isinstance(value, str):
            return _finite(number, value)
    raise ConversionError(f"expected a number, got {_show(value)}")


def _to_boolean(value: Any, schema: Any, root: Any) -> bool:
    match value:
        case bool():
            return value
        case int() | float() if value in (0, 1):
            return bool(value)
        case str() if value.strip().lower() in _TRUE:
            return True
        case str() if value.strip().lower() in _FALSE:
            return False
    raise ConversionError(f"expected a boolean, got {_show(value)}")


def to_text(value: Any) -> str:
    """A cell as text, e.g. for a ``{column}`` placeholder inside a longer string."""
    return _to_string(_native(value), None, None)


def _to_string(value: Any, schema: Any, root: Any) -> str:
    match value:
        case str():
            return value
        case bool():
            return "true" if value else "false"
        case int():
            return repr(value)
        case float():
            return repr(_finite(value, value))
        case dict() | list() | tuple():
            return json.dumps(_plain(value), ensure_ascii=False)
        case datetime.date() | datetime.time():
            return value.isoformat()
        case bytes():
            raise ConversionError("expected a string, got binary data")
        case _:
            return str(value)


def _parsed(value: str, kind: type, name: str) -> Any:
    """JSON text in a string cell: an object or array exactly as written (the schema judges it later).

    Numbers JSON cannot carry are refused rather than sent as null (:func:`strict_json`); so is nesting deeper than
    :data:`MAX_JSON_DEPTH`."""
    try:
        parsed = strict_json(value)
        too_deep = _deeper_than(parsed, MAX_JSON_DEPTH)
    except json.JSONDecodeError as exc:
        raise ConversionError(f"expected {name}, got text that is not JSON ({exc.msg}): {_show(value)}") from None
    except NotAJsonNumber as exc:
        raise ConversionError(f"expected {name}, got text with {exc}") from None
    except RecursionError:
        too_deep = True
    if too_deep:
        raise ConversionError(f"expected {name}, got JSON text nested deeper than {MAX_JSON_DEPTH} levels")
    if not isinstance(parsed, kind):
        raise ConversionError(f"expected {name}, got JSON {_NAMES.get(_kind_of(parsed) or '', 'value')}")
    return parsed


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether objects and arrays nest more than ``limit`` levels in ``value``; level by level, not recursively."""
    level = [value]
    for _ in range(limit):
        level = [
            child
            for node in level
            if isinstance(node, dict | list)
            for child in (node.values() if isinstance(node, dict) else node)
        ]
    return any(isinstance(node, dict | list) for node in level)


def _to_array(value: Any, schema: Any, root: Any) -> list[Any]:
    match value:
        case list() | tuple():
            items = items_schema(schema, root)
            converted = []
            for index, item in enumerate(value):
                try:
                    converted.append(to_json(item, items, root))
                except ConversionError as exc:
                    raise ConversionError(f"item {index}: {exc}") from None
            return converted
        case str():
            return _parsed(value, list, "a list or JSON array text")
    raise ConversionError(f"expected a list or JSON array text, got {_show(value)}")


def _to_object(value: Any, schema: Any, root: Any) -> dict[str, Any]:
    match value:
        case dict():
            converted = {}
            for key, item in value.items():
                try:
                    converted[str(key)] = to_json(item, property_schema(schema, str(key), root), root)
                except ConversionError as exc:
                    raise ConversionError(f"field {key!r}: {HIDDEN_VALUE if is_secret_key(key) else exc}") from None
            return converted
        case str():
            return _parsed(value, dict, "a JSON object text")
    raise ConversionError(f"expected a JSON object text, got {_show(value)}")


_CONVERTERS: dict[str, Callable[[Any, Any, Any], Any]] = {
    "integer": _to_integer,
    "number": _to_number,
    "boolean": _to_boolean,
    "string": _to_string,
    "array": _to_array,
    "object": _to_object,
}
_NAMES = {
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "string": "a string",
    "array": "an array",
    "object": "an object",
    "null": "null",
}
