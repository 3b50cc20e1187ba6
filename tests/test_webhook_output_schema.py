"""A webhook row's Output Schema: the tool's output schema, which every response is held to against a real webhook
receiver on 127.0.0.1 (tests/servers/webhook_receiver.py, which answers ``{"received": n}``); a response that breaks
it is a tool error that keeps the body, in the dispatcher, the agent and the Tool Caller."""

from __future__ import annotations

import json
import secrets
from typing import Any

import pyarrow as pa
import pytest
from langchain_core.messages import AIMessage

from fixtures.http_servers import received
from knime_mcp.agent.loop import run_agent
from knime_mcp.caller.table import CallerOptions, call_table
from knime_mcp.calls.dispatch import CallOutcome, Dispatcher
from knime_mcp.calls.pool import ClientPool
from knime_mcp.errors import ConfigError
from knime_mcp.http import BODY_ARGUMENTS, HttpOperation
from knime_mcp.http.webhooks import WebhookRow, webhook_tools
from knime_mcp.mcp.sync import run_sync
from knime_mcp.seal import is_sealed_here
from knime_mcp.tools.arrow import tools_to_frame
from knime_mcp.tools.table_reading import tools_from_frame
from knime_mcp.tools.tool import MCPTool
from scripted_model import calls, scripted

PAYLOAD = json.dumps({"type": "object", "properties": {"text": {"type": "string"}}})
COUNTED = {"type": "object", "properties": {"received": {"type": "integer"}}, "required": ["received"]}
"""What the receiver answers."""
STATUS = {"type": "object", "properties": {"status": {"type": "string"}}, "required": ["status"]}
"""What the receiver does not answer."""


def _hook(base: str, output_schema: dict[str, Any] | None) -> MCPTool:
    """A trusted webhook (the receiver is on 127.0.0.1) under a name of its own, so its count starts at 1."""
    url = f"{base}/hooks/hook-{secrets.token_hex(4)}"
    text = None if output_schema is None else json.dumps(output_schema)
    row = WebhookRow(name="notify", url=url, input_schema=PAYLOAD, output_schema=text, label="Row0")
    (tool,) = webhook_tools([row], sealed=True)
    return tool


def _call(tool: MCPTool, arguments: dict[str, Any]) -> CallOutcome:
    async def go() -> CallOutcome:
        async with ClientPool() as pool:
            return await Dispatcher(pool).call(tool, arguments)

    return run_sync(go)


def test_a_rows_output_schema_is_its_tools_output_schema_and_survives_the_sealed_tools_table() -> None:
    # Given a trusted webhook row with an Output Schema
    (tool,) = webhook_tools(
        [WebhookRow(name="notify", url="https://hooks.example.com/T1", output_schema=json.dumps(STATUS))], sealed=True
    )
    assert tool.output_schema == STATUS and tool.http is not None and tool.http.checks_output
    # When its tools table is read back
    (read,) = tools_from_frame(tools_to_frame([tool]))
    # Then the schema and the check are kept, and the seal (which covers the request) still fits
    assert read.output_schema == STATUS and read.http == tool.http and is_sealed_here(read.server)


def test_a_row_without_an_output_schema_makes_the_request_tables_held_before_so_their_seals_still_fit() -> None:
    (tool,) = webhook_tools([WebhookRow(name="notify", url="https://hooks.example.com/T1")])
    assert tool.output_schema is None and tool.http == HttpOperation(method="POST", body=BODY_ARGUMENTS)
    assert "checks_output" not in tool.http.to_dict()


@pytest.mark.parametrize(
    ("cells", "said"),
    [
        ({"output_schema": "{nope"}, "Webhook Row7: the Output Schema is not JSON"),
        ({"output_schema": '{"type": "array"}'}, "Webhook Row7: the Output Schema is not a JSON Schema object"),
        (
            {"output_schema": '{"type": "object", "properties": {"n": {"type": "number-ish"}}}'},
            "Webhook Row7: the Output Schema is not a valid JSON Schema: 'number-ish' is not valid",
        ),
        ({"input_schema": '{"required": "text"}'}, "Webhook Row7: the Input Schema is not a valid JSON Schema"),
    ],
)
def test_a_schema_a_person_wrote_that_cannot_be_checked_is_an_error_naming_the_row_and_column(
    cells: dict[str, str], said: str
) -> None:
    with pytest.raises(ConfigError, match=said):
        webhook_tools([WebhookRow(name="notify", url="https://hooks.example.com/T1", label="Row7", **cells)])


def test_a_response_that_fits_the_output_schema_is_the_result(webhook_receiver_url: str) -> None:
    outcome = _call(_hook(webhook_receiver_url, COUNTED), {"text": "hi"})
    assert outcome.ok and outcome.result is not None and outcome.result.structured == {"received": 1}


def test_a_response_that_breaks_the_output_schema_is_a_tool_error_that_keeps_the_body(
    webhook_receiver_url: str,
) -> None:
    # Given a webhook whose Output Schema asks for a status the receiver never sends
    tool = _hook(webhook_receiver_url, STATUS)
    # When it is called
    outcome = _call(tool, {"text": "hi"})
    # Then the request was made, and its answer is a tool error that says why it does not fit and keeps the body
    assert [got["payload"] for got in received(webhook_receiver_url, tool.server.target.rsplit("/", 1)[1])] == [
        {"text": "hi"}
    ]
    assert outcome.record.status == "tool_error" and outcome.result is not None and outcome.result.is_error
    assert outcome.record.error == (
        "The result does not match the tool's output schema: 'status' is a required property"
    )
    assert outcome.result.structured == {"received": 1} and json.loads(outcome.result.text) == {"received": 1}
    with pytest.raises(Exception, match="'status' is a required property"):
        outcome.raise_for_error()


def test_the_agent_tells_the_model_what_came_back_and_why_it_does_not_fit(webhook_receiver_url: str) -> None:
    model = scripted(calls(("c1", "notify", {"text": "hi"})), AIMessage("Done."))

    run = run_sync(run_agent, model, [_hook(webhook_receiver_url, STATUS)], "Tell the team.")

    assert [(entry.tool, entry.status) for entry in run.log] == [("notify", "tool_error")]
    reply = model.requests[1][0][-1].text
    assert reply.startswith("The result does not match the tool's output schema: 'status' is a required property")
    assert '{"received":1}' in reply.replace(" ", "")


def test_the_tool_callers_row_keeps_the_body_and_names_the_mismatch_in_its_error(webhook_receiver_url: str) -> None:
    tool = _hook(webhook_receiver_url, STATUS)

    async def go() -> pa.Table:
        written: list[pa.RecordBatch] = []

        async def sink(batch: pa.RecordBatch) -> None:
            written.append(batch)

        async with ClientPool() as pool:
            batch = pa.RecordBatch.from_pydict({"text": ["a"]})
            await call_table(tool, [batch], sink, options=CallerOptions(on_error="column"), pool=pool)
        return pa.Table.from_batches(written)

    table = run_sync(go)

    assert table.column("Is error").to_pylist() == [True]
    assert json.loads(table.column("Structured result")[0].as_py()) == {"received": 1}
    assert table.column("Error")[0].as_py().endswith("'status' is a required property")
