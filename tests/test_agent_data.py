"""The agent's data repository: tables the model picks by id for workflow tools, tables tools return, MCP records.

The model is langchain-core's ``GenericFakeChatModel`` replaying scripted AIMessages, so each test shows what the
model was told and what it sent back. Workflow tools are stand-ins with ``WorkflowTool``'s documented fields, run by a
context whose ``_execute_tool`` records its calls (tables included) and returns scripted tables in KNIME 5.5's or
5.6's shape: what is tested is our side of the call, not KNIME's execution of the workflow. The MCP records test
uses the real demo server.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pytest
from langchain_core.messages import AIMessage, ToolMessage

from knime_mcp.agent.data import Column, DataRepository
from knime_mcp.agent.loop import AgentConfig, AgentRun, run_agent
from knime_mcp.agent.workflow import WORKFLOW_EXECUTION_HINTS, port_columns, workflow_tools
from knime_mcp.calls.listing import list_server_tools
from knime_mcp.config import ServerSpec
from knime_mcp.errors import ToolCallError
from knime_mcp.mcp.sync import CallerThread, run_sync
from knime_mcp.tools.records import records_table
from knime_mcp.tools.tool import MCPTool
from scripted_model import ScriptedChatModel, calls, scripted
from workflow_tools import ExecutesWorkflowTools, StandInToolPort, StandInWorkflowTool, table_spec

SALES = pa.table({"Region": ["north", "south", "east"], "Amount": [120.5, 80.0, 99.9]})
SALES_COLUMNS = {"Region": "String", "Amount": "Number (Float)"}
SECRET_CELL = "north"
"""A data value: it must never reach the model."""


class ToolContext(ExecutesWorkflowTools):
    """KNIME's execution context as far as workflow tools go."""

    def __init__(self, version: str = "5.6", failure: str | None = None, outputs: Any = None) -> None:
        self._setup_tools(version, failure, outputs)


def sampled(tool: Any, parameters: dict[str, Any], inputs: list[pa.Table]) -> list[pa.Table]:
    """A row sampler's output: the first ``rows`` rows of its input (tools without output ports return none)."""
    return [inputs[0].slice(0, parameters.get("rows", 1))] if tool.output_ports else []


SAMPLER = StandInWorkflowTool(
    name="Row Sampler",
    description="Samples rows of a sales table.",
    parameter_schema={"rows": {"type": "integer", "description": "How many rows."}},
    input_ports=[StandInToolPort("sales", "The sales to sample.", spec=table_spec(SALES_COLUMNS))],
    output_ports=[StandInToolPort("sample", "The sampled rows.")],
)
TOTALS = StandInWorkflowTool(
    name="Totals",
    description="Sums the amounts per region.",
    parameter_schema={},
    input_ports=[StandInToolPort("rows", "Rows with an amount.", spec=table_spec({"Amount": "Number (Float)"}))],
)


def run_with(
    model: ScriptedChatModel,
    ctx: ToolContext,
    tools: Sequence[Any] = (SAMPLER, TOTALS),
    tables: Sequence[pa.Table] = (SALES,),
    mcp_tools: Sequence[MCPTool] = (),
    **kwargs: Any,
) -> tuple[AgentRun, DataRepository]:
    repository = DataRepository()
    for number, table in enumerate(tables, start=1):
        repository.add(table, name=f"input_table_{number}", description=f"Input table {number}")
    caller = CallerThread()
    local, notes = workflow_tools(list(tools), ctx, caller, repository)
    assert notes == []
    result = run_sync(run_agent, model, [*mcp_tools, *local], "Go.", caller_thread=caller, data=repository, **kwargs)
    return result, repository


def tool_replies(result: AgentRun) -> list[ToolMessage]:
    return [message for message in result.conversation.new_messages if isinstance(message, ToolMessage)]


def statuses(result: AgentRun) -> list[str]:
    return [entry.status for entry in result.log]


def everything_sent(model: ScriptedChatModel) -> str:
    return json.dumps([[m.model_dump() for m in messages] for messages, _ in model.requests], default=str)


# -- what the model is told -----------------------------------------------------------------------------------------


def test_the_system_message_lists_each_table_by_id_name_columns_and_rows_but_never_its_data() -> None:
    model = scripted(AIMessage("Nothing to do."))
    run_with(model, ToolContext(), tables=[SALES, pa.table({"Id": [1, 2]})])
    system = model.requests[0][0][0].text
    listed = [json.loads(line) for line in system.splitlines() if line.startswith('{"id"')]
    assert listed == [
        {
            "id": 0, "name": "input_table_1", "description": "Input table 1", "rows": 3,
            "columns": [{"name": "Region", "type": "String"}, {"name": "Amount", "type": "Number (Float)"}],
        },
        {"id": 1, "name": "input_table_2", "description": "Input table 2", "rows": 2,
         "columns": [{"name": "Id", "type": "Number (Long Integer)"}]},
    ]  # fmt: skip
    assert "pass its id" in system and SECRET_CELL not in everything_sent(model)


def test_a_tool_with_input_ports_is_offered_in_knimes_shape_with_a_table_id_per_port() -> None:
    model = scripted(AIMessage("Nothing to do."))
    run_with(model, ToolContext())
    offered = {spec["function"]["name"]: spec["function"] for spec in model.requests[0][1] or []}
    parameters = offered["Row_Sampler"]["parameters"]
    assert parameters["required"] == ["configuration", "data_inputs"]
    assert parameters["properties"]["configuration"]["properties"] == SAMPLER.parameter_schema
    port = parameters["properties"]["data_inputs"]["properties"]["sales"]
    assert port["type"] == "integer" and "'Region' (String)" in port["description"]
    assert "'sample'" in offered["Row_Sampler"]["description"]
    assert list(offered["Totals"]["parameters"]["properties"]) == ["data_inputs"]


# -- tables in and out ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["5.5", "5.6"])
def test_a_tool_gets_the_chosen_table_and_its_output_joins_the_repository_and_feeds_a_later_call(version: str) -> None:
    ctx = ToolContext(version, outputs=sampled)
    model = scripted(
        calls(("c1", "Row_Sampler", {"configuration": {"rows": 2}, "data_inputs": {"sales": 0}})),
        calls(("c2", "Totals", {"data_inputs": {"rows": 1}})),
        AIMessage("Done."),
    )
    result, repository = run_with(model, ctx)

    assert [(tool.name, parameters, hints) for tool, parameters, _, hints in ctx.calls] == [
        ("Row Sampler", {"rows": 2}, WORKFLOW_EXECUTION_HINTS),
        ("Totals", {}, WORKFLOW_EXECUTION_HINTS),
    ]
    assert ctx.calls[0][2] == [SALES] and ctx.calls[1][2] == [SALES.slice(0, 2)]
    assert ctx.threads == [threading.get_ident()] * 2
    first = tool_replies(result)[0].text
    assert "Data repository update" in first and '"id": 1, "name": "Row Sampler: sample"' in first
    assert '"rows": 2' in first and SECRET_CELL not in first
    assert [table.name for table in repository.last(2)] == ["input_table_1", "Row Sampler: sample"]
    assert statuses(result) == ["ok", "ok"]


def test_a_tool_with_only_output_ports_keeps_flat_parameters_and_adds_its_tables() -> None:
    source = StandInWorkflowTool(
        "Load", "Loads data.", {"rows": {"type": "integer"}}, output_ports=[StandInToolPort("loaded")]
    )
    ctx = ToolContext(outputs=[pa.table({"x": [1, 2, 3]})])
    model = scripted(calls(("c1", "Load", {"rows": 3})), AIMessage("Loaded."))
    result, repository = run_with(model, ctx, tools=[source], tables=[])
    assert ctx.calls[0][1:3] == ({"rows": 3}, [])
    assert [(t.id, t.name, t.num_rows) for t in repository.tables] == [(0, "Load: loaded", 3)]
    assert "No tables yet" in model.requests[0][0][0].text


class VerboseContext(ToolContext):
    """A workflow whose message is far longer than the output cap."""

    def _execute_tool(self, tool: Any, parameters: dict[str, Any], inputs: list[Any], hints: dict[str, str]) -> Any:
        message, *rest = super()._execute_tool(tool, parameters, inputs, hints)
        return (f"{message}\n{'log line ' * 5000}", *rest)


def test_the_ids_of_a_tools_new_tables_reach_the_model_however_long_its_message_is() -> None:
    ctx = VerboseContext(outputs=sampled)
    model = scripted(
        calls(("c1", "Row_Sampler", {"configuration": {"rows": 2}, "data_inputs": {"sales": 0}})), AIMessage("Done.")
    )
    result, repository = run_with(model, ctx, config=AgentConfig(output_cap=1000))
    reply = tool_replies(result)[0].text
    assert len(reply.encode()) < 2000 and "log line" in reply  # the message was capped ...
    assert '"id": 1, "name": "Row Sampler: sample"' in reply  # ... but not the note naming the new table
    assert reply.index("Data repository update") > reply.rindex("log line")
    assert [table.name for table in repository.tables] == ["input_table_1", "Row Sampler: sample"]


# -- errors go back to the model --------------------------------------------------------------------------------------


def test_an_unknown_table_id_is_a_tool_error_naming_the_ids_there_are() -> None:
    ctx = ToolContext(outputs=sampled)
    model = scripted(
        calls(("c1", "Totals", {"data_inputs": {"rows": 7}})),
        calls(("c2", "Totals", {"data_inputs": {"rows": 0}})),
        AIMessage("Recovered."),
    )
    result, _ = run_with(model, ctx)
    assert statuses(result) == ["tool_error", "ok"] and len(ctx.calls) == 1
    failure = tool_replies(result)[0]
    assert failure.status == "error" and "no table with id 7" in failure.text and "0 to 0" in failure.text


def test_a_missing_table_for_an_input_port_is_refused_before_the_call() -> None:
    ctx = ToolContext()
    model = scripted(calls(("c1", "Totals", {"data_inputs": {}})), AIMessage("Oops."))
    result, _ = run_with(model, ctx)
    assert statuses(result) == ["invalid_arguments"] and ctx.calls == []
    assert "rows" in tool_replies(result)[0].text


def test_a_column_of_a_type_the_port_cannot_read_is_refused_naming_both_types() -> None:
    text_amounts = pa.table({"Region": ["north"], "Amount": ["120.5"]})
    ctx = ToolContext()
    model = scripted(calls(("c1", "Totals", {"data_inputs": {"rows": 0}})), AIMessage("Wrong table."))
    result, _ = run_with(model, ctx, tables=[text_amounts])
    assert statuses(result) == ["tool_error"] and ctx.calls == []
    reply = tool_replies(result)[0].text
    assert "'Amount' is String, not Number (Float)" in reply and "input port 'rows' got table 0" in reply


def test_integer_columns_are_accepted_where_the_port_expects_numbers() -> None:
    ctx = ToolContext()
    model = scripted(calls(("c1", "Totals", {"data_inputs": {"rows": 0}})), AIMessage("Summed."))
    result, _ = run_with(model, ctx, tables=[pa.table({"Amount": [1, 2]})])
    assert statuses(result) == ["ok"] and len(ctx.calls) == 1


@pytest.mark.parametrize("double", ["Number (Float)", "Number (Floating Decimal)", "Number (double)"])
def test_a_port_spec_as_knimes_java_side_writes_it_is_read_with_its_names_for_types(double: str) -> None:
    # WorkflowToolCell.specToString: compact JSON, keys in no fixed order, types as DataType.getName() names them
    # (older and newer KNIME versions name doubles differently), "" for a port that is not a table
    java_spec = '{"columns":[{"type":"' + double + '","name":"Amount"}],"name":"default"}'
    assert port_columns(java_spec) == [Column("Amount", double)] and port_columns("") is None
    totals = StandInWorkflowTool("Totals", "Sums.", {}, input_ports=[StandInToolPort("rows", spec=java_spec)])
    ctx = ToolContext()
    script = [calls(("c1", "Totals", {"data_inputs": {"rows": 0}}), ("c2", "Totals", {"data_inputs": {"rows": 1}}))]
    result, _ = run_with(scripted(*script, AIMessage("Summed.")), ctx, tools=[totals],
                         tables=[pa.table({"Amount": [1.5]}), pa.table({"Amount": ["1.5"]})])  # fmt: skip
    assert statuses(result) == ["ok", "tool_error"] and len(ctx.calls) == 1
    assert f"'Amount' is String, not {double}" in tool_replies(result)[1].text


def test_a_failing_workflow_tool_is_a_tool_error_that_names_the_columns_the_table_lacks() -> None:
    ctx = ToolContext(failure="Failed to execute tool: Totals: Column 'Amount' not found")
    model = scripted(calls(("c1", "Totals", {"data_inputs": {"rows": 0}})), AIMessage("It failed."))
    result, repository = run_with(model, ctx, tables=[pa.table({"Region": ["north"]})])
    assert statuses(result) == ["tool_error"] and len(repository) == 1
    reply = tool_replies(result)[0].text
    assert "Column 'Amount' not found" in reply and "lacks the columns 'Amount'" in reply
    assert result.conversation.new_messages[-1].text == "It failed."


def test_in_fail_fast_mode_a_bad_table_id_stops_the_run() -> None:
    model = scripted(calls(("c1", "Totals", {"data_inputs": {"rows": 3}})))
    with pytest.raises(ToolCallError, match="no table with id 3"):
        run_with(model, ToolContext(), config=AgentConfig(tool_errors="fail"))


# -- MCP records become tables ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def http_tools(demo_http_url: str) -> list[MCPTool]:
    return run_sync(list_server_tools, ServerSpec(target=demo_http_url, name="demo-http")).tools


def test_the_records_of_an_mcp_result_become_a_table_a_workflow_tool_can_take(http_tools: list[MCPTool]) -> None:
    items_port = StandInToolPort("items", spec=table_spec({"quantity": "Number (Long Integer)"}))
    count_items = StandInWorkflowTool("Count Items", "Counts rows.", {}, input_ports=[items_port])
    ctx = ToolContext()
    items = [{"sku": "A-1", "quantity": 2}, {"sku": "B-7", "quantity": 1}]
    order = {"customer": {"name": "Ada", "email": "ada@example.org"}, "items": items}
    model = scripted(
        calls(("c1", "create_order", order)),
        calls(("c2", "Count_Items", {"data_inputs": {"items": 0}})),
        AIMessage("Two items."),
    )
    result, repository = run_with(model, ctx, tools=[count_items], tables=[], mcp_tools=http_tools)
    assert statuses(result) == ["ok", "ok"]
    (table,) = repository.tables
    assert (table.name, table.num_rows) == ("create_order result", 2)
    assert [c.name for c in table.columns] == ["sku", "quantity"]
    assert ctx.calls[0][2] == [pa.table({"sku": ["A-1", "B-7"], "quantity": [2, 1]})]
    assert '"id": 0, "name": "create_order result"' in tool_replies(result)[0].text


def test_without_a_repository_mcp_results_stay_as_they_were(http_tools: list[MCPTool]) -> None:
    order = {"customer": {"name": "Ada", "email": "ada@example.org"}, "items": [{"sku": "A-1", "quantity": 2}]}
    model = scripted(calls(("c1", "create_order", order)), AIMessage("Ordered."))
    result = run_sync(run_agent, model, http_tools, "Order.")
    assert "Data repository" not in tool_replies(result)[0].text
    assert "Data repository" not in model.requests[0][0][0].text


# -- the pieces -------------------------------------------------------------------------------------------------------


def test_records_are_an_array_of_objects_or_the_one_such_array_an_object_holds() -> None:
    rows = [{"a": 1, "b": "x"}, {"a": 2.5, "c": True}]
    table = records_table({"rows": rows, "total": 2})
    assert table is not None and table.column_names == ["a", "b", "c"]
    assert table.column("a").to_pylist() == [1.0, 2.5] and table.column("c").to_pylist() == [None, True]
    assert records_table(rows) == table
    for not_records in ({"a": 1}, [], [1, 2], {"x": rows, "y": rows}, "text", None):
        assert records_table(not_records) is None


def test_record_values_of_mixed_types_become_json_text_and_reserved_names_are_renamed() -> None:
    table = records_table([{"v": 1, "<RowID>": "r1", " ": 0}, {"v": "one"}, {"v": {"n": 1}}])
    assert table is not None and table.column_names == ["v", "<RowID> (data)", "Column 3"]
    assert table.column("v").to_pylist() == ["1", "one", '{"n": 1}']


def test_keys_that_would_get_the_same_column_name_get_numbered_columns_and_keep_their_values() -> None:
    records = [{"<RowID>": "r1", "<RowID> (data)": "d1", "": 1, "Column 3": 2, "Column 3 (#1)": 3, "  ": 4}]
    table = records_table(records)
    assert table is not None
    assert table.column_names == [
        "<RowID> (data)", "<RowID> (data) (#1)", "Column 3", "Column 3 (#1)", "Column 3 (#1) (#1)", "Column 6",
    ]  # fmt: skip
    assert table.to_pylist() == [dict(zip(table.column_names, ["r1", "d1", 1, 2, 3, 4], strict=True))]


def test_the_repository_outputs_the_newest_tables_oldest_first() -> None:
    repository = DataRepository()
    for name in ("a", "b", "c"):
        repository.add(pa.table({"x": [1]}), name=name)
    assert [t.name for t in repository.last(2)] == ["b", "c"]
    assert [t.name for t in repository.last(5)] == ["a", "b", "c"] and repository.last(0) == []
    assert repository.get(1.0).name == "b"
    with pytest.raises(ToolCallError, match="no table with id True"):
        repository.get(True)


class RecordingHost:
    """A host whose tables are dicts: what the Agent Prompter does with ``knext.Table``."""

    def __init__(self) -> None:
        self.described: list[Any] = []

    def describe(self, table: Any) -> tuple[list[tuple[str, str]], int]:
        self.described.append(table)
        return [(name, "String") for name in table], len(next(iter(table.values())))

    def from_arrow(self, table: pa.Table) -> Any:
        return table.to_pydict()


def test_a_host_describes_its_own_tables_and_gets_held_arrow_tables_in_its_own_form() -> None:
    host = RecordingHost()
    repository = DataRepository(host)
    mine = repository.add({"Amount": ["1"]}, name="host table")
    arrow = repository.add(pa.table({"Amount": [1.0]}), name="arrow table")
    assert host.described == [{"Amount": ["1"]}] and mine.columns[0].type == "String" and mine.num_rows == 1
    assert repository.host_table(mine) == {"Amount": ["1"]}
    assert repository.host_table(arrow) == {"Amount": [1.0]}
    with pytest.raises(TypeError, match="only pyarrow Tables"):
        DataRepository().add({"x": [1]}, name="dict")
