"""The Agent Prompter node, run as KNIME runs it (Given/When/Then), on both hosts.

The model is a scripted OpenAI-compatible endpoint on 127.0.0.1 reached through langchain-openai; the MCP servers are
the real demo server over Streamable HTTP and stdio, listed by the real MCP Tool Provider node.

Workflow tools (``workflow_tools``): on KNIME's real API the tools table holds KNIME's own WorkflowTool cells and
KNIME's launcher hands each call to the context's ``_execute_tool``; the headless stand-in has no such column type,
so there the node's cell reader is swapped for one returning stand-ins with WorkflowTool's documented fields. The
context records each call and answers in KNIME 5.5's or 5.6's shape: the tests show our side of the call (shape,
thread, results, log), not KNIME's execution of the workflow.
"""

from __future__ import annotations

import json
import shlex
import threading
from typing import Any

import knime.extension as knext
import pandas as pd
import pytest
from knime.extension.parameter import extract_parameters

import knext_bootstrap
import node_host
from agent_runs import API_KEY, agent_node, chat_model_port, offered_tools, provider_tools_table, run_agent_node
from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, Reply, answer, http_error, tool_calls
from fixtures.oauth_servers import browser_visits
from knime_mcp.agent.toolset import WORKFLOW_EXECUTION_HINTS
from knime_mcp.errors import ChatModelError
from node_contexts import ConfigureContext, ExecuteContext
from workflow_tools import ExecutesWorkflowTools, workflow_tool, workflow_tools_table

pytestmark = pytest.mark.knime_node

OLDER_CONVERSATION = ["Role", "Content", "Tool Calls", "Tool Call ID", "Tool Name", "Images"]
"""The conversation columns before the Image column: tables of older workflows, still accepted as history."""
CONVERSATION = [*OLDER_CONVERSATION, "Image"]
LOG = [
    "Turn", "Tool Call ID", "Tool", "Kind", "Server", "Arguments", "Status", "Error", "Duration (ms)", "Attempts",
    "Result Size", "Result", "Approval", "Approval Time", "App URI", "App bytes",
]  # fmt: skip


@pytest.fixture(scope="module")
def demo_tools_table(demo_http_url: str) -> Any:
    return provider_tools_table((demo_http_url, "", {}))


# -- Agent Prompter: configure --------------------------------------------------------------------------------------


def test_configure_gives_the_conversation_and_log_specs_without_connecting(demo_tools_table: Any) -> None:
    model_spec = chat_model_port("http://nonexistent.invalid/v1").spec
    conversation, log, _ = node_host.configure_node(
        agent_node("Hi"), ConfigureContext(), model_spec, demo_tools_table.schema, None, []
    )
    assert conversation.column_names == CONVERSATION and log.column_names == LOG
    assert str(conversation["Image"].ktype) == "PNG Image" and conversation["Images"].ktype == knext.string()
    assert log["Turn"].ktype == knext.int64() and log["Duration (ms)"].ktype == knext.double()
    (with_errors, _, _) = node_host.configure_node(
        agent_node("Hi", errors="COLUMN"), ConfigureContext(), model_spec, demo_tools_table.schema, None, []
    )
    assert with_errors.column_names == [*CONVERSATION, "Error"] and str(with_errors["Image"].ktype) == "PNG Image"


def test_a_tools_table_without_tool_columns_is_an_invalid_setting() -> None:
    schema = knext.Schema.from_columns([knext.Column(knext.string(), "Name")])
    model_spec = chat_model_port("http://127.0.0.1:1/v1").spec
    with pytest.raises(knext.InvalidParametersError, match="no MCP tool column and no workflow tool column"):
        node_host.configure_node(agent_node("Hi"), ConfigureContext(), model_spec, schema, None, [])


def test_an_empty_user_message_is_an_invalid_setting(demo_tools_table: Any) -> None:
    model_spec = chat_model_port("http://127.0.0.1:1/v1").spec
    with pytest.raises(knext.InvalidParametersError, match="user message is empty"):
        node_host.configure_node(agent_node(""), ConfigureContext(), model_spec, demo_tools_table.schema, None, [])


# -- Agent Prompter: execute ----------------------------------------------------------------------------------------


class WorkflowToolContext(ExecutesWorkflowTools, ExecuteContext):
    """An execution context of KNIME 5.5 or 5.6 as far as workflow tools go."""

    def __init__(self, version: str, credentials: dict[str, tuple[str, str]]) -> None:
        super().__init__(credentials)
        self._setup_tools(version)


SAMPLER = workflow_tool("Row Sampler", "Samples rows.", {"rows": {"type": "integer"}})
# KNIME 5.5's two-part answer of _execute_tool can only be shown on the stand-in: the real launcher's sources are 5.12.
VERSIONS = ["5.6"] if knext_bootstrap.REAL_KNIME else ["5.5", "5.6"]


@pytest.mark.parametrize("version", VERSIONS)
def test_an_agent_run_uses_two_mcp_servers_and_a_workflow_tool_and_recovers_from_a_failing_tool(
    version: str, demo_http_url: str, demo_stdio_command: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the tools of the demo server over HTTP and over stdio, and a workflow tool column
    tools = provider_tools_table((demo_http_url, "web", {}), (shlex.join(demo_stdio_command), "local", {}))
    tools = workflow_tools_table([SAMPLER], monkeypatch, tools)
    script = [
        tool_calls(
            ("c1", "web_add", {"a": 2, "b": 3}),
            ("c2", "local_echo", {"text": "hi"}),
            ("c3", "Row_Sampler", {"rows": 3}),
        ),
        tool_calls(("c4", "web_fail", {"message": "quota exceeded"})),
        tool_calls(("c5", "local_word_stats", {"text": "all good now"})),
        answer("2 + 3 = 5, sampled 3 rows, and the text has 3 words."),
    ]
    ctx = WorkflowToolContext(version, {"llm": ("", API_KEY)})
    with FakeOpenAIEndpoint(script) as endpoint:
        node = agent_node("Do it all.", workflow_column="Workflow Tool")
        conversation, log = run_agent_node(node, ctx, chat_model_port(endpoint.base_url), tools)

    # Then every call reached its tool: two MCP servers and the workflow tool through KNIME's call
    assert list(log["Tool"]) == ["web_add", "local_echo", "Row_Sampler", "web_fail", "local_word_stats"]
    assert list(log["Kind"]) == ["MCP", "MCP", "workflow", "MCP", "MCP"]
    assert list(log["Status"]) == ["ok", "ok", "ok", "tool_error", "ok"]
    assert list(log["Turn"]) == [1, 1, 1, 2, 3]
    assert ctx.calls == [(SAMPLER, {"rows": 3}, [], WORKFLOW_EXECUTION_HINTS)]
    assert ctx.threads == [threading.get_ident()]
    # And the model saw the failure and answered in the end
    failure = next(m for m in endpoint.requests[2]["messages"] if m.get("tool_call_id") == "c4")
    assert "quota exceeded" in failure["content"]
    assert conversation["Role"].iloc[-1] == "assistant" and "sampled 3 rows" in conversation["Content"].iloc[-1]
    assert ctx.progress and all(0.0 <= fraction <= 1.0 for fraction, _ in ctx.progress)


def test_the_conversation_output_fed_back_as_history_continues_the_conversation(demo_tools_table: Any) -> None:
    with FakeOpenAIEndpoint([tool_calls(("c1", "add", {"a": 2, "b": 3})), answer("5"), answer("10")]) as endpoint:
        model = chat_model_port(endpoint.base_url)
        first, _ = run_agent_node(agent_node("2 + 3?"), ExecuteContext({"llm": ("", API_KEY)}), model, demo_tools_table)
        history = node_host.source_table(first.reset_index(drop=True))
        ctx = ExecuteContext({"llm": ("", API_KEY)})
        second, log = run_agent_node(agent_node("Doubled?"), ctx, model, demo_tools_table, history)

    sent = endpoint.requests[2]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert list(second["Content"])[: len(first)] == list(first["Content"])
    assert list(second["Content"])[len(first) :] == ["Doubled?", "10"] and log.empty


def _columns(schema: knext.Schema) -> list[tuple[str, knext.KnimeType]]:
    """What KNIME compares between the spec of ``configure`` and the table of ``execute``: names and types."""
    return [(column.name, column.ktype) for column in schema]


@pytest.mark.parametrize("errors", ["FAIL", "COLUMN"])
def test_a_chart_a_tool_returns_is_a_png_image_cell_of_the_conversation(demo_tools_table: Any, errors: str) -> None:
    import PIL.Image

    # Given a model that has the demo server render a chart of three bars
    script = [tool_calls(("c1", "render_chart", {"values": [1.0, 2.0, 3.0]})), answer("Three bars.")]
    ctx = ExecuteContext({"llm": ("", API_KEY)})
    node = agent_node("Chart 1, 2, 3.", errors=errors)
    with FakeOpenAIEndpoint(script) as endpoint:
        model = chat_model_port(endpoint.base_url)
        (spec, _, _) = node_host.configure_node(node, ConfigureContext(), model.spec, demo_tools_table.schema, None, [])
        table, _, _ = node_host.execute_node(node, ctx, model, demo_tools_table, None, [])
    # Then the conversation has the columns configure declared, Image as KNIME's PNG image cells
    assert _columns(table.schema) == _columns(spec) and str(table.schema["Image"].ktype) == "PNG Image"
    # And the message that brings the tool's image to the model shows the chart: 3 bars of 6 px, 2 px apart, 48 high
    frame = table.to_pandas()
    has_image = frame["Image"].map(lambda image: isinstance(image, PIL.Image.Image))
    assert list(frame["Role"]) == ["user", "assistant", "tool", "user", "assistant"]
    assert has_image.tolist() == [False, False, False, True, False] and frame["Image"][~has_image].isna().all()
    assert frame["Image"].iloc[3].size == (26, 48)
    assert json.loads(frame["Images"].iloc[3])[0].startswith("data:image/png;base64,")


@pytest.mark.parametrize("made_by", ["this version", "an older version"])
def test_a_conversation_with_a_chart_continues_with_or_without_the_image_column(
    demo_tools_table: Any, made_by: str
) -> None:
    import PIL.Image

    # Given a conversation with a chart, as this node outputs it (PNG image cells in Image) or as it did before the
    # Image column (the chart only in Images)
    tools = demo_tools_table
    script = [tool_calls(("c1", "render_chart", {"values": [2.0]})), answer("One bar.")]
    with FakeOpenAIEndpoint(script) as endpoint:
        ctx = ExecuteContext({"llm": ("", API_KEY)})
        first, _, _ = node_host.execute_node(
            agent_node("Chart 2."), ctx, chat_model_port(endpoint.base_url), tools, None, []
        )
    if made_by == "an older version":
        history = node_host.source_table(first.to_pandas()[OLDER_CONVERSATION].reset_index(drop=True))
        assert history.column_names == OLDER_CONVERSATION
    else:
        history = node_host.source_table(first)
        assert str(history.schema["Image"].ktype) == "PNG Image"
    # When the agent is configured with it and continues it
    with FakeOpenAIEndpoint([answer("Still one bar.")]) as endpoint:
        model = chat_model_port(endpoint.base_url)
        node_host.configure_node(
            agent_node("And now?"), ConfigureContext(), model.spec, tools.schema, history.schema, []
        )
        second, _ = run_agent_node(
            agent_node("And now?"), ExecuteContext({"llm": ("", API_KEY)}), model, tools, history
        )
    # Then the model sees the history with its chart, and the output shows the chart in the Image column again
    sent = endpoint.requests[0]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "user", "assistant", "user"]
    assert any(part.get("type") == "image_url" for part in sent[4]["content"])
    assert list(second.columns) == CONVERSATION and list(second["Content"])[-2:] == ["And now?", "Still one bar."]
    assert isinstance(second["Image"].iloc[3], PIL.Image.Image) and second["Image"].iloc[3].size == (10, 48)


def test_the_error_column_mode_outputs_the_error_instead_of_failing(demo_tools_table: Any) -> None:
    looping = [tool_calls((f"c{i}", "echo", {"text": "again"})) for i in range(3)]
    with FakeOpenAIEndpoint(looping) as endpoint:
        node = agent_node("Loop.", iteration_limit=2, errors="COLUMN")
        ctx = ExecuteContext({"llm": ("", API_KEY)})
        conversation, log = run_agent_node(node, ctx, chat_model_port(endpoint.base_url), demo_tools_table)
    assert list(conversation.columns) == [*CONVERSATION, "Error"]
    assert pd.isna(conversation["Role"].iloc[-1]) and "iteration limit" in conversation["Error"].iloc[-1]
    assert list(log["Status"]) == ["ok", "ok"]


def test_the_final_answer_mode_asks_once_more_without_tools(demo_tools_table: Any) -> None:
    script: list[Reply] = [tool_calls(("c1", "echo", {"text": "x"})), answer("Here is what I have.")]
    with FakeOpenAIEndpoint(script) as endpoint:
        node = agent_node("Loop.", iteration_limit=1, on_limit="FINAL_ANSWER")
        ctx = ExecuteContext({"llm": ("", API_KEY)})
        conversation, _ = run_agent_node(node, ctx, chat_model_port(endpoint.base_url), demo_tools_table)
    assert "tools" in endpoint.requests[0] and "tools" not in endpoint.requests[1]
    assert conversation["Content"].iloc[-1] == "Here is what I have."


def test_a_refused_key_fails_the_node_with_a_hint_and_without_the_key(demo_tools_table: Any) -> None:
    with FakeOpenAIEndpoint([http_error(401)]) as endpoint:
        with pytest.raises(ChatModelError, match="refused the API key") as caught:
            ctx = ExecuteContext({"llm": ("", API_KEY)})
            run_agent_node(agent_node("Hi"), ctx, chat_model_port(endpoint.base_url), demo_tools_table)
    assert "Hint:" in str(caught.value) and API_KEY not in str(caught.value)


def test_a_missing_credential_at_execution_is_an_invalid_setting(demo_tools_table: Any) -> None:
    model = chat_model_port("http://127.0.0.1:1/v1")
    with pytest.raises(knext.InvalidParametersError, match="'llm' is not available"):
        run_agent_node(agent_node("Hi"), ExecuteContext(), model, demo_tools_table)


def test_neither_the_api_key_nor_the_mcp_token_appear_in_any_output_log_row_or_message(
    auth_server_url: str, auth_token: str
) -> None:
    # Given tools of a server that needs a bearer token, and a model that needs a key, both in credentials
    credentials = {"llm": ("", API_KEY), "mcp-token": ("", auth_token)}
    bearer = {"kind": "BEARER", "credential": "mcp-token"}
    tools = provider_tools_table((auth_server_url, "", bearer), credentials=credentials)
    script = [
        tool_calls(("c1", "echo", {"text": "hello", "password": "hunter2"}), ("c2", "fail", {"message": "denied"})),
        answer("Done."),
    ]
    ctx = ExecuteContext(credentials)
    node = agent_node("Use the tools.", errors="COLUMN")
    with FakeOpenAIEndpoint(script) as endpoint:
        conversation, log = run_agent_node(
            node, ctx, chat_model_port(endpoint.base_url, credentials=credentials), tools
        )
    # Then the calls went through with the token, yet no secret is in the outputs, settings, warnings or requests
    assert list(log["Status"]) == ["ok", "tool_error"]
    everything = conversation.to_csv() + log.to_csv() + json.dumps(extract_parameters(node)) + " ".join(ctx.warnings)
    everything += json.dumps(endpoint.requests)
    assert API_KEY not in everything and auth_token not in everything and "hunter2" not in log.to_csv()
    assert "***" in log["Arguments"].iloc[0]


def test_cancel_stops_a_run_that_waits_for_a_slow_tool(demo_tools_table: Any) -> None:
    from knime_mcp.errors import CancelledByUser

    with FakeOpenAIEndpoint([tool_calls(("c1", "sleep", {"seconds": 600}))]) as endpoint:
        ctx = ExecuteContext({"llm": ("", API_KEY)}, cancel_when=lambda: len(endpoint.requests) >= 1)
        with pytest.raises((CancelledByUser, node_host.NodeCanceled)):
            run_agent_node(agent_node("Wait."), ctx, chat_model_port(endpoint.base_url), demo_tools_table)


def test_mcp_tools_whose_credential_is_not_connected_are_an_invalid_setting(
    auth_server_url: str, auth_token: str
) -> None:
    bearer = {"kind": "BEARER", "credential": "mcp-token"}
    tools = provider_tools_table((auth_server_url, "", bearer), credentials={"mcp-token": ("", auth_token)})
    with pytest.raises(knext.InvalidParametersError, match="credentials 'mcp-token'"):
        run_agent_node(
            agent_node("Hi"), ExecuteContext({"llm": ("", API_KEY)}), chat_model_port("http://127.0.0.1:1/v1"), tools
        )


def test_a_destructive_tool_is_not_offered_by_default_and_the_warning_and_log_name_it(
    demo_tools_table: Any, caplog: pytest.LogCaptureFixture
) -> None:
    # Given the demo server's tools, one of them annotated destructive
    script: list[Reply] = [tool_calls(("c1", "delete_record", {"record_id": "r1"})), answer("It is not there.")]
    with FakeOpenAIEndpoint(script) as endpoint, caplog.at_level("WARNING", logger="knime_mcp.agent.loop"):
        ctx = ExecuteContext({"llm": ("", API_KEY)})
        # When the agent runs with the default tool policy
        _, log = run_agent_node(agent_node("Delete r1."), ctx, chat_model_port(endpoint.base_url), demo_tools_table)
    # Then the model is never offered it, a call of it anyway names no tool, and the warning and the log say why
    offered = offered_tools(endpoint.requests[0])
    assert "echo" in offered and "delete_record" not in offered
    assert list(log["Status"]) == ["unknown_tool"]
    assert "Not offered to the model: tool 'delete_record' is annotated destructive" in ctx.warnings[-1]
    assert "tool 'delete_record' is annotated destructive" in caplog.text


def test_the_deny_list_leaves_out_a_tool_that_the_destructive_policy_allows(demo_tools_table: Any) -> None:
    with FakeOpenAIEndpoint([answer("Denied.")]) as endpoint:
        node = agent_node("Echo hi.", deny="^echo$", destructive="ALLOW")
        ctx = ExecuteContext({"llm": ("", API_KEY)})
        run_agent_node(node, ctx, chat_model_port(endpoint.base_url), demo_tools_table)
    offered = offered_tools(endpoint.requests[0])
    assert "echo" not in offered and "delete_record" in offered
    assert "tool 'echo' matches the tool deny-list '^echo$'" in ctx.warnings[-1]


@pytest.mark.parametrize("unannotated_destructive", [False, True])
def test_tools_without_annotations_are_offered_and_named_unless_treated_as_destructive(
    paged_server_url: str, unannotated_destructive: bool
) -> None:
    # Given a server that annotates none of its 25 tools, as most FastMCP and mcp 1.x servers
    tools = provider_tools_table((paged_server_url, "", {}))
    with FakeOpenAIEndpoint([answer("Done.")]) as endpoint:
        ctx = ExecuteContext({"llm": ("", API_KEY)})
        node = agent_node("Hi.", unannotated_destructive=unannotated_destructive)
        run_agent_node(node, ctx, chat_model_port(endpoint.base_url), tools)
    offered = offered_tools(endpoint.requests[0])
    if unannotated_destructive:
        # Then with the setting on, none is offered, and the warning says which setting blocked them
        assert offered == [] and "tool 'tool_00' has no MCP annotations" in ctx.warnings[-1]
    else:
        # Then by default all are offered, and the warning names them as not known to be safe
        assert len(offered) == 25
        assert "Offered without MCP annotations, so not known to be safe: 'tool_00', 'tool_01'" in ctx.warnings[-1]


def _edited(tools: Any, **server_changes: Any) -> Any:
    """The tools table after someone edited the servers in its MCP Tool cells, as String Manipulation could."""
    frame = tools.to_pandas()

    def edit(cell: str) -> str:
        tool = json.loads(cell)
        tool["server"].update(server_changes)
        return json.dumps(tool)

    frame["MCP Tool"] = frame["MCP Tool"].map(edit)
    return node_host.source_table(frame)


@pytest.mark.parametrize("trust_all_servers", [False, True])
def test_a_tools_table_edited_after_the_provider_is_data_and_its_loopback_server_is_refused_unless_trusted(
    demo_tools_table: Any, trust_all_servers: bool
) -> None:
    # Given the provider's table, its server renamed in the table by hand (so the seal no longer fits)
    tools = _edited(demo_tools_table, name="edited")
    script: list[Reply] = [tool_calls(("c1", "echo", {"text": "hi"})), answer("Done.")]
    with FakeOpenAIEndpoint(script) as endpoint:
        node = agent_node("Echo hi.", trust_all_servers=trust_all_servers)
        _, log = run_agent_node(node, ExecuteContext({"llm": ("", API_KEY)}), chat_model_port(endpoint.base_url), tools)
    # Then the loopback server is refused with the way out, unless the user trusts every server of the table
    if trust_all_servers:
        assert list(log["Status"]) == ["ok"]
    else:
        assert list(log["Status"]) == ["failed"]
        assert "127.0.0.1, a loopback address" in log["Error"].iloc[0]
        assert "trust every server in the tools table" in log["Error"].iloc[0]


def test_tools_and_conversation_tables_without_rows_or_batches_run_the_model_without_tools() -> None:
    # Given a tools table and a conversation table without rows, which KNIME may hand over without any batch
    tools = node_host.source_table(pd.DataFrame({"MCP Tool": pd.Series([], dtype=str)}))
    history = node_host.source_table(pd.DataFrame({column: pd.Series([], dtype=str) for column in OLDER_CONVERSATION}))
    # When the agent runs
    with FakeOpenAIEndpoint([answer("Hello.")]) as endpoint:
        ctx = ExecuteContext({"llm": ("", API_KEY)})
        conversation, log = run_agent_node(agent_node("Hi"), ctx, chat_model_port(endpoint.base_url), tools, history)
    # Then the model answers with no tool and no history, and the outputs have their columns
    assert [m["role"] for m in endpoint.requests[0]["messages"]] == ["system", "user"]
    assert list(conversation.columns) == CONVERSATION and list(conversation["Content"]) == ["Hi", "Hello."]
    assert list(log.columns) == LOG and log.empty


# -- OAuth ----------------------------------------------------------------------------------------------------------


def test_an_agent_calls_an_oauth_servers_tool_and_signs_in_again_in_the_browser_when_the_sign_in_is_gone(
    oauth_servers: Any, browser: Any
) -> None:
    from knime_mcp.auth import OAuthClient, token_store

    # Given the tools of an OAuth server listed by a provider that signed in, whose sign-in was forgotten since
    tools = provider_tools_table((oauth_servers.http_url, "", {"kind": "OAUTH"}))
    token_store(oauth_servers.http_url, OAuthClient()).forget_tokens()
    # When the agent's model calls the server's tool (browser sign-in on, the default)
    ctx = ExecuteContext({"llm": ("", API_KEY)})
    with FakeOpenAIEndpoint([tool_calls(("c1", "echo", {"text": "signed in"})), answer("Done.")]) as endpoint:
        _, log = run_agent_node(agent_node("Echo."), ctx, chat_model_port(endpoint.base_url), tools)
    # Then the person signed in again, as the progress message said, and the call went through
    assert list(log["Status"]) == ["ok"] and len(browser_visits(browser)) == 2
    assert any((message or "").startswith("Waiting for sign-in in the browser: ") for _, message in ctx.progress)


def test_agent_settings_saved_by_0_2_0_without_browser_sign_in_load_with_it_on() -> None:
    saved = json.loads(node_host.save_settings(agent_node("Hi")))
    del saved["model"]["browser_sign_in"]
    older = json.dumps(saved)
    assert node_host.validate_settings("AgentPrompter", older, "0.2.0") is None
    loaded = node_host.load_settings("AgentPrompter", older, "0.2.0")
    assert loaded.browser_sign_in is True and loaded.user_message == "Hi"


# -- KNIME's unified Tool type (its mcp-tools branch, laid over the real sources) ---------------------------------


@pytest.mark.knime_launcher
@pytest.mark.parametrize("trust_all_servers", [False, True])
def test_with_knimes_tool_type_one_column_holds_mcp_and_workflow_tools_and_its_mcp_server_is_data(
    knime_tool_branch: Any, demo_http_url: str, trust_all_servers: bool
) -> None:
    from real_knime.tool_overlay import tool_table

    # Given a tools table of KNIME's own Tool cells: an MCP one naming the loopback demo server, a workflow one, a gap
    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    echo = knime_tool_branch.Tool.create_mcp_tool("echo", "Echoes the text.", schema, demo_http_url, "echo")
    sampler = knime_tool_branch.Tool.create_workflow_tool(
        "Row Sampler", "Samples rows.", {"rows": {"type": "integer"}}, 0, [], []
    )
    tools = node_host.source_table(tool_table([echo, sampler, None]))
    script = [tool_calls(("c1", "echo", {"text": "hi"}), ("c2", "Row_Sampler", {"rows": 3})), answer("Done.")]
    # When the agent runs
    with FakeOpenAIEndpoint(script) as endpoint:
        ctx = WorkflowToolContext("5.6", {"llm": ("", API_KEY)})
        node = agent_node("Echo hi and sample.", trust_all_servers=trust_all_servers)
        (spec, _, _) = node_host.configure_node(
            node, ConfigureContext(), chat_model_port(endpoint.base_url).spec, tools.schema, None, []
        )
        _, log = run_agent_node(node, ctx, chat_model_port(endpoint.base_url), tools)
    # Then the model is offered both, the workflow tool runs through KNIME, and the MCP tool through this extension's
    # client: its server came from a table, so a loopback address is refused unless every server is trusted
    assert sorted(offered_tools(endpoint.requests[0])) == ["Row_Sampler", "echo"]
    calls = log[log["Tool"] != "tools/list_changed"]  # the demo server announces list changes on every call
    assert list(calls["Kind"]) == ["MCP", "workflow"]
    assert [call[0].name for call in ctx.calls] == ["Row Sampler"]
    if trust_all_servers:
        assert list(calls["Status"]) == ["ok", "ok"] and "hi" in calls["Result"].iloc[0]
    else:
        assert list(calls["Status"]) == ["failed", "ok"]
        assert "127.0.0.1, a loopback address" in calls["Error"].iloc[0]


@pytest.mark.knime_launcher
def test_with_knimes_tool_type_a_providers_table_offers_each_tool_once(
    knime_tool_branch: Any, demo_http_url: str
) -> None:
    # Given the provider's table where KNIME has the Tool type: each tool in its MCP Tool and its KNIME Tool cell
    tools = provider_tools_table((demo_http_url, "", {}))
    assert "KNIME Tool" in tools.schema.column_names
    # When the agent runs, Then each tool is offered once, from its sealed MCP Tool cell, and is called as such
    with FakeOpenAIEndpoint([tool_calls(("c1", "echo", {"text": "hi"})), answer("Done.")]) as endpoint:
        node = agent_node("Echo hi.", trust_all_servers=False)
        _, log = run_agent_node(node, ExecuteContext({"llm": ("", API_KEY)}), chat_model_port(endpoint.base_url), tools)
    offered = offered_tools(endpoint.requests[0])
    assert "echo" in offered and len(offered) == len(set(offered))
    assert list(log[log["Tool"] == "echo"]["Status"]) == ["ok"]
