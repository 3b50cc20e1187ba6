"""MCP behaviour hints for an HTTP request, from its method's semantics unless the API says otherwise.

GET, HEAD and OPTIONS read only; GET, HEAD, OPTIONS, PUT and DELETE are idempotent (RFC 9110). Every other method
may write, and a tool that writes is destructive unless it says otherwise, as in the MCP specification (whose
``destructiveHint`` defaults to true): a method cannot tell a POST that appends from one that overwrites or deletes,
so the Agent Prompter's default policy (block destructive tools) offers only the reading operations. An OpenAPI
operation's ``x-mcp-annotations`` (``readOnlyHint``, ``destructiveHint``, ``idempotentHint``, ``openWorldHint``)
replaces what it names, e.g. ``destructiveHint: false`` for a POST that only adds.

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
_HINTS = {
    "readOnlyHint": "read_only", "destructiveHint": "destructive", "idempotentHint": "idempotent",
    "openWorldHint": "open_world",
}  # fmt: skip


def method_annotations(method: str, declared: Any = None, label: str = "") -> ToolAnnotations:
    """The hints for ``method``, with those ``declared`` (an ``x-mcp-annotations`` object) put over them."""
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
                hints[_HINTS[key]] = value
    if hints["read_only"]:
        hints["destructive"] = False  # as for MCP tools: destructive means something only for tools that write
    return ToolAnnotations(**hints, annotated=True)
