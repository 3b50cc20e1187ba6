"""Secret values: resolved secrets checked before they reach HTTP or a process, literal secrets refused wherever a
server description is made, and the values of secret-looking arguments kept out of every place arguments are shown.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterator

import knime.extension as knext
import pyarrow as pa
import pytest
from langchain_core.messages import AIMessage

import node_host
from fixtures.python_servers import SERVERS_DIR
from knime_mcp.agent.loop import AgentConfig, run_agent
from knime_mcp.caller.convert import ConversionError, to_json
from knime_mcp.caller.table import CallerOptions, call_table_sync
from knime_mcp.calls.dispatch import Dispatcher
from knime_mcp.calls.pool import ClientPool
from knime_mcp.cli.main import main
from knime_mcp.cli.render import render_agent_run
from knime_mcp.config import AuthRef, ServerSpec, resolve_headers
from knime_mcp.errors import ConfigError
from knime_mcp.mcp.client import McpClient
from knime_mcp.mcp.sync import SyncMcpClient, run_sync
from knime_mcp.redaction import redact, redact_text
from knime_mcp.tools.tool import MCPTool
from node_contexts import ConfigureContext
from scripted_model import calls, scripted
from tool_factory import make_tool

SECRET_VAR = "KNIME_MCP_TEST_SECRET"
PASSWORD = "hunter2-canary"
"""Long enough for the sign-in tool's 12-character minimum."""

SHORT_PASSWORD = "pw-canary"
"""Nine characters: the sign-in tool refuses it as too short, and the error must not quote it."""

SIGN_IN_SERVER = [sys.executable, str(SERVERS_DIR / "sign_in_server.py")]


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def sign_in() -> Iterator[MCPTool]:
    """tests/servers/sign_in_server.py's ``sign_in`` (user, password of at least 12 characters, auth_code)."""
    with SyncMcpClient(ServerSpec(target=shlex.join(SIGN_IN_SERVER))) as client:
        (tool,) = client.list_tools()
    yield tool


# Resolved secrets that HTTP or a process cannot carry


@pytest.mark.anyio
async def test_a_bearer_token_ending_in_a_line_break_is_a_config_error_that_names_the_variable_not_the_value(
    auth_server_url: str, auth_token: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a bearer token read from a file that kept its final CR
    monkeypatch.setenv(SECRET_VAR, auth_token + "\r")
    spec = ServerSpec(target=auth_server_url, auth=AuthRef(kind="bearer", secret="${" + SECRET_VAR + "}"))

    # When knime-mcp connects with it
    with pytest.raises(ConfigError) as caught:
        async with McpClient(spec) as client:
            await client.list_tools()

    # Then the error names the variable and what is wrong, and never the token
    message = str(caught.value)
    assert f"Environment variable {SECRET_VAR} ends in a carriage return (CR)" in message
    assert auth_token not in message and "Illegal header value" not in message


@pytest.mark.anyio
async def test_a_credential_password_ending_in_a_line_feed_is_a_config_error_that_names_the_credential(
    auth_server_url: str, auth_token: str
) -> None:
    # Given a KNIME credential whose password was pasted with its final LF
    spec = ServerSpec(target=auth_server_url, auth=AuthRef(kind="bearer", credential="api-token"))

    def lookup(name: str) -> tuple[str, str]:
        return "knime", auth_token + "\n"

    # When knime-mcp connects with it
    with pytest.raises(ConfigError) as caught:
        async with McpClient(spec, credentials=lookup) as client:
            await client.list_tools()

    # Then the error names the credential and what is wrong, and never the password
    assert "The password of credential 'api-token' ends in a line feed (LF)" in str(caught.value)
    assert auth_token not in str(caught.value)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("tok\r\nen-canary", "holds a carriage return (CR)"),
        ("token-canary\n", "ends in a line feed (LF)"),
        ("tok\x7fen-canary", "holds a control character"),
        ("tökén-canary", "holds a non-ASCII character"),
        ("token-canary ", "starts or ends with white space"),
    ],
)
def test_a_header_variable_holding_what_http_forbids_is_refused_by_name(
    monkeypatch: pytest.MonkeyPatch, value: str, problem: str
) -> None:
    # Given an extra header referencing a variable whose value HTTP cannot carry
    monkeypatch.setenv(SECRET_VAR, value)
    spec = ServerSpec(target="http://127.0.0.1:1/mcp", headers={"X-Api-Key": "${" + SECRET_VAR + "}"})

    # When the headers are resolved for a connection
    with pytest.raises(ConfigError) as caught:
        resolve_headers(spec)

    # Then the variable and the problem are named, the value is not
    assert f"Environment variable {SECRET_VAR} {problem}" in str(caught.value)
    assert "canary" not in str(caught.value)


def test_a_header_whose_resolved_value_ends_in_white_space_is_refused_by_the_header_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a header whose variable is empty, leaving the scheme word and a trailing space
    monkeypatch.setenv(SECRET_VAR, "")
    spec = ServerSpec(target="http://127.0.0.1:1/mcp", headers={"Authorization": "Bearer ${" + SECRET_VAR + "}"})

    # When the headers are resolved, then the header is named
    with pytest.raises(ConfigError, match="The value of header 'Authorization' starts or ends with white space"):
        resolve_headers(spec)


def test_an_environment_entry_holding_a_nul_is_a_config_error_naming_the_entry() -> None:
    # Given a stdio server whose environment setting holds a NUL (only settings can: an OS environment cannot)
    spec = ServerSpec(target=shlex.join(SIGN_IN_SERVER), env={"MODE": "fast\0canary"})

    # When knime-mcp starts it
    with pytest.raises(ConfigError) as caught, SyncMcpClient(spec) as client:
        client.list_tools()

    # Then the entry and the problem are named, the value is not
    assert "The environment entry 'MODE' holds a NUL character" in str(caught.value)
    assert "canary" not in str(caught.value)


def test_a_clean_secret_still_connects(auth_server_url: str, auth_token: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a bearer token without stray characters
    monkeypatch.setenv(SECRET_VAR, auth_token)
    spec = ServerSpec(target=auth_server_url, auth=AuthRef(kind="bearer", secret="${" + SECRET_VAR + "}"))

    # When knime-mcp connects, then the server accepts it
    with SyncMcpClient(spec) as client:
        assert client.list_tools()


# Literal secrets, refused wherever a server description is made


@pytest.mark.parametrize(
    "headers",
    [
        {"X-Access-Key": "AKxyz-canary"},
        {"X-Goog-Api-Key": "AIza-canary"},
        {"Private-Token": "glpat-canary"},
        {"X-Custom": "Bearer abc-canary"},
        {"X-Forwarded-Auth": "Basic YWxhZGRpbjpvcGVuc2VzYW1l-canary"},
        {"X-Anything": "ghp_0123456789abcdefghijABCDEFcanary"},
    ],
)
def test_a_literal_secret_in_a_header_is_refused_by_name_or_by_value(headers: dict[str, str]) -> None:
    # Given a header holding a secret written out, named as a credential or plainly one by its value
    (name,) = headers

    # When a server description is made with it
    with pytest.raises(ConfigError) as caught:
        ServerSpec(target="https://example.com/mcp", headers=headers)

    # Then it is refused naming the header, with a hint to reference the secret; the value is not shown
    assert f"The header {name!r} holds a literal secret" in str(caught.value)
    assert "${VARIABLE}" in str(caught.value) and "credential" in str(caught.value)
    assert "canary" not in str(caught.value)


@pytest.mark.parametrize("name", ["API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "PGPASSWORD", "OPENAI_API_KEY"])
def test_a_literal_secret_in_a_stdio_environment_is_refused_by_the_variable_name(name: str) -> None:
    # Given a stdio environment entry whose name marks a credential and whose value is written out
    # When a server description is made with it
    with pytest.raises(ConfigError) as caught:
        ServerSpec(target="npx -y some-server", env={name: "literal-canary"})

    # Then it is refused naming the entry, with a hint to reference the secret
    assert f"The environment variable {name!r} holds a literal secret" in str(caught.value)
    assert "${VARIABLE}" in str(caught.value) and "canary" not in str(caught.value)


def test_references_and_ordinary_values_are_accepted() -> None:
    # Given ordinary headers and environment, and secrets referenced as ${VAR}
    headers = {"Accept": "application/json", "X-Team": "data", "Authorization": "Bearer ${T}", "X-Access-Key": "${K}"}
    env = {"NODE_ENV": "production", "MEMORY_FILE_PATH": "/tmp/graph.jsonl", "GITHUB_TOKEN": "${T}", "API_KEY": ""}

    # When server descriptions are made with them, then nothing is refused
    assert ServerSpec(target="https://example.com/mcp", headers=headers).headers == headers
    assert ServerSpec(target="npx -y some-server", env=env).env == env


def test_a_tools_table_cell_holding_a_literal_secret_is_refused_when_read() -> None:
    # Given a tools-table cell, written by hand or by an older version, whose server holds a literal token
    cell = json.loads(make_tool("echo").to_json())
    cell["server"]["env"] = {"GITHUB_TOKEN": "ghp-canary"}

    # When the cell is read, then it is refused like a setting
    with pytest.raises(ConfigError, match="'GITHUB_TOKEN' holds a literal secret") as caught:
        MCPTool.from_json(json.dumps(cell))
    assert "canary" not in str(caught.value)


@pytest.mark.knime_node
@pytest.mark.parametrize(
    ("setting", "text"),
    [("headers", "X-Access-Key: key-canary"), ("environment", "GITHUB_TOKEN=ghp-canary")],
)
def test_the_provider_refuses_a_literal_secret_in_its_settings(setting: str, text: str) -> None:
    import extension

    # Given a Tool Provider whose header or environment setting holds a literal secret
    node = extension.MCPToolProvider()
    node.server.server = "http://127.0.0.1:1/mcp" if setting == "headers" else shlex.join(SIGN_IN_SERVER)
    setattr(node.server, setting, text)

    # When it is configured, then the setting is refused without connecting and without the value
    with pytest.raises(knext.InvalidParametersError, match="holds a literal secret") as caught:
        node_host.configure_node(node, ConfigureContext())
    assert "canary" not in str(caught.value)


@pytest.mark.parametrize(
    ("option", "value", "named"),
    [
        ("--env", "GITHUB_TOKEN=ghp-canary", "Environment entry 'GITHUB_TOKEN'"),
        ("--header", "X-Access-Key: key-canary", "Header 'X-Access-Key'"),
        ("--header", "X-Custom: Bearer tok-canary", "Header 'X-Custom'"),
    ],
)
def test_the_cli_refuses_a_literal_secret_as_a_usage_error_before_starting_the_server(
    capsys: pytest.CaptureFixture[str], option: str, value: str, named: str
) -> None:
    # Given a literal secret on the command line
    # When the CLI is run with it
    code, _, err = _cli(capsys, "tools", option, value, "--", *SIGN_IN_SERVER)

    # Then it is a usage error naming the entry and showing how to reference it, without the value
    assert code == 2 and f"Error: {named} holds a literal secret" in err
    assert "${VAR}" in err and "canary" not in err


@pytest.mark.parametrize(
    ("option", "value", "what"),
    [("--header", "Bearer tok-canary", "Header"), ("--env", "tok-canary", "Environment entry")],
)
def test_the_cli_names_a_malformed_header_or_environment_entry_by_position_without_quoting_it(
    capsys: pytest.CaptureFixture[str], option: str, value: str, what: str
) -> None:
    # Given a header or environment entry that lost its name, leaving only the secret
    # When the CLI is run with it after a well-formed one
    code, _, err = _cli(capsys, "tools", option, "X=1" if option == "--env" else "X: 1", option, value, "--", "true")

    # Then it is a usage error naming its position, and the secret is not shown
    assert code == 2 and f"Error: {what} 2 is not of the form" in err and "canary" not in err


def test_the_cli_passes_ordinary_environment_values(capsys: pytest.CaptureFixture[str]) -> None:
    # Given an ordinary environment entry for a stdio server
    # When the CLI lists the server's tools, then it runs
    code, out, _ = _cli(capsys, "tools", "--env", "NODE_ENV=production", "--", *SIGN_IN_SERVER)
    assert code == 0 and "sign_in" in out


# Arguments shown anywhere keep secret-looking values hidden


def test_redact_masks_secret_keys_at_any_depth_and_secret_pairs_in_text() -> None:
    # Given arguments with secrets at the top and nested, and the raw text of a model's malformed JSON
    arguments = {"user": "ann", "password": PASSWORD, "options": {"api_key": 12345, "retries": 3}}
    raw = '{"user": "ann", "auth_token": "tok-canary", "n": 2'

    # When they are redacted
    # Then the secret values are masked and everything else is kept
    assert redact(arguments) == {"user": "ann", "password": "***", "options": {"api_key": "***", "retries": 3}}
    assert redact(raw) == '{"user": "ann", "auth_token": ***, "n": 2'
    # And text quoting the values, as a schema error does, masks them wherever and however they appear
    text = f"options.api_key: 12345 is not a string; {arguments!r} is not valid; got {json.dumps(PASSWORD)}"
    assert redact_text(text, arguments) == (
        "options.api_key: *** is not a string; "
        "{'user': 'ann', 'password': ***, 'options': {'api_key': ***, 'retries': 3}} is not valid; got ***"
    )


@pytest.mark.anyio
async def test_an_invalid_secret_argument_is_not_quoted_in_the_dispatchers_error(sign_in: MCPTool) -> None:
    # Given a password too short for the tool's schema
    arguments = {"user": "ann", "password": SHORT_PASSWORD}

    # When the dispatcher is asked to call the tool with it
    async with ClientPool() as pool:
        outcome = await Dispatcher(pool).call(sign_in, arguments)

    # Then the call is refused saying what is wrong, and neither the error nor the log quote the password
    assert outcome.record.status == "invalid_arguments"
    assert "password: *** is too short" in str(outcome.error)
    assert SHORT_PASSWORD not in str(outcome.error) + str(outcome.record.error) + outcome.record.arguments_json


def test_the_tool_callers_error_column_hides_secret_arguments(sign_in: MCPTool) -> None:
    # Given rows with a password too short and a one-time code that is not a number
    rows = pa.record_batch(
        {"user": ["ann", "bob"], "password": [SHORT_PASSWORD, PASSWORD], "auth_code": ["1", "x9-canary"]}
    )

    # When the Tool Caller runs them, recording errors in a column
    written: list[pa.RecordBatch] = []
    call_table_sync(sign_in, [rows], written.append, options=CallerOptions(on_error="column"))
    errors = pa.Table.from_batches(written).column("Error").to_pylist()

    # Then each row says what is wrong without quoting the secret values
    assert "password: *** is too short" in errors[0]
    assert "parameter 'auth_code' from column 'auth_code': its value does not fit (not shown" in errors[1]
    assert SHORT_PASSWORD not in errors[0] and "canary" not in errors[1]


@pytest.mark.parametrize(("field", "shown"), [("pin_token", False), ("count", True)])
def test_a_cell_field_that_does_not_convert_is_quoted_only_when_its_name_is_not_secret(field: str, shown: bool) -> None:
    # Given an object cell whose field cannot become the integer the schema asks for
    schema = {"type": "object", "properties": {field: {"type": "integer"}}}

    # When it is converted for a call
    with pytest.raises(ConversionError) as caught:
        to_json({field: "x9-canary"}, schema)

    # Then the value is quoted for an ordinary field and hidden for a secret-looking one
    assert ("canary" in str(caught.value)) is shown
    assert shown or str(caught.value) == f"field {field!r}: its value does not fit (not shown, as it may be a secret)"


def test_the_cli_error_for_an_invalid_secret_argument_does_not_quote_it(capsys: pytest.CaptureFixture[str]) -> None:
    # Given a password too short for the tool's schema on the command line
    arguments = json.dumps({"user": "ann", "password": SHORT_PASSWORD})

    # When the CLI calls the tool
    code, out, err = _cli(capsys, "call", "--", *SIGN_IN_SERVER, "--", "sign_in", "--args", arguments)

    # Then it exits as a tool error saying what is wrong, without the password
    assert code == 4 and "password: *** is too short" in err
    assert SHORT_PASSWORD not in out + err


def test_the_agents_log_and_printed_run_hide_secret_arguments(sign_in: MCPTool) -> None:
    # Given a model that sends a password too short, then malformed JSON quoting a token
    malformed = AIMessage(
        "",
        invalid_tool_calls=[
            {"id": "c2", "name": "sign_in", "args": '{"user": "ann", "auth_token": "tok-canary"', "error": None}
        ],
    )
    model = scripted(calls(("c1", "sign_in", {"user": "ann", "password": SHORT_PASSWORD})), malformed, AIMessage("No."))

    # When the agent runs, and its run is printed as the CLI prints it
    run = run_sync(run_agent, model, [sign_in], "Sign in.", config=AgentConfig(trust_all_servers=True))
    log = json.dumps([entry.to_dict() for entry in run.log])
    printed = render_agent_run(run)

    # Then the calls are logged as refused, and no log field and no printed line shows a secret
    assert [entry.status for entry in run.log] == ["invalid_arguments", "invalid_arguments"]
    assert "password: *** is too short" in log and '\\"auth_token\\": ***' in log
    assert '"password": "***"' in printed
    assert SHORT_PASSWORD not in log + printed and "tok-canary" not in log + printed
