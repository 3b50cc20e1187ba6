"""MCP behaviour hints for an HTTP request, from its method's semantics, which an API's own hints may only narrow.

GET, HEAD and OPTIONS read only; GET, HEAD, OPTIONS, PUT and DELETE are idempotent (RFC 9110). Every other method
may write, and a tool that writes is destructive unless it says otherwise, as in the MCP specification (whose
``destructiveHint`` defaults to true): a method cannot tell a POST that appends from one that overwrites or deletes,
so the Agent Prompter's default policy (block destructive tools) offers only the reading operations. An OpenAPI
operation's ``x-mcp-annotations`` (``readOnlyHint``, ``destructiveHint``, ``idempotentHint``, ``openWorldHint``)
replaces what it names, e.g. ``destructiveHint: false`` for a POST that only adds; but a document is data, so the
method's facts win where it claims more safety than a method can have: a method that may write (POST, PUT, PATCH,
DELETE) is never read-only, and only a POST may say it only adds (PUT replaces, PATCH changes and DELETE removes what
is there); a POST that says it only reads (a search) counts as non-destructive. A claim that is ignored is noted.

    method_annotations("DELETE")                                  # destructive, idempotent
    method_annotations("POST", {"destructiveHint": False}, "POST /pets")
"""

from __future__ import annotations

from typing import Any

from knime_mcp.errors import ConfigError
from knime_mcp.tools.tool import ToolAnnotations

__all__ = ["ANNOTATIONS_EXTENSION", "method_annotations"]

ANNOTATIONS_EXTENSION = "x-mcp-annotations"
"""The OpenAPI operation extension whose MCP hints replace those the HTTP method implies."""

_READ_ONLY = frozenset({"GET", "HEAD", "OPTIONS"})
_IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
_OVERWRITES = {"PUT": "replaces what is there", "PATCH": "changes what is there", "DELETE": "removes what is there"}
"""Methods that are never non-destructive (MCP: "performs only additive updates"), whatever the API says; a POST
may be."""
_HINTS = {
    "readOnlyHint": "read_only", "destructiveHint": "destructive", "idempotentHint": "idempotent",
    "openWorldHint": "open_world",
}  # fmt: skip


def method_annotations(
    method: str, declared: Any = None, label: str = "", notes: list[str] | None = None
) -> ToolAnnotations:
    """The hints for ``method``, with those ``declared`` (an ``x-mcp-annotations`` object) put over them, except a
    claim the method rules out, which is left out and said in ``notes``."""
    hints = {
        "read_only": method in _READ_ONLY,
        "destructive": method not in _READ_ONLY,
        "idempotent": method in _IDEMPOTENT,
        "open_world": True,
    }
    if declared is not None:
        if not isinstance(declared, dict):
            raise ConfigError(f"The {ANNOTATIONS_EXTENSION} of {label} is not an object.")
        for key, value in declared.items():
            if key in _HINTS:
                if not isinstance(value, bool):
                    raise ConfigError(f"The {ANNOTATIONS_EXTENSION} {key} of {label} is not true or false.")
                if (reason := _ruled_out(method, key, value)) is not None:
                    if notes is not None:
                        notes.append(f"its {ANNOTATIONS_EXTENSION} {key}: {str(value).lower()} is ignored: {reason}")
                    continue
                hints[_HINTS[key]] = value
        if declared.get("readOnlyHint") is True and "destructiveHint" not in declared and method not in _OVERWRITES:
            hints["destructive"] = False  # a POST that says it only reads says, at least, that it destroys nothing
    if hints["read_only"]:
        hints["destructive"] = False  # as for MCP tools: destructive means something only for tools that write
    return ToolAnnotations(**hints, annotated=True)


def _ruled_out(method: str, key: str, value: bool) -> str | None:
    """Why the method's semantics rule out the hint, or None when the API may say it."""
    if key == "readOnlyHint" and value and method not in _READ_ONLY:
        return f"a {method} may write"
    if key == "destructiveHint" and not value and method in _OVERWRITES:
        return f"a {method} {_OVERWRITES[method]}"
    return None
