"""Issue 37 §4 and §5 end to end through the nodes as KNIME runs them (Given/When/Then): the HTTP Tool Provider given
an API's Base URL alone, a redirect to another origin and a webhook row, each listed, called by the Agent Prompter's
model (a scripted model endpoint on 127.0.0.1) and by the MCP Tool Caller, against the real REST API
(tests/servers/http_api_server.py) and the webhook receiver on another port (tests/servers/webhook_receiver.py);
and the same through the command line, where the nodes' tests do not cover it already (those are not node tests)."""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pytest

import node_host
from agent_runs import API_KEY, agent_node, chat_model_port, offered_tools, run_agent_node
from cli_runs import run_cli
from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer, tool_calls
from fixtures.http_servers import received
from node_contexts import ExecuteContext
from test_http_provider_node import _http_provider

TOKEN_VARIABLE = "KNIME_MCP_TEST_SOURCES_TOKEN"
"""The environment variable the command line's --secret names, holding the API's bearer token."""
PET = {"name": "Rex", "species": "dog", "owner": {"name": "Ann", "address": {"city": "Bern"}}}

REDIRECTS = {
    "openapi": "3.1.0",
    "info": {"title": "Redirecting API", "version": "1"},
    "paths": {
        "/away": {
            "post": {
                "operationId": "sendAway",
                "summary": "Posts the pet, answered by a redirect to `to` with `status`.",
                "parameters": [
                    {"name": "to", "in": "query", "required": True, "schema": {"type": "string"}},
                    {"name": "status", "in": "query", "required": True, "schema": {"type": "integer"}},
                ],
                "requestBody": {"content": {"application/json": {"schema": {"type": "object"}}}},
            }
        }
    },
}
"""An OpenAPI document for the test API's `/away`, which its own document leaves out: a person's file, its server
the Base URL they set."""


def _bearer(auth_token: str) -> ExecuteContext:
    """A run's context with the chat model's key and the API's bearer token as KNIME credentials."""
    return ExecuteContext({"llm": ("", API_KEY), "api": ("", auth_token)})


def _tools(auth_token: str, document: str = "", **settings: Any) -> Any:
    """The HTTP Tool Provider's tools table, with the API's bearer token from the credential 'api'."""
    node = _http_provider(document, auth__kind="BEARER", auth__credential="api", **settings)
    (table,) = node_host.execute_node(node, _bearer(auth_token), None)
    return node_host.source_table(table.to_pandas())


def _caller(tool: str) -> Any:
    from nodes.tool_caller import MCPToolCaller

    settings = {"tool__name": tool, "tool__tags": "", "tool__mapping": "", "calls__on_error": "COLUMN"}
    return node_host.set_parameters(MCPToolCaller(), **settings)


def _replies(endpoint: FakeOpenAIEndpoint) -> dict[str, str]:
    """What the model got back for each of its tool calls, by call id, in the request after them."""
    return {m["tool_call_id"]: m["content"] for m in endpoint.requests[1]["messages"] if m.get("tool_call_id")}


def _run_agent(tools: Any, auth_token: str, *calls: tuple[str, str, dict[str, Any]]) -> tuple[Any, dict[str, str]]:
    """The Agent Prompter's run whose model makes ``calls`` in one reply, then answers: its log, and the tool
    replies the model got (fenced as tool output). Destructive tools are allowed, as a person may: every POST is."""
    with FakeOpenAIEndpoint([tool_calls(*calls), answer("Done.")]) as endpoint:
        model = chat_model_port(endpoint.base_url)
        conversation, log = run_agent_node(agent_node("Go.", destructive="ALLOW"), _bearer(auth_token), model, tools)
    assert {name for _, name, _ in calls} <= set(offered_tools(endpoint.requests[0]))
    assert conversation["Content"].iloc[-1] == "Done."
    return log, _replies(endpoint)


# -- an API given by its Base URL alone -----------------------------------------------------------------------------


@pytest.mark.knime_node
def test_an_api_found_at_its_base_url_is_called_by_the_agents_model_and_by_the_tool_caller_for_each_row(
    http_api_url: str, auth_token: str
) -> None:
    # Given the HTTP Tool Provider with only the API's Base URL and a bearer token (no API description)
    tools = _tools(auth_token, document__base_url=http_api_url)
    # When the Agent Prompter's model adds a pet through an operation the provider found there
    log, replies = _run_agent(tools, auth_token, ("c1", "createPet", {"body": PET}))
    # Then the call reached the API with the person's token, and the model got the API's answer
    assert list(log["Kind"]) == ["HTTP"] and list(log["Status"]) == ["ok"]
    assert '"owner":{"name":"Ann","address":{"city":"Bern","street":null}},"tags":[],"id":7}' in replies["c1"]
    assert auth_token not in log.to_json()
    # And the Tool Caller calls another operation it found once a row
    data = node_host.source_table(pd.DataFrame({"pet_id": ["1", "a b/c", "42"]}))
    (out,) = node_host.execute_node(_caller("getPet"), _bearer(auth_token), data, tools)
    frame = out.to_pandas()
    assert list(frame["Is error"]) == [False, False, False]
    assert [json.loads(cell)["pet_id"] for cell in frame["Structured result"]] == ["1", "a b/c", "42"]


# -- redirects ------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def redirects_document(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("redirects") / "redirects.json"
    path.write_text(json.dumps(REDIRECTS), encoding="utf-8")
    return str(path)


def _away(to: str, status: int) -> dict[str, Any]:
    return {"to": to, "status": status, "body": PET}


@pytest.mark.knime_node
def test_a_redirect_to_another_origin_is_a_tool_error_for_the_model_and_that_origin_gets_nothing(
    http_api_url: str, webhook_receiver_url: str, redirects_document: str, auth_token: str
) -> None:
    # Given an operation at the Base URL that answers a POST with a 307 to another origin, which records every POST
    tools = _tools(auth_token, redirects_document, document__base_url=http_api_url)
    hook = f"agent-away-{secrets.token_hex(4)}"
    # When the Agent Prompter's model calls it, and again redirected within the API's origin
    far, near = _away(f"{webhook_receiver_url}/hooks/{hook}", 307), _away(f"{http_api_url}/redirect/307/2", 307)
    log, replies = _run_agent(tools, auth_token, ("c1", "sendAway", far), ("c2", "sendAway", near))
    # Then the model got a tool error naming the refused redirect and both origins
    refused = f"The API redirected POST /away from {http_api_url} to {webhook_receiver_url}, another origin"
    assert refused in replies["c1"]
    assert f"nothing was sent to {webhook_receiver_url}" in replies["c1"]
    by_call = log.set_index("Tool Call ID")
    assert (by_call["Status"]["c1"], by_call["Status"]["c2"]) == ("tool_error", "ok")
    assert "another origin" in by_call["Error"]["c1"]
    # And the other origin got no request, so neither the token nor the pet
    assert received(webhook_receiver_url, hook) == []
    # While the redirect within the origin was followed, the body and the token carried along
    body = json.dumps(json.dumps(PET, separators=(",", ":")))  # as the echo's JSON holds the body it got
    assert f'{{"method":"POST","body":{body},"credentials":["bearer"]}}' in replies["c2"]


@pytest.mark.knime_node
def test_the_tool_callers_row_redirected_to_another_origin_is_its_error_and_one_within_the_origin_is_followed(
    http_api_url: str, webhook_receiver_url: str, redirects_document: str, auth_token: str
) -> None:
    # Given the operation at the Base URL that redirects to `to`, and rows for it
    tools = _tools(auth_token, redirects_document, document__base_url=http_api_url)
    hook = f"caller-away-{secrets.token_hex(4)}"
    # (a 302 to another origin, and one to a redirect within the origin)
    data = node_host.source_table(
        pd.DataFrame(
            {"to": [f"{webhook_receiver_url}/hooks/{hook}", f"{http_api_url}/redirect/302/2"], "status": [302, 302]}
        )
    )
    # When the Tool Caller calls it for each row
    (out,) = node_host.execute_node(_caller("sendAway"), _bearer(auth_token), data, tools)
    frame = out.to_pandas()
    # Then the first row is an error naming the refused redirect, and the other origin got nothing
    assert list(frame["Is error"]) == [True, False]
    assert f"to {webhook_receiver_url}, another origin" in frame["Error"][0]
    assert received(webhook_receiver_url, hook) == []
    # And the second arrived at the end of its redirects, with the token
    assert json.loads(frame["Structured result"][1])["credentials"] == ["bearer"]


# -- webhooks -------------------------------------------------------------------------------------------------------


@pytest.mark.knime_node
def test_the_agents_model_calls_a_webhook_row_and_gets_the_receivers_answer(
    webhook_receiver_url: str, auth_token: str
) -> None:
    # Given a trusted webhook table of one row, listed by the HTTP Tool Provider with no API
    hook = f"agent-hook-{secrets.token_hex(4)}"
    webhooks = node_host.source_table(
        pd.DataFrame(
            {
                "Name": ["notify"],
                "Description": ["Tell the team."],
                "URL": [f"{webhook_receiver_url}/hooks/{hook}"],
                "Method": ["POST"],
                "Input Schema": [json.dumps({"type": "object", "properties": {"text": {"type": "string"}}})],
            }
        )
    )
    provider = _http_provider("", document__trust_webhooks=True, auth__kind="BEARER", auth__credential="api")
    (tools,) = node_host.execute_node(provider, _bearer(auth_token), webhooks)
    # When the Agent Prompter's model calls it
    log, replies = _run_agent(node_host.source_table(tools.to_pandas()), auth_token, ("c1", "notify", {"text": "hi"}))
    # Then the receiver got the arguments as the body, without the API's token, and the model got its answer
    assert list(log["Status"]) == ["ok"] and '{"received":1}' in replies["c1"]
    (delivery,) = received(webhook_receiver_url, hook)
    assert delivery["payload"] == {"text": "hi"}
    assert "authorization" not in delivery["headers"] and auth_token not in json.dumps(delivery)


# -- the command line -----------------------------------------------------------------------------------------------


@pytest.fixture
def bearer_options(monkeypatch: pytest.MonkeyPatch, auth_token: str) -> list[str]:
    """The options that send the API's bearer token, from the environment."""
    monkeypatch.setenv(TOKEN_VARIABLE, auth_token)
    return ["--auth", "bearer", "--secret", f"${{{TOKEN_VARIABLE}}}"]


def test_an_api_found_at_its_bare_base_url_is_called_by_call_agent_and_call_table(
    capsys: pytest.CaptureFixture[str], http_api_url: str, bearer_options: list[str], auth_token: str, tmp_path: Path
) -> None:
    # When `call` is given the API's base URL alone and calls an operation that needs the token, Then it got there
    code, out, err = run_cli(
        capsys, "call", "--base-url", http_api_url, *bearer_options, "createPet", "--args", json.dumps({"body": PET})
    )
    assert code == 0, err
    assert json.loads(out)["structured"]["id"] == 7 and auth_token not in out + err
    # And `agent`'s model calls one of the API found at --openapi-base-url and gets its answer
    script = [tool_calls(("c1", "getPet", {"pet_id": "9"})), answer("Done.")]
    with FakeOpenAIEndpoint(script) as endpoint:
        argv = ["agent", "--base-url", endpoint.base_url, "--model", "fake", "--openapi-base-url", http_api_url]
        code, out, err = run_cli(capsys, *argv, *bearer_options, "--prompt", "Hi", "--format", "json")
    assert code == 0, err
    (call,) = json.loads(out)["tool_calls"]
    assert call["status"] == "ok" and json.loads(call["result"])["structured"]["pet_id"] == "9"
    # And `call-table` calls one for every row
    rows, output = tmp_path / "pets.csv", tmp_path / "pets.parquet"
    rows.write_text("pet_id\n1\na b/c\n42\n", encoding="utf-8")
    argv = ["call-table", "--base-url", http_api_url, *bearer_options, "getPet", "--input", str(rows)]
    code, out, err = run_cli(capsys, *argv, "--output", str(output))
    assert code == 0, err
    structured = pq.read_table(output).column("Structured result").to_pylist()
    assert [json.loads(cell)["pet_id"] for cell in structured] == ["1", "a b/c", "42"]
    # And the tools listed there by http-tools, kept in a file, are the same operations
    tools = tmp_path / "tools.json"
    argv = ["http-tools", "--base-url", http_api_url, *bearer_options, "--format", "json", "--output", str(tools)]
    assert run_cli(capsys, *argv)[0] == 0
    assert {"createPet", "getPet"} <= {row["name"] for row in json.loads(tools.read_text())}


def test_call_refuses_a_redirect_to_another_origin_naming_it_and_follows_one_within_the_origin(
    capsys: pytest.CaptureFixture[str],
    http_api_url: str,
    webhook_receiver_url: str,
    redirects_document: str,
    bearer_options: list[str],
) -> None:
    hook = f"cli-away-{secrets.token_hex(4)}"
    argv = ["call", "--openapi", redirects_document, "--base-url", http_api_url, *bearer_options, "sendAway"]
    # When `call` calls the operation that redirects to another origin
    code, out, err = run_cli(capsys, *argv, "--args", json.dumps(_away(f"{webhook_receiver_url}/hooks/{hook}", 308)))
    # Then it fails as a tool error naming the refused redirect, and that origin got nothing
    assert code == 4 and out == ""
    assert f"to {webhook_receiver_url}, another origin" in err and f"nothing was sent to {webhook_receiver_url}" in err
    assert received(webhook_receiver_url, hook) == []
    # While a redirect within the origin is followed, with the token
    code, out, err = run_cli(capsys, *argv, "--args", json.dumps(_away(f"{http_api_url}/redirect/308/1", 308)))
    assert code == 0, err
    assert json.loads(out)["structured"]["credentials"] == ["bearer"]
