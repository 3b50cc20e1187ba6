"""What a model is offered of a tool's input schema: the schema modes, and ``$ref`` inlining for the full one.

Pure functions over :class:`MCPTool` values, between the client (which lists tools with the server's schema) and the
provider, caller and agent (which offer ``parameter_schema`` to a model). No I/O: a remote ``$ref`` is never fetched.
Arguments are checked against the server's own ``input_schema``, not the offered one, by
:mod:`knime_mcp.tools.argument_validation`.

Two schema modes:

- ``full`` keeps everything a schema can say, and only makes it digestible for models: the top level becomes an
  object schema, and local ``$ref``\\ s are inlined because several LLM providers reject ``$ref``. A recursive
  reference, an unresolvable one, or nesting deeper than :data:`MAX_OFFERED_DEPTH` becomes ``{}`` (any value) with a
  note; arguments are still validated against the server's full ``input_schema``.
- ``simple`` (:mod:`knime_mcp.tools.simple_schema`) offers only string, integer, number and boolean parameters, and
  unions of them, for models and tools that cannot use more. Optional complex parameters are dropped; a tool with a
  required complex parameter is left out.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal, NamedTuple, get_args
from urllib.parse import unquote

from knime_mcp.errors import ConfigError
from knime_mcp.tools.simple_schema import simple_schema
from knime_mcp.tools.tool import MCPTool

__all__ = [
    "MAX_OFFERED_DEPTH",
    "SchemaMode",
    "ShapedTools",
    "apply_schema_mode",
    "resolve_local_ref",
    "shape_schemas",
]

SchemaMode = Literal["full", "simple"]
_SCHEMA_MODES = frozenset(get_args(SchemaMode))

MAX_OFFERED_DEPTH = 32
"""Schema levels offered to a model; deeper levels (never seen in real tools) are offered as any value."""

_MAX_OFFERED_NODES = 100_000
"""Subschemas an inlined schema may hold; beyond it, ``$ref``\\ s are kept rather than multiplied out."""

_SCHEMA_MAP_KEYWORDS = frozenset({"properties", "patternProperties", "dependentSchemas", "dependencies"})
_SCHEMA_KEYWORDS = frozenset(
    {
        "additionalProperties", "items", "additionalItems", "contains", "propertyNames", "not", "if", "then", "else",
        "unevaluatedItems", "unevaluatedProperties", "contentSchema", "allOf", "anyOf", "oneOf", "prefixItems",
    }
)  # fmt: skip
_DEFINITION_KEYWORDS = frozenset({"$defs", "definitions"})
_INLINED = _DEFINITION_KEYWORDS | {"$ref"}
"""Keys whose presence makes inlining change a schema."""
_SUBSCHEMA_KEYWORDS = _SCHEMA_MAP_KEYWORDS | _SCHEMA_KEYWORDS


class ShapedTools(NamedTuple):
    """The tools offered after a schema mode, and why the others were left out (kept tools carry their own notes)."""

    tools: list[MCPTool]
    notes: list[str]


def shape_schemas(tools: Iterable[MCPTool], mode: SchemaMode = "full") -> ShapedTools:
    """Apply ``mode`` to every tool; left-out tools are reported in ``notes``.

    tools, left_out = shape_schemas(await client.list_tools(), "simple")
    """
    kept: list[MCPTool] = []
    left_out: list[str] = []
    for tool in tools:
        shaped, note = _shape(tool, mode)
        if shaped is None:
            left_out.append(note)
        else:
            kept.append(shaped)
    return ShapedTools(kept, left_out)


def apply_schema_mode(tool: MCPTool, mode: SchemaMode = "full") -> MCPTool | None:
    """The tool with ``parameter_schema`` and ``notes`` set for ``mode``, or None when ``simple`` leaves it out."""
    return _shape(tool, mode)[0]


def _shape(tool: MCPTool, mode: SchemaMode) -> tuple[MCPTool | None, str]:
    """Always derived from ``input_schema``, so shaping twice gives the same schema and no repeated notes."""
    if mode not in _SCHEMA_MODES:
        raise ConfigError(f"Unknown schema mode {mode!r}; use one of {', '.join(get_args(SchemaMode))}.")
    try:
        text: str | None = tool.input_json
    except ValueError:  # not JSON (a schema made in Python): walked instead
        text = None
    schema, notes = _offered(tool.input_schema, text)
    if mode == "simple":
        schema, simple_notes, blockers = simple_schema(schema)
        if blockers:
            listed = ", ".join(f"{name!r} ({kind})" for name, kind in blockers)
            which = f"parameter {listed} is" if len(blockers) == 1 else f"parameters {listed} are"
            return None, f"tool {tool.name!r} left out: required {which} not offered in simple schema mode"
        notes += simple_notes
    if schema is tool.parameter_schema and not notes:
        return tool, ""  # the usual case: a schema offered as the server sent it, shared rather than copied
    new_notes = tuple(note for note in dict.fromkeys(notes) if note not in tool.notes)
    return tool.with_changes(parameter_schema=schema, notes=tool.notes + new_notes), ""


def resolve_local_ref(ref: str, root: Any) -> Any:
    """The target of a local JSON pointer such as ``#/$defs/Entity`` within ``root``; None for anything else."""
    if not ref.startswith("#"):
        return None
    node = root
    for token in filter(None, ref[1:].split("/")):
        key = unquote(token).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return None
    return node


# -- full mode ------------------------------------------------------------------------------------------------------


class _TooLarge(Exception):
    """Inlining would multiply the schema beyond :data:`_MAX_OFFERED_NODES`."""


def _offered(schema: Any, text: str | None) -> tuple[dict[str, Any], list[str]]:
    """The input schema (``text`` as JSON) as a ``$ref``-free object schema, with notes on what could not be offered
    as is."""
    if not isinstance(schema, dict) or not schema:
        return _empty_object(), []
    notes: list[str] = []
    if (text is not None and _plain(text)) or _Inliner(schema).unchanged():
        inlined = schema
    else:
        inliner = _Inliner(schema)
        try:
            inlined = inliner.inline(schema, 0, "")
            notes = inliner.notes
        except _TooLarge:
            inlined = schema
            notes = ["the input schema is too large to inline its $ref definitions; it is offered with them"]
    if not isinstance(inlined, dict):
        return _empty_object(), notes
    kind = inlined.get("type", "object")
    if kind != "object" and not (isinstance(kind, list) and "object" in kind):
        return _empty_object(), [*notes, f"the input schema is of type {kind!r}, not an object; no parameters offered"]
    properties = inlined.get("properties")
    if inlined is schema and schema.get("type") == "object" and isinstance(properties, dict):
        return schema, notes
    return {**inlined, "type": "object", "properties": properties if isinstance(properties, dict) else {}}, notes


def _empty_object() -> dict[str, Any]:
    return {"type": "object", "properties": {}}


def _plain(text: str) -> bool:
    """Whether a schema's JSON shows it needs no inlining: no ``$ref`` or definitions anywhere, and too few objects
    to be nested too deep. Faster than walking the schema, for the many small schemas a provider lists."""
    return (
        text.count("{") <= MAX_OFFERED_DEPTH
        and '"$ref"' not in text and '"$defs"' not in text and '"definitions"' not in text
    )  # fmt: skip


class _Inliner:
    """Copies a schema with local ``$ref``\\ s replaced by their targets.

    Recursion is bounded by :data:`MAX_OFFERED_DEPTH` (a reference counts as a level, so a long chain of
    references is bounded too), so even a schema nested 1,000 levels deep cannot exhaust the Python stack.
    """

    def __init__(self, root: dict[str, Any]) -> None:
        self._root = root
        self._expanding: list[str] = ["#"]
        self._nodes = 0
        self.notes: list[str] = []

    def unchanged(self) -> bool:
        """Whether :meth:`inline` would copy the schema unchanged (no ``$ref``, no definitions, neither too deep nor
        too large), found without copying: most schemas are, and a provider shapes thousands."""
        pending: list[tuple[Any, int]] = [(self._root, 0)]
        while pending:
            node, depth = pending.pop()
            if not isinstance(node, dict):
                continue
            self._nodes += 1
            if self._nodes > _MAX_OFFERED_NODES or depth > MAX_OFFERED_DEPTH or not _INLINED.isdisjoint(node):
                return False
            for key in _SUBSCHEMA_KEYWORDS.intersection(node):
                value = node[key]
                if key in _SCHEMA_MAP_KEYWORDS and isinstance(value, dict):
                    pending += [(sub, depth + 1) for sub in value.values()]
                elif key in _SCHEMA_KEYWORDS:
                    pending += [(sub, depth + 1) for sub in (value if isinstance(value, list) else (value,))]
        return True

    def inline(self, node: Any, depth: int, path: str) -> Any:
        if not isinstance(node, dict):
            return node
        self._nodes += 1
        if self._nodes > _MAX_OFFERED_NODES:
            raise _TooLarge
        if depth > MAX_OFFERED_DEPTH:
            self._note(path, f"nested deeper than {MAX_OFFERED_DEPTH} levels; deeper levels are offered as any value")
            return {}
        ref = node.get("$ref")
        if isinstance(ref, str):
            return self._inline_ref(ref, node, depth, path)
        return {
            key: self._keyword(key, value, depth, path)
            for key, value in node.items()
            if key not in _DEFINITION_KEYWORDS
        }

    def _keyword(self, key: str, value: Any, depth: int, path: str) -> Any:
        if key == "properties" and isinstance(value, dict):
            return {
                name: self.inline(sub, depth + 1, f"{path}.{name}" if path else name) for name, sub in value.items()
            }
        if key in _SCHEMA_MAP_KEYWORDS and isinstance(value, dict):
            return {name: self.inline(sub, depth + 1, path) for name, sub in value.items()}
        if key in _SCHEMA_KEYWORDS:
            inner = f"{path}[]" if key in ("items", "prefixItems") else path
            if isinstance(value, list):
                return [self.inline(sub, depth + 1, inner) for sub in value]
            return self.inline(value, depth + 1, inner)
        return value

    def _inline_ref(self, ref: str, node: dict[str, Any], depth: int, path: str) -> Any:
        siblings = self.inline({key: value for key, value in node.items() if key != "$ref"}, depth, path)
        if ref in self._expanding:
            self._note(path, f"refers back to {ref} recursively; the recursive part is offered as any value")
            return siblings
        target = self._resolve(ref)
        if target is None:
            self._note(path, f"refers to {ref}, which is not in the schema; it is offered as any value")
            return siblings
        self._expanding.append(ref)
        try:
            resolved = self.inline(target, depth + 1, path)
        finally:
            self._expanding.pop()
        if resolved is True:
            resolved = {}
        if resolved is False:
            resolved = {"not": {}}
        return {**resolved, **siblings}

    def _resolve(self, ref: str) -> Any:
        return resolve_local_ref(ref, self._root)

    def _note(self, path: str, text: str) -> None:
        self.notes.append(f"parameter {path!r} {text}" if path else f"the input schema {text}")
