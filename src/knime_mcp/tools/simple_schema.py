"""The ``simple`` schema mode: a tool's parameters cut down to strings, numbers, booleans and unions of them.

For models and tools that cannot use more (:mod:`knime_mcp.tools.schema` offers the result). Works on a schema
already made ``$ref``-free; a union is ``{"type": ["boolean", "string"]}`` or an ``anyOf`` of such types, offered as
a list of types. Constraints inside a union's branches are not offered; arguments are still validated against the
server's full schema.
"""

from __future__ import annotations

from typing import Any

__all__ = ["simple_schema"]

_PRIMITIVES = ("string", "integer", "number", "boolean")
_SIMPLE_KEYWORDS = (
    "title", "description", "enum", "default", "format", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "minLength", "maxLength", "pattern",
)  # fmt: skip


def simple_schema(schema: dict[str, Any]) -> tuple[dict[str, Any], list[str], list[tuple[str, str]]]:
    """The primitive parameters of an inlined object schema, notes on dropped ones, and required complex ones."""
    required = schema.get("required")
    required = [name for name in required if isinstance(name, str)] if isinstance(required, list) else []
    properties: dict[str, Any] = {}
    notes: list[str] = []
    blockers: list[tuple[str, str]] = []
    for name, sub in schema["properties"].items():
        offered = _simple_property(sub)
        if offered is not None:
            properties[name] = offered
        elif name in required:
            blockers.append((name, _kind(sub)))
        else:
            notes.append(f"parameter {name!r} dropped: {_kind(sub)} is not offered in simple schema mode")
    simple: dict[str, Any] = {"type": "object", "properties": properties}
    kept_required = [name for name in required if name in properties]
    if kept_required:
        simple["required"] = kept_required
    return simple, notes, blockers


def _unwrap(schema: dict[str, Any]) -> dict[str, Any]:
    """Look through ``anyOf: [X, null]``, ``oneOf: [X, null]`` and ``allOf: [X]`` to the one schema X."""
    while True:
        for key in ("anyOf", "oneOf", "allOf"):
            branches = schema.get(key)
            if isinstance(branches, list):
                break
        else:
            return schema
        non_null = [branch for branch in branches if not (isinstance(branch, dict) and branch.get("type") == "null")]
        if len(non_null) != 1 or not isinstance(non_null[0], dict) or (key == "allOf" and len(branches) != 1):
            return schema
        outer = {name: value for name, value in schema.items() if name != key}
        schema = {**non_null[0], **outer}


def _primitive(schema: dict[str, Any]) -> str | list[str] | None:
    """The primitive type of a parameter, or the primitive types of a union of them (``{"type": ["boolean",
    "string"]}``, or ``anyOf``/``oneOf`` branches that are each primitive); None when any part is not primitive."""
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [name for name in dict.fromkeys(kind) if name != "null"]
        return _primitives(kinds)
    if kind is None:
        for key in ("anyOf", "oneOf"):
            branches = schema.get(key)
            if isinstance(branches, list):
                return _union(branches)
        if "allOf" in schema:
            return None
        enum = schema.get("enum")
        if isinstance(enum, list) and enum and all(isinstance(value, str) for value in enum):
            kind = "string"
    return kind if kind in _PRIMITIVES else None


def _primitives(kinds: list[Any]) -> str | list[str] | None:
    if not kinds or not all(name in _PRIMITIVES for name in kinds):
        return None
    return kinds[0] if len(kinds) == 1 else kinds


def _union(branches: list[Any]) -> str | list[str] | None:
    """The primitive types of a choice of schemas; constraints inside a branch are not offered (arguments are still
    validated against the server's schema)."""
    kinds: list[str] = []
    for branch in branches:
        if isinstance(branch, dict) and branch.get("type") == "null":
            continue
        kind = _primitive(_unwrap(branch)) if isinstance(branch, dict) else None
        if kind is None:
            return None
        kinds += [kind] if isinstance(kind, str) else kind
    return _primitives(list(dict.fromkeys(kinds)))


def _simple_property(schema: Any) -> dict[str, Any] | None:
    if not isinstance(schema, dict):
        return None
    schema = _unwrap(schema)
    kind = _primitive(schema)
    if kind is None:
        return None
    offered: dict[str, Any] = {"type": kind}
    kinds = [kind] if isinstance(kind, str) else kind
    for key in _SIMPLE_KEYWORDS:
        if key in schema and schema[key] is not None:
            offered[key] = schema[key]
    if "enum" in offered:
        values = [value for value in offered["enum"] if value is not None] if isinstance(offered["enum"], list) else []
        if values and all(any(_is_of(value, name) for name in kinds) for value in values):
            offered["enum"] = values
        else:
            del offered["enum"]
    return offered


def _is_of(value: Any, kind: str) -> bool:
    match kind:
        case "string":
            return isinstance(value, str)
        case "boolean":
            return isinstance(value, bool)
        case "integer":
            return isinstance(value, int) and not isinstance(value, bool)
        case _:
            return isinstance(value, int | float) and not isinstance(value, bool)


def _kind(schema: Any) -> str:
    """How a parameter the simple mode cannot offer reads in a note."""
    if not isinstance(schema, dict):
        return "a value of any type"
    schema = _unwrap(schema)
    kind = schema.get("type")
    if isinstance(kind, str):
        return "an array" if kind == "array" else "an object" if kind == "object" else f"a value of type {kind!r}"
    if isinstance(kind, list):
        return "a union of types " + "|".join(str(name) for name in kind)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            return f"a choice of schemas ({key})"
    return "a value of any type"
