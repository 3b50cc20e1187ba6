"""The Agent Prompter's data ports, run as KNIME runs the node (Given/When/Then).

Tables come in through the *Data inputs* group, reach workflow tools by the ids the model picks, and leave through
the *Data outputs* group. The model is a scripted OpenAI-compatible endpoint on 127.0.0.1 reached through
langchain-openai. The MCP records test lists the real demo server with the real MCP Tool Provider node.

Workflow tools (``workflow_tools``) are built as each host sees them: on KNIME's real API, KNIME's own WorkflowTool
cells whose ports carry their specs as KNIME's Java side writes them (``table_spec``), called through KNIME's
launcher, which hands the tool and Arrow tables to the Java-side double and the tables the tool returns back through
the Arrow backend; on the headless stand-in, stand-ins with WorkflowTool's fields, read by a swapped cell reader. The
context's ``_execute_tool`` records the tables it is given and computes the tool's output tables from them: what is
shown is our side of the call, not KNIME's execution of a workflow.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import knime.extension as knext
import pandas as pd
import pyarrow as pa
import pytest

import node_host
from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, Reply, answer, tool_calls
from node_contexts import ConfigureContext, ExecuteContext
from nodes.agent_prompter import AgentPrompter
from nodes.chat_model_connector import ChatModelConnector
from nodes.tool_provider import MCPToolProvider
from workflow_tools import ExecutesWorkflowTools, StandInToolPort, table_spec, workflow_tool, workflow_tools_table

pytestmark = pytest.mark.knime_node

API_KEY = "sk-data-node-canary-71c4"
SECRET_REGION = "Nordland-7731"
"""A cell value of a data input: the model must never see it."""
DATA_OUTPUTS = "Data outputs"
SALES_COLUMNS = {"Region": "String", "Amount": "Number (Float)"}

SAMPLER = workflow_tool(
    "Row Sampler",
    "Samples rows of a sales table.",
    {"rows": {"type": "integer", "description": "How many rows."}},
    input_ports=[StandInToolPort("sales", "The sales.", spec=table_spec(SALES_COLUMNS))],
    output_ports=[StandInToolPort("sample", "The sampled rows.", spec=table_spec(SALES_COLUMNS))],
)
TOTALS = workflow_tool(
    "Totals",
    "Sums the amounts.",
    {},
    input_ports=[StandInToolPort("rows", "Rows with an amount.", spec=table_spec({"Amount": "Number (Float)"}))],
    output_ports=[StandInToolPort("total", "The sum of the amounts.", spec=table_spec({"Total": "Number (Float)"}))],
)


def _sales() -> Any:
    sales = {"Region": [SECRET_REGION, "south", "east"], "Amount": [120.5, 80.0, 99.9]}
    return node_host.source_table(pd.DataFrame(sales))


def _frame(table: Any) -> pd.DataFrame:
    return table.to_pandas().reset_index(drop=True)


def _run_tools(tool: Any, parameters: dict[str, Any], inputs: list[Any]) -> list[Any]:
    """What the stand-in workflows compute: a sample of the first rows, or the total of the amounts."""
    frame = _frame(inputs[0])
    if tool.name == "Row Sampler":
        return [node_host.source_table(frame.head(parameters["rows"]).reset_index(drop=True))]
    return [node_host.source_table(pd.DataFrame({"Total": [float(frame["Amount"].sum())]}))]


class DataToolContext(ExecutesWorkflowTools, ExecuteContext):
    """An execution context of KNIME 5.6 as far as workflow tools go; tools get and return KNIME tables."""

    def __init__(self, failure: str | None = None) -> None:
        super().__init__({"llm": ("", API_KEY)})
        self._setup_tools("5.6", failure, _run_tools, (knext.Table, knext.BatchOutputTable))


def _model_port(base_url: str) -> Any:
    connector = ChatModelConnector()
    connector.base_url = base_url
    connector.model = "fake-gpt"
    connector.credential = "llm"
    (port,) = node_host.execute_node(connector, ExecuteContext({"llm": ("", API_KEY)}))
    return port


def _agent(**settings: Any) -> Any:
    node = AgentPrompter()
    node.user_message = "Work with the sales."
    node.workflow_column = "Workflow Tool"
    for name, value in settings.items():
        setattr(node, name, value)
    return node


def _execute(
    script: Sequence[Reply], ctx: ExecuteContext, tools: Any, data: list[Any], outputs: int, **settings: Any
) -> tuple[pd.DataFrame, pd.DataFrame, list[Any], list[dict[str, Any]]]:
    """Run the node with ``outputs`` data output ports; the conversation, the log, the data outputs, the requests."""
    with FakeOpenAIEndpoint(script) as endpoint:
        conversation, log, data_outputs = node_host.execute_node(
            _agent(**settings), ctx, _model_port(endpoint.base_url), tools, None, data,
            output_groups={DATA_OUTPUTS: outputs},
        )  # fmt: skip
    return conversation.to_pandas(), log.to_pandas(), data_outputs, endpoint.requests


def _tool_reply(requests: list[dict[str, Any]], call_id: str) -> str:
    return next(m["content"] for m in requests[-1]["messages"] if m.get("tool_call_id") == call_id)


# -- ports and configure ----------------------------------------------------------------------------------------------


def test_the_data_groups_come_after_the_existing_ports_which_keep_their_order_and_index() -> None:
    node = AgentPrompter()
    assert [p.name for p in node.input_ports] == ["Chat model", "Tools", "Conversation", "Data inputs"]
    assert [p.name for p in node.output_ports] == ["Conversation", "Tool calls", DATA_OUTPUTS]


def test_configure_leaves_the_data_outputs_unknown_one_per_port(monkeypatch: pytest.MonkeyPatch) -> None:
    tools = workflow_tools_table([SAMPLER], monkeypatch)
    with FakeOpenAIEndpoint([]) as endpoint:
        spec = _model_port(endpoint.base_url).spec
    for ports in (0, 2):
        conversation, log, data = node_host.configure_node(
            _agent(), ConfigureContext(), spec, tools.schema, None, [_sales().schema],
            output_groups={DATA_OUTPUTS: ports},
        )  # fmt: skip
        assert conversation.column_names[:2] == ["Role", "Content"] and "Tool" in log.column_names
        assert data == [None] * ports


# -- execute ----------------------------------------------------------------------------------------------------------


def test_tools_get_data_inputs_by_id_their_outputs_feed_later_calls_and_the_newest_tables_leave_the_node(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given two data inputs and two workflow tools that take and return tables
    tools = workflow_tools_table([SAMPLER, TOTALS], monkeypatch)
    regions = node_host.source_table(pd.DataFrame({"Region": ["south"], "Manager": ["Kim"]}))
    script = [
        tool_calls(("c1", "Row_Sampler", {"configuration": {"rows": 2}, "data_inputs": {"sales": 0}})),
        tool_calls(("c2", "Totals", {"data_inputs": {"rows": 2}})),
        answer("The first two sales total 200.5."),
    ]
    ctx = DataToolContext()
    # When the model samples the sales and totals the sample
    conversation, log, outputs, requests = _execute(script, ctx, tools, [_sales(), regions], outputs=2)

    # Then the model was told the tables by id, name, columns and rows, but never their data
    system = requests[0]["messages"][0]["content"]
    listed = [json.loads(line) for line in system.splitlines() if line.startswith('{"id"')]
    assert [(t["id"], t["name"], t["rows"]) for t in listed] == [(0, "input_table_1", 3), (1, "input_table_2", 1)]
    assert listed[0]["columns"] == [{"name": "Region", "type": "String"}, {"name": "Amount", "type": "Number (Float)"}]
    assert SECRET_REGION not in json.dumps(requests)
    # And each port's id was offered with the columns its spec names (KNIME's JSON text of the port's table spec)
    offered = {t["function"]["name"]: t["function"]["parameters"] for t in requests[0]["tools"]}
    sales_port = offered["Row_Sampler"]["properties"]["data_inputs"]["properties"]["sales"]
    assert "with the columns 'Region' (String), 'Amount' (Number (Float))" in sales_port["description"]
    # And each tool, as KNIME handed it on, got the chosen table as a KNIME table; the sample became table 2, which
    # the second call used
    assert [(tool, parameters) for tool, parameters, _, _ in ctx.calls] == [(SAMPLER, {"rows": 2}), (TOTALS, {})]
    assert _frame(ctx.calls[0][2][0])["Amount"].tolist() == [120.5, 80.0, 99.9]
    assert _frame(ctx.calls[1][2][0])["Amount"].tolist() == [120.5, 80.0]
    assert '"id": 2, "name": "Row Sampler: sample"' in _tool_reply(requests, "c1")
    assert '"id": 3, "name": "Totals: total"' in _tool_reply(requests, "c2")
    assert list(log["Kind"]) == ["workflow", "workflow"] and list(log["Status"]) == ["ok", "ok"]
    # And the two data outputs are the newest tables, oldest first: the sample and the total
    assert [_frame(table).columns.tolist() for table in outputs] == [["Region", "Amount"], ["Total"]]
    assert _frame(outputs[0])["Region"].tolist() == [SECRET_REGION, "south"]
    assert _frame(outputs[1])["Total"].tolist() == [200.5]
    assert conversation["Content"].iloc[-1] == "The first two sales total 200.5."


def test_a_bad_id_and_a_table_of_the_wrong_types_go_back_to_the_model_and_the_node_succeeds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tools = workflow_tools_table([TOTALS], monkeypatch)
    text_amounts = node_host.source_table(pd.DataFrame({"Amount": ["120.5", "80"]}))
    script = [
        tool_calls(("c1", "Totals", {"data_inputs": {"rows": 9}}), ("c2", "Totals", {"data_inputs": {"rows": 1}})),
        tool_calls(("c3", "Totals", {"data_inputs": {}})),
        tool_calls(("c4", "Totals", {"data_inputs": {"rows": 0}})),
        answer("Total found."),
    ]
    ctx = DataToolContext()
    conversation, log, outputs, requests = _execute(script, ctx, tools, [_sales(), text_amounts], outputs=1)

    assert list(log["Status"]) == ["tool_error", "tool_error", "invalid_arguments", "ok"]
    assert "no table with id 9" in _tool_reply(requests, "c1")
    assert "'Amount' is String, not Number (Float)" in _tool_reply(requests, "c2")
    assert len(ctx.calls) == 1 and _frame(outputs[0])["Total"].tolist() == [300.4]
    assert conversation["Content"].iloc[-1] == "Total found."


def test_a_failing_workflow_tool_is_a_tool_error_and_the_model_carries_on(monkeypatch: pytest.MonkeyPatch) -> None:
    tools = workflow_tools_table([TOTALS], monkeypatch)
    script = [tool_calls(("c1", "Totals", {"data_inputs": {"rows": 0}})), answer("The tool failed.")]
    ctx = DataToolContext(failure="Failed to execute tool: Totals: Execute failed")
    _, log, outputs, requests = _execute(script, ctx, tools, [_sales()], outputs=1)
    assert list(log["Status"]) == ["tool_error"] and "Execute failed" in _tool_reply(requests, "c1")
    assert _frame(outputs[0])["Region"].tolist() == [SECRET_REGION, "south", "east"]


def test_data_output_ports_beyond_the_tables_there_are_get_empty_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    tools = workflow_tools_table([TOTALS], monkeypatch)
    _, _, outputs, _ = _execute([answer("Nothing to do.")], DataToolContext(), tools, [_sales()], outputs=3)
    assert _frame(outputs[0])["Amount"].tolist() == [120.5, 80.0, 99.9]
    assert [(table.num_columns, table.num_rows) for table in outputs[1:]] == [(0, 0), (0, 0)]


def test_a_data_input_without_rows_or_batches_is_described_to_the_model_and_leaves_the_node_as_it_came(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a data input without rows, which KNIME may hand over without any batch
    tools = workflow_tools_table([TOTALS], monkeypatch)
    columns = {"Region": pa.array([], pa.string()), "Amount": pa.array([], pa.float64())}
    empty = node_host.source_table(pa.table(columns))
    # When the agent runs with one data output
    _, _, outputs, requests = _execute([answer("There are no sales.")], DataToolContext(), tools, [empty], outputs=1)
    # Then the model is told the table's columns and that it has no rows, and the table leaves the node unchanged
    system = requests[0]["messages"][0]["content"]
    listed = [json.loads(line) for line in system.splitlines() if line.startswith('{"id"')]
    assert [(t["id"], t["name"], t["rows"]) for t in listed] == [(0, "input_table_1", 0)]
    assert listed[0]["columns"] == [{"name": "Region", "type": "String"}, {"name": "Amount", "type": "Number (Float)"}]
    (table,) = outputs
    assert (table.num_rows, table.column_names) == (0, ["Region", "Amount"])


def test_without_data_the_model_is_told_nothing_about_a_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    plain = workflow_tool("Echo Text", "Echoes.", {"text": {"type": "string"}})
    tools = workflow_tools_table([plain], monkeypatch)
    _, _, outputs, requests = _execute([answer("Hi.")], DataToolContext(), tools, [], outputs=0)
    assert outputs == [] and "Data repository" not in requests[0]["messages"][0]["content"]


def test_a_tool_with_only_output_ports_puts_the_repository_in_use(monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = StandInToolPort("loaded", spec=table_spec({"Amount": "Number (Float)"}))
    load = workflow_tool("Load", "Loads sales.", {}, output_ports=[loaded])
    tools = workflow_tools_table([load], monkeypatch)
    ctx = DataToolContext()
    ctx.outputs = lambda tool, parameters, inputs: [node_host.source_table(pd.DataFrame({"Amount": [1.5, 2.5]}))]
    script = [tool_calls(("c1", "Load", {})), answer("Loaded.")]
    _, log, outputs, requests = _execute(script, ctx, tools, [], outputs=0)
    assert list(log["Status"]) == ["ok"] and outputs == []
    assert "Data repository" in requests[0]["messages"][0]["content"]
    assert '"id": 0, "name": "Load: loaded"' in _tool_reply(requests, "c1")


def test_the_records_of_an_mcp_result_become_a_table_that_leaves_the_node(demo_http_url: str) -> None:
    provider = MCPToolProvider()
    provider.server.server = demo_http_url
    (mcp_tools,) = node_host.execute_node(provider, ExecuteContext())
    tools = node_host.source_table(mcp_tools.to_pandas().reset_index(drop=True))
    order = {"customer": {"name": "Ada", "email": "ada@example.org"}, "items": [{"sku": "A-1", "quantity": 2}]}
    script = [tool_calls(("c1", "create_order", order)), answer("Ordered.")]
    _, log, outputs, requests = _execute(script, ExecuteContext({"llm": ("", API_KEY)}), tools, [], outputs=1,
                                         workflow_column=None)  # fmt: skip
    assert list(log["Status"]) == ["ok"]
    assert '"id": 0, "name": "create_order result"' in _tool_reply(requests, "c1")
    (items,) = outputs
    assert _frame(items).to_dict("list") == {"sku": ["A-1"], "quantity": [2]}
