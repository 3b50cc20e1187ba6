"""Canaries for secrets in outputs: a token in a server URL's query string, and secret-looking tool-call arguments,
pushed through the provider, the Tool Caller, the agent and the CLI, and looked for in every table, log record and
error they produce (the SDK's and httpx's own DEBUG and INFO logging included).

A literal token in a server URL is refused like a password in the URL; a ``${VAR}`` reference there is resolved only
when connecting, and what still carries a resolved value (the libraries' logs, errors) is masked.
"""

from __future__ import annotations

import json
import logging
import shlex
import sys
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest
from langchain_core.messages import AIMessage

from fixtures.python_servers import SERVERS_DIR, _auth_server, running_server
from knime_mcp.agent.loop import AgentConfig, run_agent
from knime_mcp.caller.table import CallerOptions, call_table_sync
from knime_mcp.calls.listing import list_server_tools
from knime_mcp.cli.main import main
from knime_mcp.config import ServerSpec
from knime_mcp.conversation import TOOL_CALLS, messages_from_rows
from knime_mcp.errors import ConfigError, McpToolError
from knime_mcp.mcp.sync import SyncMcpClient, run_sync
from knime_mcp.redaction import redact_text
from knime_mcp.tools.tool import MCPTool
from scripted_model import calls, scripted
from tool_factory import make_tool

URL_VAR = "KNIME_MCP_TEST_URL_TOKEN"
PASSWORD = "hunter2-canary-0c4e"
"""A sign-in password long enough for the sign-in tool (12 characters at least)."""


@pytest.fixture(scope="module")
def query_token_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """Demo tools over Streamable HTTP answering 401 unless the URL carries ``?token=<token>``: (URL, token)."""
    token = "urlq-canary-5d81e7"
    with _auth_server(tmp_path_factory, "query", token) as server:
        yield server.url, token


@pytest.fixture(scope="module")
def sign_in_http_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """tests/servers/sign_in_server.py over Streamable HTTP, whose SDK client logs each message it sends."""
    command = [sys.executable, str(SERVERS_DIR / "sign_in_server.py"), "--transport", "streamable-http"]
    with running_server(command, tmp_path_factory.mktemp("sign-in") / "server.log") as server:
        yield server.url


def _everything(*parts: Any) -> str:
    return "\n".join(part if isinstance(part, str) else json.dumps(part, default=str) for part in parts)


# W1: a token in a server URL's query string


@pytest.mark.parametrize(
    ("query", "parameter"),
    [
        ("token=urlq-canary", "token"),
        ("api_key=urlq-canary", "api_key"),
        ("x=1&access_token=urlq-canary", "access_token"),
        ("sig=urlq-canary", "sig"),
        ("team=ghp_0123456789abcdefghijABCDEFcanary", "team"),
        ("key=AIzaSyCanary0123456789abcdefghijklmnopq", "key"),  # a Google API key, under a name used for much else
    ],
)
def test_a_literal_secret_in_a_server_urls_query_is_refused_naming_the_parameter(query: str, parameter: str) -> None:
    # Given a server URL holding a secret written out in its query string
    # When a server description is made with it
    with pytest.raises(ConfigError) as caught:
        ServerSpec(target=f"https://mcp.example/mcp?{query}")

    # Then it is refused naming the parameter, with a hint to reference the secret; the value is not shown
    message = str(caught.value)
    assert f"The query parameter {parameter!r} of the server URL holds a literal secret" in message
    assert "${VARIABLE}" in message and "canary" not in message


def test_references_and_ordinary_query_values_are_accepted() -> None:
    # Given a URL with an ordinary parameter and a token referenced as ${VAR}
    target = "https://mcp.example/mcp?team=data&token=${" + URL_VAR + "}&api_key="
    # When a server description is made with it, then nothing is refused and the reference is kept as written
    assert ServerSpec(target=target).target == target


def test_a_tools_table_cell_with_a_literal_token_in_its_url_is_refused_when_read() -> None:
    # Given a tools-table cell, written by hand or by an older version, whose server URL carries a literal token
    cell = json.loads(make_tool("echo").to_json())
    cell["server"] = {"target": "https://mcp.example/mcp?api_key=urlq-canary"}

    # When the cell is read, then it is refused like a setting, without the value
    with pytest.raises(ConfigError, match="'api_key' of the server URL holds a literal secret") as caught:
        MCPTool.from_json(json.dumps(cell))
    assert "canary" not in str(caught.value)


def test_the_cli_refuses_a_literal_token_in_a_server_url_without_quoting_it(capsys: pytest.CaptureFixture[str]) -> None:
    # Given a server URL with a literal token on the command line
    # When the CLI lists its tools
    code = main(["tools", "http://127.0.0.1:1/mcp?token=urlq-canary"])
    captured = capsys.readouterr()

    # Then it is refused before connecting, naming the parameter and how to reference it, without the value
    assert code != 0 and "'token' of the server URL holds a literal secret" in captured.err
    assert "canary" not in captured.out + captured.err


def test_a_token_referenced_in_a_url_query_connects_and_reaches_no_table_log_or_error(
    query_token_server: tuple[str, str], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Given a server that wants a token in its URL, given as a reference to an environment variable
    url, token = query_token_server
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv(URL_VAR, token)
    spec = ServerSpec(target=f"{url}?token=${{{URL_VAR}}}")

    # When the provider lists its tools, the Tool Caller calls one and an agent calls it
    echo = next(tool for tool in run_sync(list_server_tools, spec).tools if tool.name == "echo")
    written: list[pa.RecordBatch] = []
    call_table_sync(echo, [pa.table({"text": ["hi"]})], written.append, options=CallerOptions(on_error="column"))
    rows = pa.Table.from_batches(written).to_pylist()
    model = scripted(calls(("c1", "echo", {"text": "hello"})), AIMessage("Done."))
    run = run_sync(run_agent, model, [echo], "Echo.", config=AgentConfig(trust_all_servers=True))
    # And when the variable holds a wrong token, so that the server refuses it
    monkeypatch.setenv(URL_VAR, token + "-wrong")
    with pytest.raises(McpToolError) as refused:
        run_sync(list_server_tools, spec)

    # Then the session connected with the real token: the calls succeeded
    assert rows[0]["Result"] == "hi" and not rows[0]["Is error"]
    assert [entry.status for entry in run.log] == ["ok"]
    # And the tools table keeps the reference, never the value
    assert f"token=${{{URL_VAR}}}" in echo.to_json()
    # And the token is in no table, no log record (the SDK's and httpx's included) and no error
    assert "HTTP Request: POST" in caplog.text and "Connecting to StreamableHTTP endpoint" in caplog.text
    outputs = _everything(
        echo.to_json(), rows, run.conversation.rows(error_column=True), [entry.to_dict() for entry in run.log],
        str(refused.value), repr(refused.value.args), caplog.text,
    )  # fmt: skip
    assert token not in outputs


def test_a_server_from_data_with_a_reference_in_its_url_query_is_refused_before_the_secret_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a tools table someone wrote, naming a public server whose URL asks for a variable of this machine
    monkeypatch.setenv(URL_VAR, "urlq-canary")
    cell = json.loads(make_tool("echo").to_json())
    cell["server"] = {"target": "https://mcp.example/mcp?token=${" + URL_VAR + "}"}
    tool = MCPTool.from_json(json.dumps(cell))

    # When the Tool Caller runs it
    with pytest.raises(ConfigError) as caught:
        call_table_sync(tool, [pa.table({"text": ["hi"]})], lambda batch: None)

    # Then it is refused, naming what it asked for
    assert f"the environment variable {URL_VAR} in its query parameter 'token'" in caught.value.message
    assert "canary" not in str(caught.value)


def test_redact_text_masks_secret_looking_query_values_in_urls() -> None:
    # Given a message quoting a URL with a token, a signature and an ordinary parameter
    text = 'GET https://api.example/v1?team=data&access_token=abc123&X-Amz-Signature=f00d "200 OK"'
    # When it is redacted, then the secret values are masked and the rest is kept
    assert redact_text(text) == 'GET https://api.example/v1?team=data&access_token=***&X-Amz-Signature=*** "200 OK"'
    # And a value that is plainly a credential is masked under any name, a Google API key under `key`
    google = "GET https://maps.example/api?key=AIzaSyCanary0123456789abcdefghijklmnopq&key=row-7"
    assert redact_text(google) == "GET https://maps.example/api?key=***&key=row-7"


# W2: secret-looking arguments in the SDK's DEBUG log and in the conversation's tool-call column


def test_secret_arguments_never_reach_the_sdks_debug_log(
    sign_in_http_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    # Given logging at DEBUG everywhere, as someone chasing a protocol problem sets it
    caplog.set_level(logging.DEBUG)

    # When a tool is called with a secret-looking argument over Streamable HTTP
    with SyncMcpClient(ServerSpec(target=sign_in_http_url)) as client:
        result = client.call_tool("sign_in", {"user": "ann", "password": PASSWORD})

    # Then the call went through and the SDK logged the message it sent, with the password masked
    assert not result.is_error
    sent = [record.getMessage() for record in caplog.records if "Sending client message" in record.getMessage()]
    assert any("sign_in" in message and "***" in message for message in sent)
    assert PASSWORD not in caplog.text


def test_the_conversations_tool_call_column_masks_secret_arguments_and_still_continues() -> None:
    # Given the sign-in tool over stdio, and a model that calls it with a password
    command = shlex.join([sys.executable, str(SERVERS_DIR / "sign_in_server.py")])
    with SyncMcpClient(ServerSpec(target=command)) as client:
        (sign_in,) = client.list_tools()
    model = scripted(calls(("c1", "sign_in", {"user": "ann", "password": PASSWORD})), AIMessage("Signed in."))

    # When the agent runs, and its conversation table is given to a second run as history
    run = run_sync(run_agent, model, [sign_in], "Sign in.", config=AgentConfig(trust_all_servers=True))
    rows = run.conversation.rows()
    history = messages_from_rows(rows)
    follow_up = run_sync(
        run_agent, scripted(AIMessage("Still signed in.")), [sign_in], "Still?", history=history,
        config=AgentConfig(trust_all_servers=True),
    )  # fmt: skip

    # Then the call ran with the password, and the tool-call column keeps the call with the password masked
    assert [entry.status for entry in run.log] == ["ok"]
    (tool_calls,) = [json.loads(row[TOOL_CALLS]) for row in rows if row[TOOL_CALLS]]
    assert tool_calls == [{"id": "c1", "name": "sign_in", "arguments": {"user": "ann", "password": "***"}}]
    assert PASSWORD not in json.dumps(rows)
    # And the conversation continues from it
    assert follow_up.failure is None and follow_up.conversation.new_messages[-1].text == "Still signed in."


def test_a_logged_message_of_a_megabyte_is_masked_in_one_pass() -> None:
    # Given what the SDK logs at DEBUG for a large result: a megabyte of base64url, then a secret-looking pair
    text = '{"content": "' + "A-b_" * 250_000 + '", ' + "x-" * 250_000 + ' "api_key": "tok-canary-1mb"}'
    # When it is masked (before the fix, the search for a secret word inside each long word backtracked
    # quadratically: 30,000 characters took 28 s, a megabyte hours, with the event loop blocked)
    masked = redact_text(text)
    # Then the secret is gone and the rest stays
    assert "tok-canary-1mb" not in masked and '"api_key": ***' in masked and masked.startswith(text[:100])
