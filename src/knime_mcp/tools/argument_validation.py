"""Checking a call's arguments against a tool's input schema, in bounded time, before they are sent; and a value
against a schema a person wrote (a webhook's *Output Schema*, :mod:`knime_mcp.http.webhooks`).

Used by the dispatcher and the callers, for any tool (MCP, HTTP or workflow). ``jsonschema`` is imported on first
validation only, to keep ``import knime_mcp`` light, and a remote ``$ref`` is never fetched.

A schema's ``pattern`` and ``patternProperties`` come from the server, so they are matched with the ``regex``
package (``re`` semantics) under :data:`PATTERN_TIMEOUT`: a pattern that backtracks without bound, such as
``^(a|aa)+$``, makes that call's arguments invalid instead of freezing the run.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol

from knime_mcp.redaction import redact_text

__all__ = ["PATTERN_TIMEOUT", "schema_fault", "validate_arguments", "validate_value"]

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
    return validate_value(tool.input_schema, arguments)


def validate_value(schema: dict[str, Any], value: Any) -> list[str]:
    """Every way ``value`` breaks ``schema``, as :func:`validate_arguments` words them; the checker is cached by the
    schema object."""
    entry = _checkers.get(id(schema))
    if entry is None or entry[0] is not schema:
        entry = (schema, _compile(schema))
        with _checkers_lock:
            if len(_checkers) >= _CACHE_SIZE:
                del _checkers[next(iter(_checkers))]
            _checkers[id(schema)] = entry
    return entry[1](value)


def schema_fault(schema: dict[str, Any]) -> str | None:
    """Why ``schema`` is not a JSON Schema (by the draft its ``$schema`` names, else 2020-12), or None: for a schema a
    person wrote, which must be checkable, where a server's invalid schema is left to the server."""
    import jsonschema

    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        return exc.message
    except RecursionError:
        return "it is nested too deeply"
    return None


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
