"""A webhook row's Output Schema through the nodes as KNIME runs them (Given/When/Then): the HTTP Tool Provider makes
it the tool's output schema, and the MCP Tool Caller's row for a response that breaks it is a tool error that keeps
the body, against the real webhook receiver on 127.0.0.1 (tests/servers/webhook_receiver.py)."""

from __future__ import annotations

import json
import secrets

import knime.extension as knext
import pandas as pd
import pytest

import node_host
from knime_mcp.tools.arrow import tools_from_frame
from node_contexts import ExecuteContext

pytestmark = pytest.mark.knime_node

STATUS = {"type": "object", "properties": {"status": {"type": "string"}}, "required": ["status"]}
"""What the receiver, which answers ``{"received": n}``, does not send."""


def test_a_webhook_response_that_breaks_its_rows_output_schema_is_the_callers_error_keeping_the_body(
    webhook_receiver_url: str,
) -> None:
    import extension
    from nodes.tool_caller import MCPToolCaller

    # Given a trusted webhook table whose row promises a status in every response
    hook = f"{webhook_receiver_url}/hooks/hook-{secrets.token_hex(4)}"
    webhooks = node_host.source_table(
        pd.DataFrame(
            {
                "Name": ["notify"],
                "URL": [hook],
                "Method": ["POST"],
                "Input Schema": [json.dumps({"type": "object", "properties": {"text": {"type": "string"}}})],
                "Output Schema": [json.dumps(STATUS)],
            }
        )  # fmt: skip
    )
    provider = node_host.set_parameters(
        extension.HTTPToolProvider(), document__document="", document__trust_webhooks=True
    )
    (tools,) = node_host.execute_node(provider, ExecuteContext(), webhooks)
    (tool,) = tools_from_frame(tools.to_pandas())
    assert tool.output_schema == STATUS
    # When the Tool Caller calls it, errors to a column
    caller = node_host.set_parameters(MCPToolCaller(), tool__name="notify", calls__on_error="COLUMN")
    data = knext.Table.from_pandas(pd.DataFrame({"text": ["hi"]}))
    (table,) = node_host.execute_node(caller, ExecuteContext(), data, tools)
    # Then the row is a tool error saying why the response does not fit, with the response kept
    frame = table.to_pandas()
    assert frame["Is error"].tolist() == [True]
    assert frame["Error"].iloc[0].endswith("'status' is a required property")
    assert json.loads(frame["Structured result"].iloc[0]) == {"received": 1}
