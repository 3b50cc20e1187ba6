"""Webhooks as tools: each row (name, description, URL, method, input and output schema) is a tool whose arguments
are sent as the JSON body of one request to its URL; a response that breaks the row's Output Schema is a tool error
that keeps the body (:mod:`knime_mcp.http.output_check`). A webhook says nothing of what the workflow behind it
does, so its tool has no behaviour hints: the MCP defaults (it may write and destroy), and the tool policy names it
as unannotated.

Layer: beside :mod:`knime_mcp.http.openapi`; the rows come from a KNIME table or a CSV file, so everything in them
is checked here and a bad row is a ConfigError naming it. Shaping (filter, prefix, names) is the provider's
:func:`~knime_mcp.calls.listing.shape_tools`.

    tools = webhook_tools([WebhookRow(name="notify", url="https://hooks.example.com/T1", input_schema='{...}')])
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from knime_mcp.config import DEFAULT_TIMEOUTS, ServerSpec, Timeouts
from knime_mcp.errors import ConfigError
from knime_mcp.seal import seal_spec
from knime_mcp.tools.argument_validation import schema_fault
from knime_mcp.tools.http_operation import BODY_ARGUMENTS, HttpOperation
from knime_mcp.tools.tool import MCPTool, ToolAnnotations

__all__ = ["WEBHOOK_COLUMNS", "WebhookRow", "check_webhook_columns", "webhook_rows", "webhook_tools"]

WEBHOOK_COLUMNS = ("Name", "Description", "URL", "Method", "Input Schema", "Output Schema")
"""The columns of a webhook table, in the HTTP Tool Provider's input and a ``--webhooks`` CSV file."""


@dataclass(frozen=True, kw_only=True)
class WebhookRow:
    """One webhook as a table row holds it; missing cells are None."""

    name: str | None
    url: str | None
    description: str | None = None
    method: str | None = None
    """Default POST."""

    input_schema: str | None = None
    """JSON Schema of the payload, as JSON text; empty: any object."""

    output_schema: str | None = None
    """JSON Schema (an object schema) every response must match, as JSON text; empty: responses are not checked. A
    JSON response that is not an object is checked as ``{"result": …}``, as MCP servers wrap it."""

    label: str = ""
    """How messages name the row, e.g. ``Row3``; empty: ``row N``, by its number."""


def check_webhook_columns(columns: Iterable[str]) -> None:
    """A webhook table needs the Name and URL columns; the others are optional."""
    if missing := [name for name in ("Name", "URL") if name not in set(columns)]:
        raise ConfigError(
            f"The webhook table has no {' or '.join(repr(name) for name in missing)} column.",
            hint=f"Give it the columns {', '.join(WEBHOOK_COLUMNS)} (all but Name and URL optional).",
        )


def webhook_rows(records: Iterable[tuple[str, Mapping[str, Any]]]) -> list[WebhookRow]:
    """The rows of a webhook table, each a ``(label, {column: value})`` pair; a missing value (None, NaN) or a
    column that is not there counts as empty."""

    def text(record: Mapping[str, Any], column: str) -> str | None:
        value = record.get(column)
        return value if isinstance(value, str) else None

    return [
        WebhookRow(
            name=text(record, "Name"),
            url=text(record, "URL"),
            description=text(record, "Description"),
            method=text(record, "Method"),
            input_schema=text(record, "Input Schema"),
            output_schema=text(record, "Output Schema"),
            label=label,
        )
        for label, record in records
    ]


def webhook_tools(
    rows: Iterable[WebhookRow],
    *,
    timeouts: Timeouts = DEFAULT_TIMEOUTS,
    sealed: bool = False,
    max_response_bytes: int | None = None,
) -> list[MCPTool]:
    """A tool per row. ``sealed``: the rows are a person's (settings, not data), so their URLs need no SSRF check
    downstream; table rows are data unless the node is told to trust them. ``max_response_bytes``: the largest
    response a tool reads (None: the default)."""
    return [
        _tool(row, row.label or f"row {number}", timeouts, sealed, max_response_bytes)
        for number, row in enumerate(rows, start=1)
    ]


def _tool(row: WebhookRow, label: str, timeouts: Timeouts, sealed: bool, max_response_bytes: int | None) -> MCPTool:
    def bad(message: str) -> ConfigError:
        return ConfigError(f"Webhook {label}: {message}", hint=f"Fix the webhook table's {label}.")

    name = (row.name or "").strip()
    url = (row.url or "").strip()
    if not name:
        raise bad("no Name.")
    if not url.startswith(("http://", "https://")):
        raise bad(f"the URL {url!r} is not an http(s) URL." if url else "no URL.")
    method = (row.method or "").strip().upper() or "POST"
    schema = _schema(row.input_schema, "Input Schema", bad) or {"type": "object", "properties": {}}
    output_schema = _schema(row.output_schema, "Output Schema", bad)
    try:
        operation = HttpOperation(method=method, body=BODY_ARGUMENTS, checks_output=output_schema is not None)
        server = ServerSpec(target=url, name=name, timeouts=timeouts, max_response_bytes=max_response_bytes)
    except ConfigError as exc:
        raise bad(exc.message) from exc
    return MCPTool(
        name=name,
        tool_name=name,
        description=(row.description or "").strip() or f"{method} {server.display_name}",
        input_schema=schema,
        parameter_schema=schema,
        output_schema=output_schema,
        annotations=ToolAnnotations(),  # no hints: whatever the workflow behind it does (the MCP defaults)
        server=seal_spec(server) if sealed else server,
        http=operation,
    )


def _schema(text: str | None, column: str, bad: Any) -> dict[str, Any] | None:
    """The object schema in the cell of ``column``; None for an empty cell."""
    if not (text or "").strip():
        return None
    try:
        schema = json.loads(text or "")
    except json.JSONDecodeError as exc:
        raise bad(f"the {column} is not JSON ({exc.msg} at position {exc.pos}).") from exc
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        raise bad(f'the {column} is not a JSON Schema object, e.g. {{"type": "object", "properties": {{…}}}}.')
    if fault := schema_fault(schema):
        raise bad(f"the {column} is not a valid JSON Schema: {fault}.")
    return schema
