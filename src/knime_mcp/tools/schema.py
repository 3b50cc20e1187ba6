"""Schema shaping: what a model is offered of a tool's input schema, and checking arguments against it.

Pure functions over :class:`MCPTool` values, between the client (which lists tools with the server's schema) and the
provider, caller and agent (which offer ``parameter_schema`` to a model and validate arguments). No I/O: a remote
``$ref`` is never fetched. ``jsonschema`` is imported on first validation only, to keep ``import knime_mcp`` light.

Two schema modes:

- ``full`` keeps everything a schema can say, and only makes it digestible for models: the top level becomes an
  object schema, and local ``$ref``\\ s are inlined because several LLM providers reject ``$ref``. A recursive
  reference, an unresolvable one, or nesting deeper than :data:`MAX_OFFERED_DEPTH` becomes ``{}`` (any value) with a
  note; arguments are still validated against the server's full ``input_schema``.
- ``simple`` offers only string, integer, number and boolean parameters, and unions of them (``{"type": ["boolean",
  "string"]}`` or an ``anyOf`` of such types, offered as a list of types), for models and tools that cannot use
  more. Optional complex parameters are dropped; a tool with a required complex parameter is left out.

A schema's ``pattern`` and ``patternProperties`` come from the server, so they are matched with the ``regex``
package (``re`` semantics) under :data:`PATTERN_TIMEOUT`: a pattern that backtracks without bound, such as
``^(a|aa)+$``, makes that call's arguments invalid instead of freezing the run.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Literal, NamedTuple, Protocol, get_args
from urllib.parse import unquote

from knime_mcp.errors import ConfigError
from knime_mcp.redaction import redact_text
from knime_mcp.tools.tool import MCPTool

__all__ = [
    "MAX_OFFERED_DEPTH",
    "PATTERN_TIMEOUT",
    "SchemaMode",
    "ShapedTools",
    "apply_schema_mode",
    "resolve_local_ref",
    "shape_schemas",
    "validate_arguments",
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

_PRIMITIVES = ("string", "integer", "number", "boolean")
_SIMPLE_KEYWORDS = (
    "title", "description", "enum", "default", "format", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "minLength", "maxLength", "pattern",
)  # fmt: skip


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
        schema, simple_notes, blockers = _simple(schema)
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


# -- simple mode ----------------------------------------------------------------------------------------------------


def _simple(schema: dict[str, Any]) -> tuple[dict[str, Any], list[str], list[tuple[str, str]]]:
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


# -- argument validation --------------------------------------------------------------------------------------------

_Checker = Callable[[Any], list[str]]

_CACHE_SIZE = 1024
_checkers: dict[int, tuple[dict[str, Any], _Checker]] = {}
"""Compiled checkers by ``id(input_schema)``; an entry keeps its schema alive, so the id cannot be reused."""
_checkers_lock = threading.Lock()
_MAX_PROBLEM_LENGTH = 300


class _Validatable(Protocol):
    """An MCPTool, or a tool that runs in this process (a workflow tool)."""

    @property
    def input_schema(self) -> dict[str, Any]: ...


def validate_arguments(tool: _Validatable, arguments: Mapping[str, Any]) -> list[str]:
    """Every way ``arguments`` break the tool's ``input_schema``, readable by a model or a workflow builder.

    The validator is compiled once per schema object and cached, so row-by-row calling pays for it once per tool.
    A schema that cannot be checked here (invalid, unresolvable ``$ref``, too deep) is left to the server to judge.
    """
    schema = tool.input_schema
    entry = _checkers.get(id(schema))
    if entry is None or entry[0] is not schema:
        entry = (schema, _compile(schema))
        with _checkers_lock:
            if len(_checkers) >= _CACHE_SIZE:
                del _checkers[next(iter(_checkers))]
            _checkers[id(schema)] = entry
    return entry[1](arguments)


def _compile(schema: dict[str, Any]) -> _Checker:
    """A checker for ``schema``, by Draft 2020-12 unless its ``$schema`` names another draft."""
    import jsonschema
    from referencing import Registry
    from referencing.exceptions import Unresolvable

    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except (jsonschema.SchemaError, RecursionError):
        return _unchecked
    bounded = jsonschema.validators.extend(
        cls,
        {
            "pattern": _pattern,
            "patternProperties": _pattern_properties,
            "additionalProperties": _additional_properties,
        },
    )
    # An empty registry: a remote reference is never fetched.
    validator = bounded(schema, registry=Registry())

    def problems(arguments: Any) -> list[str]:
        try:
            errors = sorted(validator.iter_errors(arguments), key=lambda error: (error.json_path, error.message))
        except (Unresolvable, RecursionError):
            return []
        # Once each: patternProperties and additionalProperties both report a key whose pattern took too long.
        return list(dict.fromkeys(_problem(error, arguments) for error in errors))

    return problems


def _unchecked(arguments: Any) -> list[str]:
    return []


# -- patterns, bounded in time ----------------------------------------------------------------------------------------

PATTERN_TIMEOUT = 0.5
"""Seconds one server-supplied pattern may take on one string (``regex`` checks it now and then, so it may overrun
a little); ordinary patterns take microseconds."""


class _PatternTimeout(Exception):
    """A pattern took longer than :data:`PATTERN_TIMEOUT` on one string."""

    def __init__(self, pattern: str) -> None:
        super().__init__(pattern)
        self.pattern = pattern


@functools.lru_cache(maxsize=256)
def _regex(pattern: str) -> Any:
    """The compiled pattern, or None when ``regex`` cannot read one that ``re`` could: then it is not checked here."""
    import regex

    try:
        return regex.compile(pattern)
    except regex.error:
        return None


def _found(pattern: str, text: str) -> bool:
    """``re.search`` semantics, in bounded time; raises :class:`_PatternTimeout`."""
    compiled = _regex(pattern)
    if compiled is None:
        return True
    try:
        return compiled.search(text, timeout=PATTERN_TIMEOUT) is not None
    except TimeoutError:
        raise _PatternTimeout(pattern) from None


def _too_slow(pattern: str, text: str) -> Any:
    from jsonschema import ValidationError

    shown = text if len(text) <= 40 else text[:39] + "…"
    return ValidationError(
        f"the tool's pattern {pattern!r} took too long to check against {shown!r} (over {PATTERN_TIMEOUT} s); "
        "the pattern backtracks without bound, so these arguments are refused"
    )


def _pattern(validator: Any, pattern: str, instance: Any, schema: dict[str, Any]) -> Iterator[Any]:
    """jsonschema's ``pattern`` keyword, bounded in time."""
    from jsonschema import ValidationError

    if not validator.is_type(instance, "string"):
        return
    try:
        if not _found(pattern, instance):
            yield ValidationError(f"{instance!r} does not match {pattern!r}")
    except _PatternTimeout:
        yield _too_slow(pattern, instance)


def _pattern_properties(validator: Any, patterns: dict[str, Any], instance: Any, schema: Any) -> Iterator[Any]:
    """jsonschema's ``patternProperties`` keyword, bounded in time."""
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            try:
                matched = _found(pattern, key)
            except _PatternTimeout:
                yield _too_slow(pattern, key)
                continue
            if matched:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Any, extra: Any, instance: Any, schema: dict[str, Any]) -> Iterator[Any]:
    """jsonschema's ``additionalProperties`` keyword, whose check against ``patternProperties`` is bounded in time."""
    from jsonschema import Draft202012Validator, ValidationError

    patterns = schema.get("patternProperties")
    if not patterns or not validator.is_type(instance, "object"):
        yield from Draft202012Validator.VALIDATORS["additionalProperties"](validator, extra, instance, schema)
        return
    properties = schema.get("properties", {})
    extras = []
    for key in instance:
        if key in properties:
            continue
        try:
            if not any(_found(pattern, key) for pattern in patterns):
                extras.append(key)
        except _PatternTimeout as exc:
            yield _too_slow(exc.pattern, key)
    if validator.is_type(extra, "object"):
        for key in extras:
            yield from validator.descend(instance[key], extra, path=key)
    elif not extra and extras:
        listed = ", ".join(repr(key) for key in sorted(extras))
        verb = "does" if len(extras) == 1 else "do"
        yield ValidationError(f"{listed} {verb} not match any of the regexes: {', '.join(map(repr, sorted(patterns)))}")


def _problem(error: Any, arguments: Any) -> str:
    """One problem in words; the values of secret-looking arguments it would quote are masked (before it is cut)."""
    path = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in error.absolute_path).lstrip(".")
    text = redact_text(f"{path}: {error.message}" if path else error.message, arguments)
    return text if len(text) <= _MAX_PROBLEM_LENGTH else text[: _MAX_PROBLEM_LENGTH - 1] + "…"
