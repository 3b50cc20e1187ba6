"""Calls of HTTP tools against a real REST API and a webhook receiver on 127.0.0.1 (tests/servers/http_api_server.py,
tests/servers/webhook_receiver.py): the request each shape of arguments makes, authentication, the results each kind
of response gives, and the guarantees MCP calls have (timeouts, retries of safe methods only, the SSRF guard, the
circuit breaker, masking), through the dispatcher, the agent and the Tool Caller, beside MCP tools in one run."""

from __future__ import annotations

import json
import logging
import secrets
from typing import Any

import anyio
import pyarrow as pa
import pytest
from langchain_core.messages import AIMessage

from fixtures.http_servers import attempts, received
from knime_mcp.agent.loop import run_agent
from knime_mcp.caller.table import CallerOptions, call_table
from knime_mcp.calls.dispatch import CallOutcome, Dispatcher, RetryPolicy
from knime_mcp.calls.listing import list_server_tools
from knime_mcp.calls.pool import ClientPool
from knime_mcp.config import AuthRef, ServerSpec, Timeouts, resolved_secrets
from knime_mcp.demo_server import listening_socket
from knime_mcp.errors import MASK, ConfigError
from knime_mcp.http import BODY_ARGUMENTS, HttpOperation, HttpParameter
from knime_mcp.http.response import MAX_ERROR_EXCERPT
from knime_mcp.mcp.sync import SyncMcpClient, run_sync
from knime_mcp.net.breaker import CircuitBreaker
from knime_mcp.seal import seal_spec
from knime_mcp.tools.tool import MCPTool, ToolAnnotations
from scripted_model import calls, scripted

TOKEN_VARIABLE = "KNIME_MCP_TEST_HTTP_KEY"
FAST_RETRIES = RetryPolicy(attempts=3, initial_wait=0.01, max_wait=0.05)
READ_ONLY = ToolAnnotations(read_only=True, destructive=False, idempotent=True, annotated=True)
WRITES = ToolAnnotations(read_only=False, destructive=False, idempotent=False, annotated=True)
IDEMPOTENT = ToolAnnotations(read_only=False, destructive=False, idempotent=True, annotated=True)

PET_ID = (HttpParameter(name="pet_id", location="path"),)
GET_PET = HttpOperation(
    method="GET",
    path="/pets/{pet_id}",
    parameters=(
        HttpParameter(name="pet_id", location="path"),
        HttpParameter(name="request_id", location="header", wire_name="X-Request-Id"),
    ),
)
LIST_PETS = HttpOperation(
    method="GET",
    path="/pets",
    parameters=tuple(HttpParameter(name=name, location="query") for name in ("species", "tags", "limit")),
)
CREATE_PET = HttpOperation(method="POST", path="/pets", body="pet")


def _schema(properties: dict[str, Any], *required: str) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required)}


def _tool(
    base: str,
    operation: HttpOperation,
    schema: dict[str, Any] | None = None,
    *,
    name: str = "op",
    annotations: ToolAnnotations = READ_ONLY,
    auth: AuthRef | None = None,
    sealed: bool = True,
    timeouts: Timeouts | None = None,
) -> MCPTool:
    spec = ServerSpec(target=base, name="pet-api", auth=auth or AuthRef(), timeouts=timeouts or Timeouts())
    schema = schema or {"type": "object"}
    return MCPTool(
        name=name,
        tool_name=name,
        input_schema=schema,
        parameter_schema=schema,
        annotations=annotations,
        server=seal_spec(spec) if sealed else spec,
        http=operation,
    )


def _calls(
    tool: MCPTool,
    *arguments: dict[str, Any],
    retry: RetryPolicy = FAST_RETRIES,
    timeout: float | None = None,
    breaker: CircuitBreaker | None = None,
    check_unsealed: bool = True,
) -> list[CallOutcome]:
    """Each call in turn, all in one run (one pool)."""

    async def go() -> list[CallOutcome]:
        options: dict[str, Any] = {"breaker": breaker} if breaker else {}
        async with ClientPool(check_unsealed=check_unsealed, **options) as pool:
            dispatcher = Dispatcher(pool, retry=retry, timeout=timeout)
            outcomes = [await dispatcher.call(tool, each) for each in arguments]
            assert pool.clients == [], "an HTTP tool's API gets no MCP session"
            return outcomes

    return run_sync(go)


def _call(tool: MCPTool, arguments: dict[str, Any] | None = None, **options: Any) -> CallOutcome:
    return _calls(tool, arguments or {}, **options)[0]


def _pet_tool(base: str) -> MCPTool:
    schema = _schema({"pet_id": {"type": "string"}, "request_id": {"type": "string"}}, "pet_id")
    return _tool(base, GET_PET, schema, name="get_pet")


@pytest.fixture()
def api_key(auth_token: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The API's secret, in the environment variable the tools' authentication names."""
    monkeypatch.setenv(TOKEN_VARIABLE, auth_token)
    return auth_token


# -- the request ----------------------------------------------------------------------------------------------------


def test_path_parameters_are_percent_encoded_and_headers_sent_under_their_wire_name(http_api_url: str) -> None:
    outcome = _call(_pet_tool(http_api_url), {"pet_id": "a/b c%?#x", "request_id": "r-1"})

    assert outcome.ok and outcome.record.kind == "http" and outcome.record.server == "pet-api"
    assert outcome.result is not None and outcome.result.structured == {"pet_id": "a/b c%?#x", "request_id": "r-1"}
    assert json.loads(outcome.result.text) == outcome.result.structured


def test_query_parameters_repeat_lists_and_send_enums_and_numbers(http_api_url: str) -> None:
    tags = {"type": "array", "items": {"type": "string"}}
    schema = _schema({"species": {"enum": ["dog", "cat", "bird"]}, "tags": tags, "limit": {"type": "integer"}})
    tool = _tool(http_api_url, LIST_PETS, schema)

    outcome = _call(tool, {"species": "cat", "tags": ["old", "calm"], "limit": 3})

    assert outcome.result is not None
    assert outcome.result.structured == {"species": "cat", "tags": ["old", "calm"], "limit": 3, "pets": []}


def test_arguments_are_validated_against_the_schema_before_any_request(http_api_url: str) -> None:
    schema = _schema({"species": {"enum": ["dog", "cat"]}})
    outcome = _call(_tool(http_api_url, LIST_PETS, schema), {"species": "dragon"})
    assert outcome.record.status == "invalid_arguments" and "dragon" in str(outcome.error)


def test_a_nested_json_body_is_sent_with_bearer_authentication(http_api_url: str, api_key: str) -> None:
    pet = {"name": "Rex", "species": "dog", "owner": {"name": "Ann", "address": {"city": "Konstanz"}}, "tags": ["a"]}
    tool = _tool(
        http_api_url,
        CREATE_PET,
        _schema({"pet": {"type": "object"}}, "pet"),
        annotations=WRITES,
        auth=AuthRef(kind="bearer", secret=f"${{{TOKEN_VARIABLE}}}"),
    )

    outcome = _call(tool, {"pet": pet})

    assert outcome.ok and outcome.result is not None
    assert outcome.result.structured == {
        **pet,
        "id": 7,
        "owner": {"name": "Ann", "address": {"city": "Konstanz", "street": None}},
    }


def test_a_webhook_gets_every_argument_that_is_not_a_parameter_as_its_payload(webhook_receiver_url: str) -> None:
    hook = f"hook-{secrets.token_hex(4)}"
    event = HttpParameter(name="event", location="header", wire_name="X-Event")
    operation = HttpOperation(method="POST", parameters=(event,), body=BODY_ARGUMENTS)
    tool = _tool(f"{webhook_receiver_url}/hooks/{hook}", operation, annotations=WRITES)

    outcome = _call(tool, {"event": "order.created", "order": {"id": 12, "items": [{"sku": "A-1"}]}, "note": None})

    assert outcome.ok and outcome.result is not None and outcome.result.structured == {"received": 1}
    (got,) = received(webhook_receiver_url, hook)
    assert got["payload"] == {"order": {"id": 12, "items": [{"sku": "A-1"}]}, "note": None}
    assert got["headers"]["x-event"] == "order.created"  # type: ignore[index]


def test_a_webhook_url_referencing_its_token_in_the_query_sends_the_token_and_shows_it_nowhere(
    webhook_receiver_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a webhook whose URL carries its token as a reference, as a trusted webhook table would hold it
    hook = f"hook-{secrets.token_hex(4)}"
    monkeypatch.setenv("KNIME_MCP_TEST_HOOK_TOKEN", "hook-canary-51f0")
    operation = HttpOperation(method="POST", body=BODY_ARGUMENTS)
    target = f"{webhook_receiver_url}/hooks/{hook}?team=data&token=${{KNIME_MCP_TEST_HOOK_TOKEN}}"
    tool = _tool(target, operation, annotations=WRITES)
    # When it is called
    outcome = _call(tool, {"text": "hi"})
    # Then the token arrives resolved, and neither the tool nor its result holds it
    (got,) = received(webhook_receiver_url, hook)
    assert got["query"] == {"team": "data", "token": "hook-canary-51f0"}
    assert outcome.ok and "hook-canary-51f0" not in repr(outcome)
    assert "${KNIME_MCP_TEST_HOOK_TOKEN}" in tool.server.target


# -- authentication -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "auth"),
    [
        ("/secure/query", AuthRef(kind="query", parameter="api_key", secret=f"${{{TOKEN_VARIABLE}}}")),
        ("/secure/header", AuthRef(kind="header", header="X-API-Key", secret=f"${{{TOKEN_VARIABLE}}}")),
    ],
    ids=["query", "header"],
)
def test_an_api_key_in_the_query_or_a_header_is_sent_and_a_wrong_one_is_a_tool_error_with_the_status(
    http_api_url: str, api_key: str, monkeypatch: pytest.MonkeyPatch, path: str, auth: AuthRef
) -> None:
    tool = _tool(http_api_url, HttpOperation(method="GET", path=path), auth=auth)

    granted = _call(tool)
    monkeypatch.setenv(TOKEN_VARIABLE, "wrong-key")
    refused = _call(tool)

    assert granted.ok and granted.result is not None and "granted" in granted.result.text
    assert refused.record.status == "tool_error" and refused.result is not None and refused.result.is_error
    assert refused.record.error is not None and "HTTP 401" in refused.record.error
    assert "Wrong or missing credentials" in refused.record.error


def test_the_query_key_is_masked_where_the_api_echoes_it(http_api_url: str, api_key: str) -> None:
    auth = AuthRef(kind="query", parameter="api_key", secret=f"${{{TOKEN_VARIABLE}}}")
    schema = _schema({"pet_id": {"type": "string"}}, "pet_id")
    tool = _tool(http_api_url, GET_PET, schema, auth=auth)

    outcome = _call(tool, {"pet_id": f"key {api_key}"})

    assert outcome.result is not None and outcome.result.structured == {"pet_id": f"key {MASK}", "request_id": None}
    assert api_key not in outcome.result.to_json()


def test_oauth_is_refused_for_http_tools(http_api_url: str) -> None:
    outcome = _call(_tool(http_api_url, HttpOperation(method="GET", path="/pets"), auth=AuthRef(kind="oauth")))
    assert isinstance(outcome.error, ConfigError) and "cannot sign in with OAuth" in str(outcome.error)


def test_query_authentication_needs_its_parameter_and_old_specs_read_and_seal_the_same() -> None:
    with pytest.raises(ConfigError, match="needs a query parameter name"):
        AuthRef(kind="query", secret="${KEY}")
    with pytest.raises(ConfigError, match="goes with authentication 'query' only"):
        AuthRef(kind="bearer", secret="${KEY}", parameter="api_key")
    old = ServerSpec(target="https://api.example.com", auth=AuthRef(kind="bearer", secret="${KEY}"))
    assert "parameter" not in old.to_json() and ServerSpec.from_json(old.to_json()) == old
    query = ServerSpec(target="https://api.example.com", auth=AuthRef(kind="query", parameter="key", secret="${K}"))
    assert ServerSpec.from_json(query.to_json()).auth.parameter == "key"


def test_the_query_keys_url_encoded_form_is_masked_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_VARIABLE, "a+b/c=d")
    spec = ServerSpec(
        target="https://x.example", auth=AuthRef(kind="query", parameter="k", secret=f"${{{TOKEN_VARIABLE}}}")
    )
    assert {"a+b/c=d", "a%2Bb%2Fc%3Dd"} <= resolved_secrets(spec)


def test_an_mcp_server_refuses_query_authentication(demo_http_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_VARIABLE, "some-key")
    spec = ServerSpec(target=demo_http_url, auth=AuthRef(kind="query", parameter="k", secret=f"${{{TOKEN_VARIABLE}}}"))
    with pytest.raises(ConfigError, match="authentication 'query' is for HTTP tools"), SyncMcpClient(spec):
        pass


# -- responses ------------------------------------------------------------------------------------------------------


def test_an_image_response_is_image_content(http_api_url: str) -> None:
    photo = HttpOperation(method="GET", path="/pets/{pet_id}/photo", parameters=PET_ID)
    outcome = _call(_tool(http_api_url, photo), {"pet_id": 3})
    assert outcome.result is not None
    (image,) = outcome.result.images
    assert image.mime_type == "image/png" and image.bytes.startswith(b"\x89PNG")


def test_plain_text_is_text_and_an_empty_answer_says_so(http_api_url: str) -> None:
    card_operation = HttpOperation(method="GET", path="/pets/{pet_id}/card", parameters=PET_ID)
    delete_operation = HttpOperation(method="DELETE", path="/pets/{pet_id}", parameters=PET_ID)

    card = _call(_tool(http_api_url, card_operation), {"pet_id": 3})
    deleted = _call(_tool(http_api_url, delete_operation, annotations=IDEMPOTENT), {"pet_id": 3})

    assert card.result is not None and card.result.text == "Pet 3\nA good pet." and card.result.structured is None
    assert deleted.ok and deleted.result is not None and "HTTP 204" in deleted.result.text


def test_a_failing_endpoint_is_a_tool_error_with_the_status_and_a_bounded_excerpt(http_api_url: str) -> None:
    outcome = _call(_tool(http_api_url, HttpOperation(method="GET", path="/fail")), retry=RetryPolicy())

    assert outcome.record.status == "tool_error" and outcome.error is None
    assert outcome.result is not None and outcome.result.is_error
    text = outcome.result.text
    assert text.startswith("The API answered HTTP 500 Internal Server Error to GET /fail.\nInternal failure: xxx")
    assert len(text) < MAX_ERROR_EXCERPT + 200 and "more characters]" in text


def test_a_call_past_its_timeout_is_cancelled(http_api_url: str) -> None:
    slow = HttpOperation(method="GET", path="/slow", parameters=(HttpParameter(name="seconds", location="query"),))
    outcome = _call(_tool(http_api_url, slow), {"seconds": 3}, timeout=0.3, retry=RetryPolicy())
    assert outcome.record.status == "timeout" and "did not answer within 0.3 s" in str(outcome.error)


# -- retries, the breaker, the SSRF guard ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "annotations", "sent"),
    [
        ("GET", WRITES, 2),
        ("PUT", IDEMPOTENT, 2),
        ("DELETE", IDEMPOTENT, 2),
        ("PUT", WRITES, 1),
        ("DELETE", WRITES, 1),
        ("POST", IDEMPOTENT, 1),
    ],
)
def test_only_safe_methods_and_idempotent_puts_and_deletes_are_retried_after_a_503(
    http_api_url: str, method: str, annotations: ToolAnnotations, sent: int
) -> None:
    key = f"{method}-{secrets.token_hex(4)}"
    operation = HttpOperation(method=method, path=f"/flaky/{key}")

    outcome = _call(_tool(http_api_url, operation, annotations=annotations))

    assert attempts(http_api_url, key) == sent and outcome.record.attempts == sent
    if sent == 2:
        assert outcome.ok and outcome.result is not None and outcome.result.structured == {"attempt": 2}
    else:
        assert outcome.record.status == "tool_error" and "HTTP 503" in (outcome.record.error or "")


def test_an_api_from_data_on_a_loopback_address_is_refused_unless_trusted(http_api_url: str) -> None:
    key = f"ssrf-{secrets.token_hex(4)}"
    tool = _tool(http_api_url, HttpOperation(method="GET", path=f"/flaky/{key}"), sealed=False)

    refused = _call(tool)
    trusted = _call(tool, check_unsealed=False)

    assert isinstance(refused.error, ConfigError) and "a loopback address" in str(refused.error)
    assert trusted.record.status == "ok" and attempts(http_api_url, key) == 2


def test_an_unreachable_api_trips_the_breaker() -> None:
    with listening_socket() as sock:
        port = sock.getsockname()[1]  # closed below, so connections are refused
    tool = _tool(f"http://127.0.0.1:{port}", HttpOperation(method="GET", path="/pets"))

    outcomes = _calls(tool, {}, {}, {}, retry=RetryPolicy(), breaker=CircuitBreaker(threshold=2, cooldown=30))

    assert [outcome.record.status for outcome in outcomes] == ["connection_error"] * 3
    assert "Could not connect" in str(outcomes[0].error)
    assert "Not trying the server again" in str(outcomes[2].error)


def test_concurrent_calls_share_one_client_and_overlap(http_api_url: str) -> None:
    slow = HttpOperation(method="GET", path="/slow", parameters=(HttpParameter(name="seconds", location="query"),))
    tool = _tool(http_api_url, slow)

    async def go() -> tuple[float, list[CallOutcome]]:
        async with ClientPool(max_concurrency=4) as pool:
            dispatcher = Dispatcher(pool)
            outcomes: list[CallOutcome] = []
            started = anyio.current_time()
            async with anyio.create_task_group() as group:
                for _ in range(4):
                    group.start_soon(lambda: _append(outcomes, dispatcher.call(tool, {"seconds": 0.5})))
            assert len(pool._http_clients) == 1  # noqa: SLF001
            return anyio.current_time() - started, outcomes

    elapsed, outcomes = run_sync(go)
    assert all(outcome.ok for outcome in outcomes) and elapsed < 1.5


async def _append(outcomes: list[CallOutcome], call: Any) -> None:
    outcomes.append(await call)


# -- MCP and HTTP tools in one run ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_tools(demo_http_url: str) -> list[MCPTool]:
    return run_sync(list_server_tools, ServerSpec(target=demo_http_url, name="demo")).tools


def test_the_agent_calls_mcp_and_http_tools_of_one_table_in_one_run(
    demo_tools: list[MCPTool], http_api_url: str
) -> None:
    table = [*demo_tools, _pet_tool(http_api_url)]
    model = scripted(calls(("c1", "echo", {"text": "hello"}), ("c2", "get_pet", {"pet_id": "rex"})), AIMessage("Done."))

    run = run_sync(run_agent, model, table, "Go.")

    assert [(entry.tool, entry.kind, entry.server, entry.status) for entry in run.log] == [
        ("echo", "MCP", "demo", "ok"),
        ("get_pet", "HTTP", "pet-api", "ok"),
    ]
    offered = {spec["function"]["name"]: spec["function"] for spec in model.requests[0][1] or []}
    assert "of HTTP API 'pet-api'" in offered["get_pet"]["description"]
    replies = [message.text for message in model.requests[1][0][-2:]]
    assert "hello" in replies[0] and '{"pet_id":"rex"' in replies[1]


def test_the_tool_caller_calls_mcp_and_http_tools_with_the_same_columns_in_one_run(
    demo_tools: list[MCPTool], http_api_url: str
) -> None:
    echo = next(tool for tool in demo_tools if tool.name == "echo")

    async def go() -> list[pa.Table]:
        tables: list[pa.Table] = []
        async with ClientPool() as pool:
            for tool, column in ((echo, "text"), (_pet_tool(http_api_url), "pet_id")):
                written: list[pa.RecordBatch] = []

                async def sink(batch: pa.RecordBatch, written: list[pa.RecordBatch] = written) -> None:
                    written.append(batch)

                batch = pa.RecordBatch.from_pydict({column: ["a", "b/c"]})
                await call_table(tool, [batch], sink, options=CallerOptions(concurrency=2), pool=pool)
                tables.append(pa.Table.from_batches(written))
        return tables

    mcp_table, http_table = run_sync(go)

    assert mcp_table.column_names[1:] == http_table.column_names[1:]
    assert http_table.column("Is error").to_pylist() == [False, False]
    structured = [json.loads(text) for text in http_table.column("Structured result").to_pylist()]
    assert [value["pet_id"] for value in structured] == ["a", "b/c"]


def test_the_query_key_never_reaches_httpxs_request_log(
    http_api_url: str, api_key: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a process where no MCP session has opened yet (none has masked the libraries' logs), logging at INFO
    from knime_mcp.net import library_logs

    for logger in logging.root.manager.loggerDict.values():
        if isinstance(logger, logging.Logger) and library_logs._FILTER in logger.filters:
            monkeypatch.setattr(logger, "filters", [f for f in logger.filters if f is not library_logs._FILTER])
    monkeypatch.setattr(library_logs, "_known", 0)
    caplog.set_level(logging.INFO)
    auth = AuthRef(kind="query", parameter="api_key", secret=f"${{{TOKEN_VARIABLE}}}")
    # When an HTTP tool sends its key in the query
    outcome = _call(_tool(http_api_url, HttpOperation(method="GET", path="/secure/query"), auth=auth))
    # Then httpx's line for the request is there, with the key masked
    requests = [record.getMessage() for record in caplog.records if record.name.startswith("httpx")]
    assert outcome.ok and any("/secure/query?api_key=***" in line for line in requests), requests
    assert not [record for record in caplog.records if api_key in record.getMessage()]
