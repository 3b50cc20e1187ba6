"""A server's form (MCP elicitation) reduced to what the protocol allows: a flat object of primitive fields.

Layer: core (mcp), used by :mod:`knime_mcp.mcp.server_requests` before a form reaches a person (the chat's page, the
terminal) or is answered with its defaults. The SDK passes a form's schema on as any JSON, so a server may put an
object where a title, an option's label or a default should be text, and a page that shows it as text breaks. Here
every part is checked against the protocol's restricted schema (``PrimitiveSchemaDefinition``: string, number,
integer, boolean, single- and multi-select enums):

- a part that is only shown or suggested (``title``, ``description``, ``enumNames``, an option's ``title``,
  ``default``, ``format``, the bounds) is kept when it has the right kind, else left out: the form still works;
- a part that decides what may be answered (``type``, ``enum``, ``oneOf``, ``items``, ``properties``, ``required``)
  must be right, else the form cannot be reduced and :class:`FormSchemaError` says why (the form is declined).

    reduce_form({"type": "object", "properties": {"n": {"type": "string", "title": {"x": 1}}}})
    # {"type": "object", "properties": {"n": {"type": "string"}}, "required": []}
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["FORM_FIELDS", "FormSchemaError", "reduce_form"]

_TEXT_FORMATS = ("date", "date-time", "email", "uri")
FORM_FIELDS = "a form has only text, number, integer and yes/no fields and choices of texts, in one flat object"
"""What a form may have, said when one is declined."""


class FormSchemaError(ValueError):
    """A form's schema that is not the protocol's flat object of primitive fields; the message says where."""


def reduce_form(schema: Any) -> dict[str, Any]:
    """``schema`` with only the parts of the protocol's restricted schema, each of the right kind; raises
    :class:`FormSchemaError` when what may be answered is not clear."""
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        raise FormSchemaError("its schema is not an object of fields")
    fields = schema.get("properties", {})
    if not isinstance(fields, dict):
        raise FormSchemaError("its 'properties' are not an object of fields")
    required = schema.get("required", [])
    if not isinstance(required, list):
        raise FormSchemaError("its 'required' is not a list of field names")
    reduced = {name: _field(name, field) for name, field in fields.items()}
    names = [name for name in required if isinstance(name, str) and name in reduced]
    return {"type": "object", "properties": reduced, "required": list(dict.fromkeys(names))}


def _field(name: str, field: Any) -> dict[str, Any]:
    if not isinstance(field, dict):
        raise FormSchemaError(f"its field {name!r} is not a schema")
    kind = field.get("type")
    shown = {key: field[key] for key in ("title", "description") if isinstance(field.get(key), str)}
    if kind == "string" and ("enum" in field or "oneOf" in field):
        reduced = _choice(name, field)
    elif kind == "string":
        reduced = _text(field)
    elif kind in ("number", "integer"):
        reduced = _number(kind, field)
    elif kind == "boolean":
        reduced = {"type": "boolean", **_default(field, lambda value: isinstance(value, bool))}
    elif kind == "array":
        reduced = _choices(name, field)
    else:
        raise FormSchemaError(f"its field {name!r} is of type {str(kind)[:40]!r}")
    return {**reduced, **shown}


def _text(field: dict[str, Any]) -> dict[str, Any]:
    reduced: dict[str, Any] = {"type": "string"}
    if field.get("format") in _TEXT_FORMATS:
        reduced["format"] = field["format"]
    reduced.update({key: field[key] for key in ("minLength", "maxLength") if _count(field.get(key))})
    return {**reduced, **_default(field, lambda value: isinstance(value, str))}


def _number(kind: str, field: dict[str, Any]) -> dict[str, Any]:
    def fits(value: Any) -> bool:
        number = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
        return number and (kind == "number" or float(value).is_integer())

    bounds = {key: field[key] for key in ("minimum", "maximum") if fits(field.get(key))}
    return {"type": kind, **bounds, **_default(field, fits)}


def _choice(name: str, field: dict[str, Any]) -> dict[str, Any]:
    """A single-select enum: ``enum`` (with ``enumNames`` as labels) or ``oneOf`` (``const`` and ``title``)."""
    reduced: dict[str, Any] = {"type": "string", **_options(name, field)}
    names = field.get("enumNames")
    if "enum" in reduced and isinstance(names, list) and len(names) == len(reduced["enum"]):
        if all(isinstance(label, str) for label in names):
            reduced["enumNames"] = names
    values = _values(reduced)
    return {**reduced, **_default(field, lambda value: value in values)}


def _choices(name: str, field: dict[str, Any]) -> dict[str, Any]:
    """A multi-select enum: an array whose ``items`` are an ``enum`` or an ``anyOf`` of ``const`` and ``title``."""
    items = field.get("items")
    if not isinstance(items, dict):
        raise FormSchemaError(f"its field {name!r} is a list without its choices ('items')")
    options = _options(name, {"oneOf": items["anyOf"]} if "anyOf" in items else items)
    reduced_items = {"type": "string", "enum": options["enum"]} if "enum" in options else {"anyOf": options["oneOf"]}
    reduced: dict[str, Any] = {"type": "array", "items": reduced_items}
    reduced.update({key: field[key] for key in ("minItems", "maxItems") if _count(field.get(key))})
    values = _values(options)
    chosen = field.get("default")
    if isinstance(chosen, list) and all(isinstance(value, str) and value in values for value in chosen):
        reduced["default"] = chosen
    return reduced


def _options(name: str, field: dict[str, Any]) -> dict[str, Any]:
    """The choices of a field: ``{"enum": [...]}`` or ``{"oneOf": [{"const", "title"}, ...]}``, text only."""
    if "enum" in field:
        values = field["enum"]
        if isinstance(values, list) and values and all(isinstance(value, str) for value in values):
            return {"enum": values}
    elif isinstance(options := field.get("oneOf"), list) and options:
        if all(isinstance(option, dict) and isinstance(option.get("const"), str) for option in options):
            return {"oneOf": [_option(option) for option in options]}
    raise FormSchemaError(f"the choices of its field {name!r} are not a list of texts")


def _values(options: dict[str, Any]) -> list[str]:
    """The values of :func:`_options`' choices: its ``enum``, or the ``const`` of each of its ``oneOf``."""
    return options.get("enum") or [option["const"] for option in options.get("oneOf", [])]


def _option(option: dict[str, Any]) -> dict[str, str]:
    title = option.get("title")
    return {"const": option["const"], **({"title": title} if isinstance(title, str) else {})}


def _default(field: dict[str, Any], fits: Any) -> dict[str, Any]:
    return {"default": field["default"]} if "default" in field and fits(field["default"]) else {}


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
