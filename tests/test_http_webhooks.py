"""Webhook rows become HTTP tools whose arguments are one JSON payload; a bad row is named."""

from __future__ import annotations

import json

import anyio
import pytest

from knime_mcp.calls.listing import list_http_tools
from knime_mcp.errors import ConfigError
from knime_mcp.http import BODY_ARGUMENTS, HttpOperation
from knime_mcp.http.webhooks import WebhookRow, webhook_tools
from knime_mcp.seal import is_sealed_here
from knime_mcp.tools.tool import ToolAnnotations

SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


def _row(**cells: str | None) -> WebhookRow:
    values: dict[str, str | None] = {
        "name": "notify", "url": "https://hooks.example.com/T1", "input_schema": json.dumps(SCHEMA),
    }  # fmt: skip
    return WebhookRow(**{**values, **cells})  # type: ignore[arg-type]


def test_a_webhook_row_is_a_tool_that_posts_its_arguments_to_its_url() -> None:
    (tool,) = webhook_tools([_row(description="Tell the team.")])
    assert tool.name == "notify" and tool.description == "Tell the team."
    assert tool.http == HttpOperation(method="POST", path="", body=BODY_ARGUMENTS)
    assert tool.server.target == "https://hooks.example.com/T1" and tool.input_schema == SCHEMA
    assert tool.annotations == ToolAnnotations()  # no hints: the workflow behind a webhook may do anything
    # Rows are data: their servers are not sealed unless trusted
    assert not is_sealed_here(tool.server)
    (trusted,) = webhook_tools([_row()], sealed=True)
    assert is_sealed_here(trusted.server)


def test_the_method_defaults_to_post_and_a_get_webhook_has_no_hints_either() -> None:
    (post,) = webhook_tools([_row()])
    (get,) = webhook_tools([_row(method="get", input_schema="")])
    assert post.http is not None and post.http.method == "POST"
    assert get.http is not None and get.http.method == "GET" and not get.annotations.annotated
    assert get.input_schema == {"type": "object", "properties": {}}


@pytest.mark.parametrize(
    ("cells", "said"),
    [
        ({"url": ""}, "Webhook Row7: no URL"),
        ({"url": "ftp://x"}, "Webhook Row7: the URL 'ftp://x' is not an http\\(s\\) URL"),
        ({"name": " "}, "Webhook Row7: no Name"),
        ({"method": "FETCH"}, "Webhook Row7: The HTTP method 'FETCH'"),
        ({"input_schema": "{nope"}, "Webhook Row7: the Input Schema is not JSON"),
        ({"input_schema": "[1]"}, "Webhook Row7: the Input Schema is not a JSON Schema object"),
        ({"input_schema": '{"type": "string"}'}, "Webhook Row7: the Input Schema is not a JSON Schema object"),
    ],
)
def test_a_bad_row_is_an_error_naming_the_row(cells: dict[str, str], said: str) -> None:
    with pytest.raises(ConfigError, match=said):
        webhook_tools([_row(**cells, label="Row7")])  # type: ignore[arg-type]


def test_a_row_without_a_label_is_named_by_its_number() -> None:
    with pytest.raises(ConfigError, match="Webhook row 2: no URL"):
        webhook_tools([_row(), _row(url=None)])


def test_webhooks_alone_are_shaped_like_any_tools() -> None:
    rows = [_row(), _row(name="notify", url="https://hooks.example.com/T2")]
    listing = anyio.run(lambda: list_http_tools(None, webhooks=rows, prefix="hook"))
    assert [tool.name for tool in listing.tools] == ["hook_notify", "hook_notify_2"]


def test_neither_a_document_nor_webhooks_is_an_error() -> None:
    with pytest.raises(ConfigError, match="Neither an OpenAPI document, a base URL to find one at, nor webhooks"):
        anyio.run(lambda: list_http_tools(""))
