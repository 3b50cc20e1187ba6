"""A webhook's response held to the *Output Schema* a person wrote for it: a response that breaks it is a tool
error that keeps the body, so the model and the tool-call log see what came back and why it does not fit.

Layer: beside :mod:`knime_mcp.http.response`, used by the dispatcher for tools whose
:attr:`~knime_mcp.tools.http_operation.HttpOperation.checks_output` is set; the check is
:func:`~knime_mcp.tools.argument_validation.validate_value`, the one tool arguments get.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from knime_mcp.tools.argument_validation import validate_value
from knime_mcp.tools.results import ToolResult

__all__ = ["checked_output"]


def checked_output(result: ToolResult, schema: dict[str, Any]) -> ToolResult:
    """``result`` as it is when it is an error already or its structured content matches ``schema``; else the same
    result marked an error, with the mismatch (:attr:`ToolResult.mismatch`) saying why."""
    if result.is_error:
        return result
    if result.structured is None:
        return replace(result, is_error=True, mismatch="the response is not JSON")
    problems = validate_value(schema, result.structured)
    return replace(result, is_error=True, mismatch="; ".join(problems)) if problems else result
