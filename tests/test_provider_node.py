"""The MCP Tool Provider node, run through configure and execute as KNIME runs it (Given/When/Then)."""

from __future__ import annotations

import json
import logging
import shlex
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import knime.extension as knext
import pytest

import node_host
from fixtures.oauth_servers import CLIENT_ID, CLIENT_SECRET, MCP_TOOLS, OAuthServers, browser_visits
from fixtures.python_servers import SERVERS_DIR
from knime_mcp import MCPTool
from knime_mcp.auth import OAuthClient, signin, token_store
from knime_mcp.errors import CancelledByUser, ServerConnectError
from knime_mcp.seal import is_sealed_here
from knime_mcp.tools.arrow import tools_from_frame
from node_contexts import ConfigureContext, ExecuteContext

pytestmark = pytest.mark.knime_node

COLUMNS = [
    "MCP Tool", "Name", "Title", "Description", "Input Schema", "Output Schema",
    "Read-only", "Destructive", "Idempotent", "Open-world", "Server", "Notes", "Tool ID", "Kind", "Tags",
    "App", "Permissions",
]  # fmt: skip


def _provider(server: str, **settings: object):  # type: ignore[no-untyped-def]
    import extension

    node = extension.MCPToolProvider()
    node.server.server = server
    node.pasted_config = settings.pop("pasted_config", "")
    # KNIME sets every parameter from saved settings; here what an earlier test chose must not carry over.
    defaults = {"auth__credential": "", "auth__issuer": "", "auth__browser_sign_in": True, "auth__sign_in_again": False}
    return node_host.set_parameters(node, **{**defaults, **settings})


def test_configure_returns_the_table_spec_without_connecting() -> None:
    # Given a provider pointing at a server that does not exist
    node = _provider("http://nonexistent.invalid/mcp")
    # When it is configured
    (schema,) = node_host.configure_node(node, ConfigureContext())
    # Then the spec is there, and no connection was attempted (it would have failed)
    assert schema.column_names == COLUMNS
    assert schema["Read-only"].ktype == knext.bool_()


def test_configure_without_a_server_is_an_invalid_setting() -> None:
    with pytest.raises(knext.InvalidParametersError, match="No MCP server given"):
        node_host.configure_node(_provider(""), ConfigureContext())


def test_execute_lists_the_demo_servers_tools_as_a_table(demo_http_url: str) -> None:
    # Given a provider for the demo server with a prefix
    node = _provider(demo_http_url, selection__prefix="demo")
    ctx = ExecuteContext()
    # When it executes
    (table,) = node_host.execute_node(node, ctx)
    frame = table.to_pandas()
    # Then every tool is a row whose MCP Tool cell reconnects to the same server
    assert list(frame.columns) == COLUMNS
    assert "demo_echo" in set(frame["Name"])
    tools = tools_from_frame(frame)
    echo = next(tool for tool in tools if tool.name == "demo_echo")
    assert isinstance(echo, MCPTool) and echo.tool_name == "echo" and echo.server.target == demo_http_url
    assert ctx.progress and ctx.progress[-1][0] == 1.0
    # And the server a person chose carries this machine's seal, so agents downstream trust it
    assert is_sealed_here(echo.server)


def test_a_local_server_url_set_by_a_flow_variable_is_refused_naming_the_variable(demo_http_url: str) -> None:
    # Given a provider whose URL a flow variable set (KNIME applies it before the node sees its settings)
    ctx = ExecuteContext()
    ctx.flow_variables["mcp_url"] = demo_http_url
    # When it executes, Then the loopback address is refused with the variable named and the way out
    with pytest.raises(knext.InvalidParametersError) as refused:
        node_host.execute_node(_provider(demo_http_url), ctx)
    assert "points to 127.0.0.1, a loopback address" in str(refused.value)
    assert "flow variable 'mcp_url'" in str(refused.value)
    assert "Trust a server address from a flow variable" in str(refused.value)


def test_a_stdio_environment_set_by_a_flow_variable_keeps_the_command_from_running(
    demo_stdio_command: list[str],
) -> None:
    ctx = ExecuteContext()
    ctx.flow_variables["env"] = "NODE_OPTIONS=--require /tmp/x.js"
    node = _provider(shlex.join(demo_stdio_command), server__environment="NODE_OPTIONS=--require /tmp/x.js")
    with pytest.raises(knext.InvalidParametersError, match="command line taken from data was refused"):
        node_host.execute_node(node, ctx)


def test_a_trusted_flow_variable_address_is_listed_and_sealed(demo_http_url: str) -> None:
    ctx = ExecuteContext()
    ctx.flow_variables["mcp_url"] = demo_http_url
    node = _provider(demo_http_url, server__trust_flow_variable=True)
    (table,) = node_host.execute_node(node, ctx)
    assert all(is_sealed_here(tool.server) for tool in tools_from_frame(table.to_pandas()))


def test_a_flow_variable_with_another_value_does_not_make_the_address_data(demo_http_url: str) -> None:
    ctx = ExecuteContext()
    ctx.flow_variables.update({"other_url": demo_http_url + "/other", "count": 3})
    (table,) = node_host.execute_node(_provider(demo_http_url), ctx)
    assert len(table.to_pandas()) > 0


def test_simple_schema_mode_notes_left_out_tools_in_a_warning(demo_http_url: str) -> None:
    node = _provider(demo_http_url, selection__schema_mode="SIMPLE")
    ctx = ExecuteContext()
    (table,) = node_host.execute_node(node, ctx)
    names = set(table.to_pandas()["Name"])
    assert "create_order" not in names and "echo" in names
    assert ctx.warnings and "create_order" in ctx.warnings[-1]


def test_include_and_exclude_filter_the_tools(demo_http_url: str) -> None:
    node = _provider(demo_http_url, selection__include="^(echo|add|fail)$", selection__exclude="fail")
    (table,) = node_host.execute_node(node, ExecuteContext())
    assert sorted(table.to_pandas()["Name"]) == ["add", "echo"]


def test_bearer_auth_reads_the_credential_and_keeps_the_secret_out_of_the_table(
    auth_server_url: str, auth_token: str
) -> None:
    # Given a server that needs a bearer token, held by a credentials flow variable
    node = _provider(auth_server_url, auth__kind="BEARER", auth__credential="mcp-token")
    ctx = ExecuteContext(credentials={"mcp-token": ("", auth_token)})
    # When the node executes
    (table,) = node_host.execute_node(node, ctx)
    # Then the tools are listed, and the token appears nowhere in the output or the settings
    frame = table.to_pandas()
    assert len(frame) > 0
    assert auth_token not in frame.to_csv()
    from knime.extension.parameter import extract_parameters

    assert auth_token not in json.dumps(extract_parameters(node))


def test_a_credential_that_is_not_connected_is_an_invalid_setting(auth_server_url: str) -> None:
    node = _provider(auth_server_url, auth__kind="BEARER", auth__credential="absent")
    with pytest.raises(knext.InvalidParametersError, match="absent"):
        node_host.execute_node(node, ExecuteContext())


def test_an_unreachable_server_fails_the_node_with_a_clear_message() -> None:
    with pytest.raises(ServerConnectError, match=r"could not be resolved.*Hint:"):
        node_host.execute_node(_provider("http://nonexistent.invalid/mcp"), ExecuteContext())


def test_cancel_stops_waiting_for_a_server_that_never_answers(fake_hang_url: str) -> None:
    import time

    from knime_mcp.errors import CancelledByUser

    started = time.monotonic()
    node = _provider(fake_hang_url, timeouts__connect=60.0)
    with pytest.raises((CancelledByUser, node_host.NodeCanceled)):
        node_host.execute_node(node, ExecuteContext(cancel_when=lambda: time.monotonic() - started > 0.5))


def test_the_read_only_policy_leaves_out_tools_that_write_with_a_note(demo_http_url: str) -> None:
    node = _provider(demo_http_url, selection__destructive="READ_ONLY")
    ctx = ExecuteContext()
    (table,) = node_host.execute_node(node, ctx)
    frame = table.to_pandas()
    assert set(frame["Name"]).isdisjoint({"delete_record", "create_order"}) and "echo" in set(frame["Name"])
    assert bool(frame["Read-only"].all())
    assert "delete_record" in ctx.warnings[-1]


def test_a_tool_without_a_name_is_left_out_with_a_warning_naming_the_server_and_the_others_are_listed() -> None:
    # Given a server that lists a tool named "" (titled "Nameless") second of three
    command = shlex.join([sys.executable, str(SERVERS_DIR / "nameless_tool_server.py")])
    ctx = ExecuteContext()
    # When the provider lists its tools
    (table,) = node_host.execute_node(_provider(command), ctx)
    # Then the others are in the table, and the warning names the server and the tool left out
    assert list(table.to_pandas()["Name"]) == ["echo", "grow"]
    assert f"Tool 2 of 3 listed by server {command!r} (titled 'Nameless') was left out" in ctx.warnings[-1]


@pytest.mark.parametrize("unannotated_destructive", [False, True])
def test_blocking_destructive_tools_keeps_unannotated_tools_with_a_note_unless_they_count_as_destructive(
    paged_server_url: str, unannotated_destructive: bool
) -> None:
    # Given a server that annotates none of its 25 tools, and the provider set to leave out destructive tools
    node = _provider(
        paged_server_url, selection__destructive="BLOCK", selection__unannotated_destructive=unannotated_destructive
    )
    ctx = ExecuteContext()
    # When it lists them
    (table,) = node_host.execute_node(node, ctx)
    # Then it keeps them all and names them, or with the setting on leaves them all out and says why
    names = list(table.to_pandas()["Name"])
    if unannotated_destructive:
        assert names == [] and "tool 'tool_00' has no MCP annotations" in ctx.warnings[-1]
    else:
        assert len(names) == 25 and "Offered without MCP annotations" in ctx.warnings[-1]


def test_a_tool_that_runs_only_as_a_task_is_listed_like_any_other(everything_stdio_command: list[str]) -> None:
    node = _provider(shlex.join(everything_stdio_command))
    ctx = ExecuteContext()
    (table,) = node_host.execute_node(node, ctx)
    frame = table.to_pandas().set_index("Name")
    assert frame.loc["simulate-research-query", "Notes"] == ""
    assert not any("MCP task" in warning for warning in ctx.warnings)


def test_the_server_demo_lists_the_bundled_demo_server_started_over_stdio_with_this_python() -> None:
    import sys

    # Given a provider whose server is "demo", as its description tells a KNIME user to enter
    # When it executes
    (table,) = node_host.execute_node(_provider("demo"), ExecuteContext())
    # Then it lists the bundled demo server's tools, which reconnect over stdio with the same interpreter
    tools = tools_from_frame(table.to_pandas())
    assert {"echo", "render_chart", "fail"} <= {tool.name for tool in tools}
    server = tools[0].server
    assert (server.display_name, server.transport) == ("demo", "stdio") and is_sealed_here(server)
    assert shlex.split(server.target)[:3] == [sys.executable, "-m", "knime_mcp.demo_server"]


# -- OAuth ----------------------------------------------------------------------------------------------------------


def test_oauth_sign_in_opens_the_browser_says_where_and_lists_the_servers_tools(
    oauth_servers: OAuthServers, browser: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Given a provider for an MCP server that wants OAuth, and a person at a browser
    caplog.set_level(logging.WARNING)
    node = _provider(oauth_servers.http_url, auth__kind="OAUTH")
    ctx = ExecuteContext()
    # When it executes
    (table,) = node_host.execute_node(node, ctx)
    # Then the person signed in once, the progress message and the log at WARNING said where, and the tools are listed
    (visit,) = browser_visits(browser)
    authorization_server = urlsplit(oauth_servers.issuer).netloc
    assert f"Waiting for sign-in in the browser: {authorization_server}" in [message for _, message in ctx.progress]
    assert any(r.levelno == logging.WARNING and visit in r.getMessage() for r in caplog.records)
    echo, *others = tools_from_frame(table.to_pandas())
    assert [echo.tool_name, *(tool.tool_name for tool in others)] == MCP_TOOLS
    assert echo.server.auth.kind == "oauth" and is_sealed_here(echo.server)
    # And the tokens are kept for the user, outside the workflow's table
    stored = json.loads(token_store(oauth_servers.http_url, OAuthClient()).path.read_text())
    assert stored["tokens"]["access_token"] not in table.to_pandas().to_csv()


def test_sign_in_again_forgets_the_stored_sign_in_and_signs_in_anew(
    oauth_servers: OAuthServers, browser: Path
) -> None:
    # Given a person who signed in once through the provider
    node_host.execute_node(_provider(oauth_servers.http_url, auth__kind="OAUTH"), ExecuteContext())
    # When the provider runs again, first as it is, then with 'Sign in again'
    node_host.execute_node(_provider(oauth_servers.http_url, auth__kind="OAUTH"), ExecuteContext())
    assert len(browser_visits(browser)) == 1
    again = _provider(oauth_servers.http_url, auth__kind="OAUTH", auth__sign_in_again=True)
    (table,) = node_host.execute_node(again, ExecuteContext())
    # Then only the run with 'Sign in again' asked the person to sign in once more
    assert len(browser_visits(browser)) == 2 and list(table.to_pandas()["Name"]) == MCP_TOOLS


def test_without_browser_sign_in_a_provider_with_no_stored_sign_in_fails_at_once_saying_how_to_sign_in(
    oauth_servers: OAuthServers, browser: Path
) -> None:
    # Given a provider set to OAuth sign-in on a machine where nobody can sign in (a KNIME Hub executor)
    node = _provider(oauth_servers.http_url, auth__kind="OAUTH", auth__browser_sign_in=False)
    # When it executes with no stored sign-in, then it fails at once saying how to sign in, and opens no browser
    with pytest.raises(Exception, match="nobody can sign in here"):
        node_host.execute_node(node, ExecuteContext())
    assert not browser_visits(browser)


def test_oauth_client_credentials_from_a_knime_credential_need_no_person(
    oauth_servers: OAuthServers, browser: Path
) -> None:
    # Given a provider whose client id and secret are in a KNIME credential, with a scope
    settings = {"auth__kind": "OAUTH_CLIENT_CREDENTIALS", "auth__credential": "ci", "auth__scope": "mcp:read"}
    node = _provider(oauth_servers.http_url, **settings)
    ctx = ExecuteContext({"ci": (CLIENT_ID, CLIENT_SECRET)})
    # When it executes
    (table,) = node_host.execute_node(node, ctx)
    # Then it got a token without a browser, and the table holds the credential's name, never the secret
    frame = table.to_pandas()
    assert list(frame["Name"]) == MCP_TOOLS and not browser_visits(browser)
    echo = tools_from_frame(frame)[0]
    assert echo.server.auth.kind == "oauth-client-credentials" and echo.server.auth.scope == "mcp:read"
    assert CLIENT_SECRET not in frame.to_csv() and not ctx.warnings


def test_oauth_client_credentials_without_a_credential_are_an_invalid_setting() -> None:
    node = _provider("https://mcp.example.com/mcp", auth__kind="OAUTH_CLIENT_CREDENTIALS")
    with pytest.raises(knext.InvalidParametersError, match="OAuth client credentials need a credential"):
        node_host.configure_node(node, ConfigureContext())


def test_oauth_sign_in_needs_no_credential_but_an_http_server() -> None:
    # An OAuth sign-in configures without a credential (a public client that registers itself)
    node_host.configure_node(_provider("https://mcp.example.com/mcp", auth__kind="OAUTH"), ConfigureContext())
    # But a stdio server cannot use OAuth
    with pytest.raises(knext.InvalidParametersError, match="OAuth works with http"):
        node_host.configure_node(_provider("npx -y some-server", auth__kind="OAUTH"), ConfigureContext())


def test_cancel_stops_the_wait_for_a_sign_in_that_never_comes_back(
    oauth_servers: OAuthServers, browser: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a person who never comes back from the browser
    monkeypatch.setenv("KNIME_MCP_TEST_BROWSER", "away")
    monkeypatch.setattr(signin, "SIGN_IN_SECONDS", 60.0)  # a wait that ignored cancel fails the test, not hangs it
    ctx = ExecuteContext(cancel_when=lambda: any("Waiting for sign-in" in (text or "") for _, text in ctx.progress))
    # When the node is cancelled while it waits for the sign-in, Then it stops (not after the sign-in's time limit)
    with pytest.raises((CancelledByUser, node_host.NodeCanceled)):
        node_host.execute_node(_provider(oauth_servers.http_url, auth__kind="OAUTH"), ctx)


def test_provider_settings_saved_by_0_2_0_without_the_oauth_parameters_load_with_their_defaults() -> None:
    # Given provider settings saved by 0.2.0, before 'OAuth client id', 'OAuth scope' and 'Sign in again' existed
    saved = json.loads(node_host.save_settings(_provider("https://mcp.example.com/mcp", auth__kind="BEARER")))
    for name in ("client_id", "scope", "sign_in_again"):
        del saved["model"]["auth"][name]
    older = json.dumps(saved)
    # When KNIME checks and loads them, Then they pass and the new parameters have their defaults
    assert node_host.validate_settings("MCPToolProvider", older, "0.2.0") is None
    loaded = node_host.load_settings("MCPToolProvider", older, "0.2.0")
    assert (loaded.auth.kind, loaded.auth.client_id, loaded.auth.scope, loaded.auth.sign_in_again) == (
        "BEARER", "", "", False
    )


def test_a_knime_without_the_unified_tool_type_gets_no_knime_tool_column_and_no_warning(demo_http_url: str) -> None:
    # Given KNIME as released (5.5.3, master, the stand-in): knime.types.tool has no Tool
    node = _provider(demo_http_url, selection__prefix="", selection__include="^echo$")
    ctx = ExecuteContext()
    # When the provider is configured and executed
    (spec,) = node_host.configure_node(node, ConfigureContext())
    (table,) = node_host.execute_node(node, ctx)
    # Then the columns are the MCP Tool Provider's alone, and nothing is said about KNIME Tool values
    assert spec.column_names == table.schema.column_names == COLUMNS
    assert not ctx.warnings


@pytest.mark.knime_launcher
def test_with_knimes_tool_type_the_provider_adds_knime_tool_values_of_its_url_servers_tools(
    knime_tool_branch: Any, demo_http_url: str
) -> None:
    from real_knime.tool_overlay import tool_cells

    # Given a KNIME with the unified Tool type and a provider for an http server, with a name prefix
    node = _provider(demo_http_url, selection__prefix="demo", selection__include="^(echo|add)$")
    ctx = ExecuteContext()
    # When it is configured and executed
    (spec,) = node_host.configure_node(node, ConfigureContext())
    (table,) = node_host.execute_node(node, ctx)
    # Then a KNIME Tool column of KNIME's type follows the MCP Tool Provider's columns, at configure as at execute
    assert spec.column_names == [*COLUMNS, "KNIME Tool"]
    assert spec["KNIME Tool"].ktype == knext.logical(knime_tool_branch.Tool)
    assert table.schema.column_names == spec.column_names
    assert table.schema["KNIME Tool"].ktype == spec["KNIME Tool"].ktype
    # And each cell, read back through KNIME's Arrow backend, is an MCP Tool of KNIME's own naming the server's tool
    names = table.to_pyarrow().column("Name").to_pylist()
    schemas = table.to_pyarrow().column("Input Schema").to_pylist()
    cells = tool_cells(table)
    assert [cell.tool_type for cell in cells] == [knime_tool_branch.ToolType.MCP] * 2
    assert [cell.name for cell in cells] == [name.removeprefix("demo_") for name in names] == ["echo", "add"]
    assert {cell.server_uri for cell in cells} == {demo_http_url}
    assert [cell.parameter_schema for cell in cells] == [json.loads(text) for text in schemas]
    assert all(cell.description and cell.credential_name is None for cell in cells)
    assert not ctx.warnings


@pytest.mark.knime_launcher
def test_with_knimes_tool_type_a_bearer_credential_travels_by_name_never_the_token(
    knime_tool_branch: Any, auth_server_url: str, auth_token: str
) -> None:
    from real_knime.tool_overlay import tool_cells

    node = _provider(auth_server_url, auth__kind="BEARER", auth__credential="mcp-token", selection__prefix="")
    (table,) = node_host.execute_node(node, ExecuteContext(credentials={"mcp-token": ("", auth_token)}))
    cells = tool_cells(table)
    assert cells and {cell.credential_name for cell in cells} == {"mcp-token"}
    assert auth_token not in str(table.to_pyarrow().to_pylist())


@pytest.mark.knime_launcher
def test_with_knimes_tool_type_a_stdio_servers_tools_get_missing_cells_named_in_the_warning(
    knime_tool_branch: Any,
) -> None:
    from real_knime.tool_overlay import tool_cells

    # Given the bundled demo server, which starts over stdio: KNIME's Tool type names a server by its URL only
    node = _provider("demo", selection__prefix="", selection__include="^(echo|add)$")
    ctx = ExecuteContext()
    (table,) = node_host.execute_node(node, ctx)
    # Then the tools are listed, with missing KNIME Tool cells, and the warning names them with the reason
    assert table.to_pyarrow().column("Name").to_pylist() == ["echo", "add"]
    assert tool_cells(table) == [None, None]
    assert ctx.warnings and "2 tools have no KNIME Tool value" in ctx.warnings[-1]
    assert "'echo' (a stdio server)" in ctx.warnings[-1] and "'add' (a stdio server)" in ctx.warnings[-1]


@pytest.mark.knime_launcher
def test_a_tool_type_knimes_python_cannot_express_counts_as_no_tool_type(demo_http_url: str) -> None:
    from real_knime.tool_overlay import branch_tool_type

    # Given the branch's Tool registered with knime-core's byte discriminator, which knime-python's schema lacks
    with branch_tool_type(discriminator="byte"):
        node = _provider(demo_http_url, selection__prefix="", selection__include="^echo$")
        ctx = ExecuteContext()
        # When the provider runs, Then it gives the released columns, without an error
        (spec,) = node_host.configure_node(node, ConfigureContext())
        (table,) = node_host.execute_node(node, ctx)
    assert spec.column_names == table.schema.column_names == COLUMNS
    assert not ctx.warnings


def _pasted(servers: dict[str, object], **more: object) -> str:
    return json.dumps({"servers": servers, **more})


def test_a_pasted_configuration_lists_every_server_into_one_table_prefixed_by_its_key(
    demo_stdio_command: list[str], demo_http_url: str
) -> None:
    # Given a pasted VS Code configuration of the demo server over stdio and over HTTP, and no server setting
    command, *args = demo_stdio_command
    pasted = _pasted({"local": {"command": command, "args": args}, "remote": {"type": "http", "url": demo_http_url}})
    node = _provider("", pasted_config=pasted, selection__include="^(add|echo)$", selection__prefix="demo")
    # When the node is configured and executed
    node_host.configure_node(node, ConfigureContext())
    (table,) = node_host.execute_node(node, ExecuteContext())
    # Then both servers' tools are in the one table, each name prefixed by its server's key, reaching that server
    tools = {tool.name: tool for tool in tools_from_frame(table.to_pandas())}
    assert sorted(tools) == ["local_demo_add", "local_demo_echo", "remote_demo_add", "remote_demo_echo"]
    assert tools["remote_demo_echo"].server.target == demo_http_url
    assert tools["local_demo_add"].server.transport == "stdio" and is_sealed_here(tools["local_demo_add"].server)


def test_a_pasted_configurations_input_credential_comes_from_the_credentials_flow_variable(
    auth_server_url: str, auth_token: str
) -> None:
    # Given a pasted server whose bearer token is the VS Code input 'mcp-token', a KNIME credential of that name
    header = {"Authorization": "Bearer ${input:mcp-token}"}
    inputs = [{"id": "mcp-token", "type": "promptString", "password": True}]
    pasted = _pasted({"secure": {"type": "http", "url": auth_server_url, "headers": header}}, inputs=inputs)
    node = _provider("http://nonexistent.invalid/mcp", pasted_config=pasted)
    # When the node executes with that credential
    (table,) = node_host.execute_node(node, ExecuteContext(credentials={"mcp-token": ("", auth_token)}))
    # Then the server's tools are listed under its key, and the token is nowhere in the table
    frame = table.to_pandas()
    assert len(frame) > 0 and all(name.startswith("secure_") for name in frame["Name"])
    assert auth_token not in frame.to_csv()


@pytest.mark.parametrize(
    ("pasted", "said"),
    [
        ("{", "not JSON"),
        (_pasted({"s": {"url": "http://x/mcp", "headers": {"Authorization": "Bearer abcdef1234567890abcdef"}}}),
         "literal secret"),
    ],
)  # fmt: skip
def test_configure_refuses_a_malformed_or_secret_holding_pasted_configuration(pasted: str, said: str) -> None:
    with pytest.raises(knext.InvalidParametersError, match=said) as raised:
        node_host.configure_node(_provider("demo", pasted_config=pasted), ConfigureContext())
    assert "abcdef1234567890abcdef" not in str(raised.value)


def test_a_pasted_configuration_set_by_a_flow_variable_is_data_and_its_stdio_server_does_not_start(
    demo_stdio_command: list[str],
) -> None:
    # Given a pasted stdio configuration that a flow variable set
    command, *args = demo_stdio_command
    pasted = _pasted({"local": {"command": command, "args": args}})
    ctx = ExecuteContext()
    ctx.flow_variables["mcp_config"] = pasted
    # When the node executes, Then it refuses, naming the flow variable
    with pytest.raises(knext.InvalidParametersError, match="mcp_config"):
        node_host.execute_node(_provider("", pasted_config=pasted), ctx)
