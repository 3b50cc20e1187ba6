"""Redirects and the largest response of HTTP tools (issue 37 §5), against the real REST API on 127.0.0.1
(tests/servers/http_api_server.py: `/redirect/{status}/{hops}`, `/echo`, `/away`, `/big`) and, as another origin that
would gladly take the credential, the webhook receiver on another port (tests/servers/webhook_receiver.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from cli_runs import run_cli
from fixtures.http_servers import received
from knime_mcp.calls.dispatch import CallOutcome, Dispatcher, RetryPolicy
from knime_mcp.calls.listing import list_http_tools
from knime_mcp.calls.pool import ClientPool
from knime_mcp.config import AuthRef, ServerSpec
from knime_mcp.errors import ConfigError, ToolCallError
from knime_mcp.http import HttpOperation, HttpParameter
from knime_mcp.http.webhooks import WebhookRow
from knime_mcp.mcp.sync import run_sync
from knime_mcp.seal import is_sealed_here, seal_spec
from knime_mcp.tools.tool import MCPTool, ToolAnnotations

TOKEN_VARIABLE = "KNIME_MCP_TEST_REDIRECT_KEY"
ANY = {"type": "object"}
AUTHS = {
    "bearer": AuthRef(kind="bearer", secret=f"${{{TOKEN_VARIABLE}}}"),
    "basic": AuthRef(kind="basic", username="user", secret=f"${{{TOKEN_VARIABLE}}}"),
    "header key": AuthRef(kind="header", header="X-API-Key", secret=f"${{{TOKEN_VARIABLE}}}"),
    "query key": AuthRef(kind="query", parameter="api_key", secret=f"${{{TOKEN_VARIABLE}}}"),
}


@pytest.fixture(autouse=True)
def _token(monkeypatch: pytest.MonkeyPatch, auth_token: str) -> None:
    monkeypatch.setenv(TOKEN_VARIABLE, auth_token)


def _tool(base: str, operation: HttpOperation, *, auth: AuthRef | None = None, max_bytes: int | None = None) -> MCPTool:
    spec = ServerSpec(target=base, name="pet-api", auth=auth or AuthRef(), max_response_bytes=max_bytes)
    return MCPTool(
        name="op", tool_name="op", input_schema=ANY, parameter_schema=ANY,
        annotations=ToolAnnotations(read_only=False, destructive=False, idempotent=False, annotated=True),
        server=seal_spec(spec), http=operation,
    )  # fmt: skip


def _call(tool: MCPTool, arguments: dict[str, Any] | None = None) -> CallOutcome:
    async def go() -> CallOutcome:
        async with ClientPool() as pool:
            return await Dispatcher(pool, retry=RetryPolicy(attempts=1)).call(tool, arguments or {})

    return run_sync(go)


def _echoed(outcome: CallOutcome) -> dict[str, Any]:
    assert outcome.ok, outcome.record.error
    assert outcome.result is not None and outcome.result.structured is not None
    return outcome.result.structured


# -- redirects within the origin ------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
@pytest.mark.parametrize("auth", list(AUTHS))
def test_three_redirects_within_the_origin_are_followed_with_the_credential(
    http_api_url: str, status: int, auth: str
) -> None:
    # Given an API that redirects a GET three times within its origin, the last time to /echo
    tool = _tool(http_api_url, HttpOperation(method="GET", path=f"/redirect/{status}/3"), auth=AUTHS[auth])
    # When its tool is called
    echoed = _echoed(_call(tool))
    # Then the request arrived at the end of the redirects as a GET, with the credential (sent again as a query
    # parameter too, which the redirect's address does not carry)
    assert echoed == {"method": "GET", "body": "", "credentials": [auth]}


def test_a_fourth_redirect_is_an_error_naming_the_limit(http_api_url: str) -> None:
    outcome = _call(_tool(http_api_url, HttpOperation(method="GET", path="/redirect/302/4")))
    assert isinstance(outcome.error, ToolCallError)
    assert str(outcome.error).startswith("The API redirected GET /redirect/302/1 a 4th time (to /echo)")
    assert "follows at most 3 redirects" in str(outcome.error)


@pytest.mark.parametrize(
    ("status", "method", "arrives_as", "body"),
    [
        (303, "POST", "GET", ""),  # RFC 9110: see other, with a GET
        (303, "PUT", "GET", ""),
        (301, "POST", "GET", ""),  # what browsers do, and RFC 9110 allows
        (302, "POST", "GET", ""),
        (302, "PUT", "PUT", '{"name":"Rex"}'),  # browsers (the Fetch standard) keep it; httpx would make it a GET
        (307, "POST", "POST", '{"name":"Rex"}'),
        (308, "PATCH", "PATCH", '{"name":"Rex"}'),
    ],
)
def test_a_redirect_keeps_the_method_and_body_unless_it_asks_for_a_get(
    http_api_url: str, status: int, method: str, arrives_as: str, body: str
) -> None:
    tool = _tool(http_api_url, HttpOperation(method=method, path=f"/redirect/{status}/1", body="pet"))
    echoed = _echoed(_call(tool, {"pet": {"name": "Rex"}}))
    assert (echoed["method"], echoed["body"].replace(" ", "")) == (arrives_as, body)


# -- redirects to another origin ------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [302, 307, 308])
@pytest.mark.parametrize("auth", list(AUTHS))
def test_a_redirect_to_another_port_is_refused_and_that_origin_gets_no_request(
    http_api_url: str, webhook_receiver_url: str, status: int, auth: str
) -> None:
    # Given an API that redirects a POST to another origin (another port on the same host), one that records every
    # POST it gets, headers and query included
    hook = f"redirected-{status}-{auth.replace(' ', '-')}"
    away = HttpOperation(
        method="POST", path="/away", body="pet",
        parameters=(HttpParameter(name="to", location="query"), HttpParameter(name="status", location="query")),
    )  # fmt: skip
    tool = _tool(http_api_url, away, auth=AUTHS[auth])
    # When its tool is called
    outcome = _call(tool, {"to": f"{webhook_receiver_url}/hooks/{hook}", "status": status, "pet": {"name": "Rex"}})
    # Then the call fails naming both origins and saying nothing was sent there
    assert isinstance(outcome.error, ToolCallError)
    message = str(outcome.error)
    assert f"The API redirected POST /away from {http_api_url} to {webhook_receiver_url}, another origin" in message
    assert f"nothing was sent to {webhook_receiver_url}" in message
    # And the other origin got no request at all, so neither the credential nor the body
    assert received(webhook_receiver_url, hook) == []


def test_a_redirect_from_http_to_https_on_the_same_host_is_another_origin(http_api_url: str) -> None:
    # httpx would follow this one with the Authorization header; the origin's scheme is part of it
    port = http_api_url.rsplit(":", 1)[1]
    away = HttpOperation(method="GET", path="/away", parameters=(HttpParameter(name="to", location="query"),))
    outcome = _call(_tool(http_api_url, away, auth=AUTHS["bearer"]), {"to": f"https://127.0.0.1:{port}/echo"})
    assert isinstance(outcome.error, ToolCallError) and f"to https://127.0.0.1:{port}, another origin" in str(
        outcome.error
    )


def test_a_webhook_follows_a_redirect_within_its_origin_and_refuses_one_elsewhere(
    http_api_url: str, webhook_receiver_url: str
) -> None:
    from knime_mcp.http.webhooks import webhook_tools

    # Given two webhooks: one whose URL redirects (307) within its origin, one whose URL redirects to another origin
    away = f"{http_api_url}/away?status=307&to={webhook_receiver_url}/hooks/webhook-redirected"
    rows = [WebhookRow(name="near", url=f"{http_api_url}/redirect/307/2"), WebhookRow(name="far", url=away)]
    near, far = webhook_tools(rows, sealed=True)
    # When each is called
    echoed = _echoed(_call(near, {"text": "hello"}))
    refused = _call(far, {"text": "hello"})
    # Then the first payload arrives where the redirects end, and the second goes nowhere
    assert echoed["method"] == "POST" and json.loads(echoed["body"]) == {"text": "hello"}
    assert isinstance(refused.error, ToolCallError) and "another origin" in str(refused.error)
    assert received(webhook_receiver_url, "webhook-redirected") == []


# -- the largest response -------------------------------------------------------------------------------------------

BIG = HttpOperation(method="GET", path="/big", parameters=(HttpParameter(name="megabytes", location="query"),))


def test_a_response_over_the_largest_response_is_an_error_naming_its_size_the_cap_and_the_setting(
    http_api_url: str,
) -> None:
    # Given a tool whose largest response is 1 MB, When the API answers 2 MB
    outcome = _call(_tool(http_api_url, BIG, max_bytes=2**20), {"megabytes": 2})
    # Then the call fails saying the size, the cap, and which setting raises it
    assert isinstance(outcome.error, ToolCallError)
    assert str(outcome.error).startswith(
        "The API's response (2,000,002 bytes) is larger than the largest response knime-mcp reads for this tool "
        "(1 MB); the call ran, but its result is lost."
    )
    assert "Raise Largest response (MB) in the HTTP Tool Provider (--max-response-mb" in str(outcome.error)
    # While the same answer within the default (64 MB) arrives whole
    fine = _call(_tool(http_api_url, BIG), {"megabytes": 2})
    assert fine.ok and fine.result is not None and len(fine.result.structured["result"]) == 2_000_000  # type: ignore[index]


def test_the_largest_response_travels_with_the_tools_of_a_listing_and_their_seal(http_api_url: str) -> None:
    # Given the Python API listing a document and a webhook with a largest response of 3 MB
    rows = [WebhookRow(name="hook", url=f"{http_api_url}/big")]
    listing = anyio.run(
        lambda: list_http_tools(
            f"{http_api_url}/openapi.json", webhooks=rows, trust_webhooks=True, max_response_bytes=3 * 2**20
        )
    )
    # Then every tool's server carries it, through the JSON of a tools table, still sealed
    for tool in listing.tools:
        again = ServerSpec.from_json(tool.server.to_json())
        assert again.max_response_bytes == 3 * 2**20 and is_sealed_here(again)
    # And a server with the default writes no such key, so tables written before read (and are sealed) the same
    assert "max_response_bytes" not in ServerSpec(target=http_api_url, max_response_bytes=64 * 2**20).to_json()
    # And a table cannot set a limit of nothing
    with pytest.raises(ConfigError, match="The largest response must be a positive number of bytes"):
        ServerSpec.from_dict({"target": http_api_url, "max_response_bytes": 0})


def test_http_tools_and_call_take_max_response_mb(
    capsys: pytest.CaptureFixture[str], http_api_url: str, tmp_path: Path
) -> None:
    # Given webhooks to the 2 MB answer, listed with --max-response-mb 1
    hooks = tmp_path / "hooks.csv"
    hooks.write_text(f"Name,URL\nbig,{http_api_url}/big\n", encoding="utf-8")
    tools = tmp_path / "tools.json"
    argv = [
        "http-tools",
        "--webhooks",
        str(hooks),
        "--max-response-mb",
        "1",
        "--format",
        "json",
        "--output",
        str(tools),
    ]
    assert run_cli(capsys, *argv)[0] == 0
    assert json.loads(tools.read_text())[0]["server"]["max_response_bytes"] == 2**20
    # When its tool is called from the file, Then the call fails naming the option
    code, _, err = run_cli(capsys, "call", "--tools", str(tools), "big", "--args", "{}")
    assert code != 0 and "(2,000,002 bytes) is larger than" in err and "--max-response-mb" in err
    # And `call --openapi` takes the option for the document's tools (a cap of 10 bytes, below the pet's 30 or so)
    argv = ["call", "--openapi", f"{http_api_url}/openapi.json", "getPet", "--args", '{"pet_id": "42"}']
    assert run_cli(capsys, *argv)[0] == 0
    code, _, err = run_cli(capsys, *argv, "--max-response-mb", "0.00001")
    assert code != 0 and "is larger than the largest response knime-mcp reads for this tool (10 bytes)" in err
    code, _, err = run_cli(capsys, *argv, "--max-response-mb", "0")
    assert code != 0 and "--max-response-mb must be more than 0" in err
    code, _, err = run_cli(capsys, "call", "echo", "--args", "{}", "--max-response-mb", "1")
    assert code != 0 and "--max-response-mb goes with --openapi SOURCE" in err
