"""OpenAPI schemas as self-contained JSON Schemas: ``$ref``\\ s into the document become ``$defs`` of the schema.

Layer: used by :mod:`knime_mcp.http.openapi` for each tool's input and output schema. A schema that refers to
itself (a tree, a linked list) stays a reference into ``$defs``, so nothing is expanded forever; the schema mode
(:mod:`knime_mcp.tools.schema`) inlines what a model is offered, and the arguments are validated against the schema
with its ``$defs``. OpenAPI 3.0's dialect (``nullable``, boolean ``exclusiveMinimum``) becomes JSON Schema.

    schemas = DocumentSchemas(document)
    schema = schemas.convert({"$ref": "#/components/schemas/Pet"})   # {"$ref": "#/$defs/Pet"}
    schemas.defs_for(schema)                                          # {"Pet": {...}, "Category": {...}}
"""

from __future__ import annotations

from typing import Any

from knime_mcp.errors import ConfigError
from knime_mcp.tools.schema import resolve_local_ref

__all__ = ["MAX_DOCUMENT_VALUES", "MAX_SCHEMA_VALUES", "DocumentSchemas"]

_SCHEMAS = "#/components/schemas/"
_MAX_DEPTH = 200
"""Nesting a document may have; deeper is refused rather than exhausting the Python stack."""

MAX_SCHEMA_VALUES = 100_000
"""Values (objects, lists, scalars) one converted schema may have. YAML aliases share one object between many
places, so a document of a kilobyte can name a schema of billions of values (ten aliases of ten aliases of ...),
which converting copies out and a tools table would hold."""

MAX_DOCUMENT_VALUES = 5_000_000
"""Values all of a document's converted schemas may have together: thousands of operations may each refer to one
large parameter or body, which each tool's schema holds a copy of."""

_TOO_LARGE_HINT = (
    "The document is malformed or built to exhaust memory; if it is yours, put the schemas it repeats in "
    "components and refer to them with $ref."
)


class DocumentSchemas:
    """The schemas of one document, converted once each."""

    def __init__(self, document: dict[str, Any]) -> None:
        self._document = document
        self._dialect_30 = str(document.get("openapi", "")).startswith("3.0")
        self._names: dict[str, str] = {}
        """Each referenced pointer's name in ``$defs``."""
        self._pointers: dict[str, str] = {}
        """The other way round: a document lists thousands of schemas, too many to search for each name."""
        self._converted: dict[str, Any] = {}
        self._values = 0
        """Values converted so far; a schema's own count starts at its start."""

    def deref(self, node: Any, what: str) -> Any:
        """``node``, or what its chain of ``$ref``\\ s points to (a parameter, request body or response object)."""
        seen: set[str] = set()
        while isinstance(node, dict) and isinstance(node.get("$ref"), str):
            ref = node["$ref"]
            if ref in seen:
                raise ConfigError(f"The {what} refers to itself through {ref}.")
            seen.add(ref)
            node = self._target(ref, what)
        return node

    def convert(self, schema: Any) -> Any:
        """``schema`` as JSON Schema, with its references pointing into ``$defs`` (see :meth:`defs_for`)."""
        return self._walk(schema, 0, self._values)

    def defs_for(self, *schemas: Any) -> dict[str, Any]:
        """The ``$defs`` that the converted ``schemas`` need, with those their definitions need in turn."""
        defs: dict[str, Any] = {}
        pending = [ref for schema in schemas for ref in _refs(schema)]
        while pending:
            name = pending.pop().removeprefix("#/$defs/")
            if name in defs:
                continue
            defs[name] = self._definition(self._pointers[name])
            pending.extend(_refs(defs[name]))
        return dict(sorted(defs.items()))

    def resolve(self, schema: Any, defs: dict[str, Any]) -> Any:
        """A converted schema with its top-level reference followed (to tell what type it has)."""
        seen: set[str] = set()
        while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and schema["$ref"] not in seen:
            seen.add(schema["$ref"])
            schema = defs.get(schema["$ref"].removeprefix("#/$defs/"), {})
        return schema

    def _definition(self, pointer: str) -> Any:
        if pointer not in self._converted:
            self._converted[pointer] = self._walk(self._target(pointer, "schema"), 0, self._values)
        return self._converted[pointer]

    def _target(self, ref: str, what: str) -> Any:
        if not ref.startswith("#"):
            raise ConfigError(
                f"The {what} refers to {ref}, outside the document.",
                hint="Bundle the document into one file first, e.g. with 'npx @redocly/cli bundle'.",
            )
        target = resolve_local_ref(ref, self._document)
        if target is None:
            raise ConfigError(f"The {what} refers to {ref}, which is not in the document.")
        return target

    def _name(self, pointer: str) -> str:
        if pointer not in self._names:
            self._target(pointer, "schema")
            tokens = [token for token in pointer[1:].split("/") if token]
            name = "_".join(tokens[2:] if pointer.startswith(_SCHEMAS) else tokens).replace("~", "_")
            unique, number = name, 2
            while unique in self._pointers:
                unique, number = f"{name}_{number}", number + 1
            self._names[pointer] = unique
            self._pointers[unique] = pointer
        return self._names[pointer]

    def _walk(self, node: Any, depth: int, start: int) -> Any:
        """``node`` converted; ``start``: the count of values when the schema it belongs to began."""
        if depth > _MAX_DEPTH:
            raise ConfigError(f"A schema of the document is nested deeper than {_MAX_DEPTH} levels.")
        self._count(start)
        if isinstance(node, list):
            return [self._walk(item, depth + 1, start) for item in node]
        if not isinstance(node, dict):
            return node
        converted = {key: self._walk(value, depth + 1, start) for key, value in node.items()}
        if isinstance(node.get("$ref"), str):
            converted["$ref"] = f"#/$defs/{self._name(node['$ref'])}"
        return _from_dialect_30(converted) if self._dialect_30 else converted

    def _count(self, start: int) -> None:
        """Stop a schema, or the document's schemas together, that grow past their bounds as they are copied."""
        self._values += 1
        if self._values - start > MAX_SCHEMA_VALUES:
            raise ConfigError(
                f"A schema of the document has more than {MAX_SCHEMA_VALUES:,} values (each YAML alias counted as "
                "the copy it makes).",
                hint=_TOO_LARGE_HINT,
            )
        if self._values > MAX_DOCUMENT_VALUES:
            raise ConfigError(
                f"The document's schemas have more than {MAX_DOCUMENT_VALUES:,} values once their references and "
                "YAML aliases are copied into each operation's tool.",
                hint=_TOO_LARGE_HINT,
            )


def _from_dialect_30(schema: dict[str, Any]) -> dict[str, Any]:
    """OpenAPI 3.0's schema keywords that JSON Schema spells differently; a property named like a keyword holds a
    schema object, not a boolean, so it is left alone."""
    if schema.get("nullable") is True:
        del schema["nullable"]
        kind = schema.get("type")
        if isinstance(kind, str):
            schema["type"] = [kind, "null"]
        if isinstance(schema.get("enum"), list) and None not in schema["enum"]:
            schema["enum"] = [*schema["enum"], None]
    elif schema.get("nullable") is False:
        del schema["nullable"]
    for exclusive, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if isinstance(schema.get(exclusive), bool):
            if schema.pop(exclusive) and bound in schema:
                schema[exclusive] = schema.pop(bound)
    return schema


def _refs(node: Any) -> list[str]:
    """Every ``#/$defs/…`` reference in a converted schema."""
    if isinstance(node, list):
        return [ref for item in node for ref in _refs(item)]
    if not isinstance(node, dict):
        return []
    own = [node["$ref"]] if isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/$defs/") else []
    return own + [ref for value in node.values() for ref in _refs(value)]
