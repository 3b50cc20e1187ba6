"""The fault suite: servers that misbehave in ways no real server can be made to, against the provider and the
dispatcher that the agent and the Tool Caller share. Each fault ends with a message a user can act on, the run stays
usable (another server in the same pool still answers), and no process is left behind.

The faults come from `tests/fakes/fake_misbehaving_server.py`, one per URL path.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import anyio
import psutil
import pytest

from fixtures.fault_servers import fault_url
from fixtures.fault_servers import seen as _seen
from knime_mcp.calls.dispatch import Dispatcher, RetryPolicy
from knime_mcp.calls.listing import list_server_tools
from knime_mcp.calls.pool import ClientPool
from knime_mcp.config import ServerSpec, Timeouts
from knime_mcp.errors import ServerConnectError
from knime_mcp.tools.tool import MCPTool, ToolAnnotations
from knime_mcp.tools.truncate import DEFAULT_LIMIT_BYTES, cap_text
from tool_factory import make_tool

pytestmark = pytest.mark.anyio

READ_ONLY = ToolAnnotations(read_only=True, destructive=False, idempotent=True)
WRITES = ToolAnnotations(read_only=False, destructive=False, idempotent=False)
FAST = Timeouts(connect=10.0, call=1.0)
NO_WAIT = RetryPolicy(attempts=2, initial_wait=0.01, max_wait=0.02)
NOTIFICATION_WAIT = 10.0


@pytest.fixture(autouse=True)
def no_leaked_processes(fake_misbehaving_url: str) -> Iterator[None]:
    """Every process a test starts is gone when it ends (the session's fake server is started before the count)."""
    before = {child.pid for child in psutil.Process().children(recursive=True)}
    yield
    leaked = [child for child in psutil.Process().children(recursive=True) if child.pid not in before]
    assert not leaked, f"processes left running: {[child.cmdline() for child in leaked]}"


@pytest.fixture
def key() -> str:
    """Separates this test's requests (and fault counters) from every other test's on the shared fake."""
    return uuid.uuid4().hex


def _spec(base: str, mode: str, key: str, **options: str | int) -> ServerSpec:
    return ServerSpec(target=fault_url(base, mode, key=key, **options), timeouts=FAST)


def _echo(spec: ServerSpec, annotations: ToolAnnotations) -> MCPTool:
    return make_tool("echo", server=spec, annotations=annotations)


async def _once_seen(base: str, key: str, method: str) -> list[str]:
    """The methods received for ``key`` once ``method`` is among them: notifications are sent in the background."""
    with anyio.move_on_after(NOTIFICATION_WAIT):
        while method not in (seen := await anyio.to_thread.run_sync(_seen, base, key)):
            await anyio.sleep(0.05)
        return seen
    return await anyio.to_thread.run_sync(_seen, base, key)


async def _still_answers(dispatcher: Dispatcher, base: str) -> None:
    """The run goes on: a healthy server in the same pool answers after the fault."""
    outcome = await dispatcher.call(_echo(_spec(base, "ok", uuid.uuid4().hex), READ_ONLY), {"text": "still here"})
    assert outcome.ok and outcome.result is not None and outcome.result.text == "still here"


async def test_a_call_that_hangs_after_the_handshake_times_out_naming_the_timeout(
    fake_misbehaving_url: str, key: str
) -> None:
    spec = _spec(fake_misbehaving_url, "hang", key, on="tools/call")
    async with ClientPool() as pool:
        dispatcher = Dispatcher(pool)
        outcome = await dispatcher.call(_echo(spec, WRITES), {"text": "hi"})
        await _still_answers(dispatcher, fake_misbehaving_url)

    assert outcome.record.status == "timeout"
    assert str(outcome.error) == (
        f"Tool 'echo' did not answer within 1 s; the call was cancelled. [server: {spec.display_name}] "
        "Hint: Raise the call timeout if the tool is slow."
    )


async def test_a_timed_out_call_is_cancelled_on_the_server_while_the_run_goes_on(
    fake_misbehaving_url: str, key: str
) -> None:
    spec = _spec(fake_misbehaving_url, "hang", key, on="tools/call")
    async with ClientPool() as pool:
        dispatcher = Dispatcher(pool)
        await dispatcher.call(_echo(spec, WRITES), {"text": "hi"})
        seen = await _once_seen(fake_misbehaving_url, key, "notifications/cancelled")
        await _still_answers(dispatcher, fake_misbehaving_url)

    assert seen[-2:] == ["tools/call", "notifications/cancelled"]


async def test_a_read_only_call_that_times_out_is_retried_and_the_log_counts_the_attempts(
    fake_misbehaving_url: str, key: str
) -> None:
    spec = _spec(fake_misbehaving_url, "hang", key, on="tools/call")
    async with ClientPool() as pool:
        outcome = await Dispatcher(pool, retry=NO_WAIT).call(_echo(spec, READ_ONLY), {"text": "hi"})

    assert (outcome.record.status, outcome.record.attempts) == ("timeout", 2)
    assert _seen(fake_misbehaving_url, key).count("tools/call") == 2


async def test_a_writing_call_cut_off_mid_response_is_not_resent_and_may_or_may_not_have_run(
    fake_misbehaving_url: str, key: str
) -> None:
    spec = _spec(fake_misbehaving_url, "drop", key, on="tools/call")
    async with ClientPool() as pool:
        dispatcher = Dispatcher(pool, retry=NO_WAIT)
        outcome = await dispatcher.call(_echo(spec, WRITES), {"text": "hi"})
        await _still_answers(dispatcher, fake_misbehaving_url)

    assert not outcome.ok and outcome.record.attempts == 1
    assert str(outcome.error) == (
        f"The session was lost during the call of tool 'echo'; it may or may not have run. "
        f"[server: {spec.display_name}] Hint: A new session is open; check the tool's effect before calling it again."
    )
    assert _seen(fake_misbehaving_url, key).count("tools/call") == 1


async def test_a_read_only_call_cut_off_mid_response_is_resent_once_on_a_new_session(
    fake_misbehaving_url: str, key: str
) -> None:
    spec = _spec(fake_misbehaving_url, "drop", key, on="tools/call")
    async with ClientPool() as pool:
        outcome = await Dispatcher(pool).call(_echo(spec, READ_ONLY), {"text": "hi"})

    assert outcome.record.status == "connection_error"
    assert isinstance(outcome.error, ServerConnectError)
    assert outcome.error.message == "The server closed the connection."
    assert outcome.error.hint == "The server may have restarted, crashed or exited; check its log."
    assert _seen(fake_misbehaving_url, key).count("initialize") == 2
    assert _seen(fake_misbehaving_url, key).count("tools/call") == 2


async def test_the_provider_reports_a_listing_cut_off_mid_response_as_a_closed_connection(
    fake_misbehaving_url: str, key: str
) -> None:
    spec = _spec(fake_misbehaving_url, "drop", key, on="tools/list")

    with pytest.raises(ServerConnectError) as caught:
        await list_server_tools(spec)

    assert str(caught.value) == (
        f"The server closed the connection. [server: {spec.display_name}] "
        "Hint: The server may have restarted, crashed or exited; check its log."
    )


async def test_sse_trickling_one_byte_a_second_ends_at_the_call_timeout_and_is_cancelled(
    fake_misbehaving_url: str, key: str
) -> None:
    spec = _spec(fake_misbehaving_url, "trickle", key, on="tools/call")
    async with ClientPool() as pool:
        dispatcher = Dispatcher(pool)
        outcome = await dispatcher.call(_echo(spec, WRITES), {"text": "hi"})
        await _still_answers(dispatcher, fake_misbehaving_url)
        seen = await _once_seen(fake_misbehaving_url, key, "notifications/cancelled")

    assert outcome.record.status == "timeout"
    assert str(outcome.error).startswith("Tool 'echo' did not answer within 1 s; the call was cancelled.")
    assert seen[-2:] == ["tools/call", "notifications/cancelled"]


async def test_a_fifty_megabyte_result_arrives_intact_and_cap_text_bounds_what_a_model_would_get(
    fake_misbehaving_url: str, key: str
) -> None:
    spec = _spec(fake_misbehaving_url, "huge", key)
    async with ClientPool() as pool:
        dispatcher = Dispatcher(pool, timeout=60.0)
        outcome = await dispatcher.call(_echo(spec, READ_ONLY), {"text": "hi"})
        await _still_answers(dispatcher, fake_misbehaving_url)

    assert outcome.ok and outcome.result is not None
    assert len(outcome.result.text) == 50_000_000
    capped, truncated = cap_text(outcome.result.text)
    assert truncated and len(capped.encode()) <= DEFAULT_LIMIT_BYTES
    assert "of 50,000,000 bytes" in capped


async def test_the_provider_lists_a_tool_whose_schema_has_ten_thousand_properties(
    fake_misbehaving_url: str, key: str
) -> None:
    listing = await list_server_tools(_spec(fake_misbehaving_url, "wide-schema", key))

    assert [tool.name for tool in listing.tools] == ["wide"]
    assert len(listing.tools[0].input_schema["properties"]) == 10_000


async def test_the_provider_gives_odd_tool_names_unique_model_safe_names_and_a_note_per_change(
    fake_misbehaving_url: str, key: str
) -> None:
    spec = _spec(fake_misbehaving_url, "odd-names", key)
    listing = await list_server_tools(spec)

    names = [tool.name for tool in listing.tools]
    assert names[:2] == ["get_weather", "meteo_du_jour"]
    assert names[4:] == ["get_data", "get_data_2", "get_data_3"]
    assert len(set(names)) == 7 and all(len(name) <= 64 for name in names)
    assert [tool.tool_name for tool in listing.tools][4:] == ["get_data", "get data", "get.data"]
    assert listing.notes[-2:] == [
        "get_data_3: name 'get.data' changed to 'get_data': models accept only letters, digits, _ and -, at most 64",
        f"get_data_3: name 'get_data' of tool 'get.data' of {spec.display_name} is also used by tool 'get_data' of "
        f"{spec.display_name}; renamed to 'get_data_3'. Set a name prefix per server to choose distinct names.",
    ]


async def test_a_renamed_tool_is_still_called_by_its_own_name_on_the_server(
    fake_misbehaving_url: str, key: str
) -> None:
    listing = await list_server_tools(_spec(fake_misbehaving_url, "odd-names", key))
    spaced = next(tool for tool in listing.tools if tool.tool_name == "get weather")

    async with ClientPool() as pool:
        outcome = await Dispatcher(pool).call(spaced, {"text": "sunny"})

    assert spaced.name == "get_weather"
    assert outcome.ok and outcome.result is not None and outcome.result.text == "sunny"


@pytest.mark.parametrize("code", [429, 500, 503])
async def test_a_read_only_call_refused_with_a_transient_status_is_retried_until_it_succeeds(
    fake_misbehaving_url: str, key: str, code: int
) -> None:
    spec = _spec(fake_misbehaving_url, "status", key, code=code, times=2, on="tools/call")
    policy = RetryPolicy(attempts=3, initial_wait=0.01, max_wait=0.02)
    async with ClientPool() as pool:
        outcome = await Dispatcher(pool, retry=policy).call(_echo(spec, READ_ONLY), {"text": "third time"})

    assert outcome.ok and outcome.result is not None and outcome.result.text == "third time"
    assert outcome.record.attempts == 3
    assert _seen(fake_misbehaving_url, key).count("tools/call") == 3


async def test_a_writing_call_refused_with_503_is_not_retried_and_the_message_names_the_status(
    fake_misbehaving_url: str, key: str
) -> None:
    spec = _spec(fake_misbehaving_url, "status", key, code=503, times=1, retry_after=2, on="tools/call")
    async with ClientPool() as pool:
        outcome = await Dispatcher(pool, retry=NO_WAIT).call(_echo(spec, WRITES), {"text": "once"})

    assert (outcome.record.status, outcome.record.attempts) == ("connection_error", 1)
    assert "HTTP 503; it asked to retry after 2 s" in str(outcome.error)
    assert _seen(fake_misbehaving_url, key).count("tools/call") == 1


def test_retry_after_is_honoured_over_a_shorter_backoff() -> None:
    from tenacity import Future, RetryCallState

    from knime_mcp.errors import ServerBusyError

    policy = RetryPolicy(attempts=3, initial_wait=0.01, max_wait=0.02)
    state = RetryCallState(retry_object=None, fn=None, args=(), kwargs={})  # type: ignore[arg-type]
    failed: Future = Future(attempt_number=1)
    failed.set_exception(ServerBusyError(429, 7.0))
    state.outcome = failed
    assert policy.wait(state) == 7.0


@pytest.mark.parametrize("code", [429, 503])
async def test_a_retry_after_beyond_the_cap_is_not_waited_for_and_the_server_is_left_alone_until_then(
    fake_misbehaving_url: str, key: str, code: int
) -> None:
    from knime_mcp.errors import MAX_RETRY_AFTER_SECONDS, CircuitOpenError

    # Given a server that refuses every call and asks to come back in an hour, far beyond the cap
    spec = _spec(fake_misbehaving_url, "status", key, code=code, times=100, retry_after=3600, on="tools/call")
    tool = _echo(spec, READ_ONLY)
    async with ClientPool() as pool:
        dispatcher = Dispatcher(pool, retry=RetryPolicy(attempts=3))
        # When a read-only call and then another one are made (bounded, so the old hour-long wait fails, not hangs)
        with anyio.fail_after(20):
            first = await dispatcher.call(tool, {"text": "one"})
            second = await dispatcher.call(tool, {"text": "two"})
        await _still_answers(dispatcher, fake_misbehaving_url)

    # Then the first fails after one attempt saying when the server wants to be called again
    assert (first.record.status, first.record.attempts) == ("connection_error", 1)
    assert f"HTTP {code}; it asked to retry after 3600 s (at " in str(first.error)
    assert f"longer than knime-mcp waits ({MAX_RETRY_AFTER_SECONDS:g} s), so the call was not retried" in str(
        first.error
    )
    # And the second fails fast, once, without reaching the server
    assert isinstance(second.error, CircuitOpenError) and second.record.attempts == 1
    assert re.match(r"Not trying the server again for \d+ s as it asked \(last: The server answered", str(second.error))
    assert _seen(fake_misbehaving_url, key).count("tools/call") == 1


async def test_a_retry_after_given_as_an_http_date_counts_as_the_time_until_then(
    fake_misbehaving_url: str, key: str
) -> None:
    from email.utils import formatdate
    from time import time

    # Given a server that refuses every call until an hour from now, naming the time as an HTTP date (RFC 9110)
    until = formatdate(time() + 3600, usegmt=True)
    spec = _spec(fake_misbehaving_url, "status", key, code=429, times=100, retry_after=until, on="tools/call")
    async with ClientPool() as pool:
        with anyio.fail_after(20):
            outcome = await Dispatcher(pool, retry=RetryPolicy(attempts=3)).call(
                _echo(spec, READ_ONLY), {"text": "one"}
            )
    # Then the wait counts as an hour: not retried, and the message says when
    assert outcome.record.attempts == 1
    assert re.search(r"HTTP 429; it asked to retry after 3[56]\d\d(\.\d+)? s \(at ", str(outcome.error))


async def test_a_tool_schema_nested_1000_levels_gets_a_message_that_says_so(
    fake_misbehaving_url: str, key: str
) -> None:
    with pytest.raises(ServerConnectError, match="nested too deeply"):
        await list_server_tools(_spec(fake_misbehaving_url, "deep-schema", key))


async def test_invalid_json_is_reported_in_one_line_without_the_raw_bytes(fake_misbehaving_url: str, key: str) -> None:
    with pytest.raises(ServerConnectError, match="not valid JSON-RPC") as caught:
        await list_server_tools(_spec(fake_misbehaving_url, "invalid-json", key))
    assert "\n" not in str(caught.value)


async def test_a_listing_that_never_completes_names_the_call_timeout(fake_misbehaving_url: str, key: str) -> None:
    with pytest.raises(ServerConnectError, match="did not list its tools within the call timeout of 1 s"):
        await list_server_tools(_spec(fake_misbehaving_url, "trickle", key))


async def test_the_cancellation_of_a_timed_out_call_reaches_the_server_even_when_the_run_ends_right_after(
    fake_misbehaving_url: str, key: str
) -> None:
    spec = _spec(fake_misbehaving_url, "hang", key, on="tools/call")
    async with ClientPool() as pool:
        await Dispatcher(pool).call(_echo(spec, WRITES), {"text": "hi"})

    assert _seen(fake_misbehaving_url, key)[-2:] == ["tools/call", "notifications/cancelled"]


async def test_with_retries_every_send_of_a_call_cut_off_by_lost_sessions_is_one_counted_attempt(
    fake_misbehaving_url: str, key: str
) -> None:
    spec = _spec(fake_misbehaving_url, "drop", key, on="tools/call")
    policy = RetryPolicy(attempts=3, initial_wait=0.01, max_wait=0.02)
    async with ClientPool() as pool:
        outcome = await Dispatcher(pool, retry=policy).call(_echo(spec, READ_ONLY), {"text": "hi"})

    assert (outcome.record.status, outcome.record.attempts) == ("connection_error", 3)
    assert _seen(fake_misbehaving_url, key).count("tools/call") == 3


async def test_a_response_under_a_wrong_id_is_named_in_the_timeout_hint(fake_misbehaving_url: str, key: str) -> None:
    from knime_mcp.errors import ToolTimeoutError
    from knime_mcp.mcp.client import McpClient

    async with McpClient(_spec(fake_misbehaving_url, "wrong-id", key, on="tools/call")) as client:
        with pytest.raises(ToolTimeoutError) as caught:
            await client.call_tool("echo", {"text": "hi"})
    assert str(caught.value).startswith("Tool 'echo' did not answer within 1 s; the call was cancelled.")
    assert "Hint: The server did send a response, but with the id 'not-" in str(caught.value)
    assert "which matches no request it was sent: it does not follow MCP" in str(caught.value)


async def test_a_listing_answered_under_a_wrong_id_says_so(fake_misbehaving_url: str, key: str) -> None:
    with pytest.raises(ServerConnectError, match="with the id 'not-.*matches no request"):
        await list_server_tools(_spec(fake_misbehaving_url, "wrong-id", key, on="tools/list"))


async def test_a_handshake_answered_under_a_wrong_id_says_so(fake_misbehaving_url: str, key: str) -> None:
    spec = ServerSpec(
        target=fault_url(fake_misbehaving_url, "wrong-id", key=key, on="initialize"),
        timeouts=Timeouts(connect=1.0, call=1.0),
    )
    with pytest.raises(ServerConnectError, match="No MCP handshake within .* with the id 'not-.*matches no request"):
        await list_server_tools(spec)


async def test_only_a_response_to_no_request_sent_counts_as_a_wrong_id_not_a_late_or_duplicate_one() -> None:
    from mcp.shared.message import SessionMessage
    from mcp_types import JSONRPCRequest, JSONRPCResponse

    from knime_mcp.mcp.diagnostics import Diagnostics
    from knime_mcp.mcp.stream_watch import watch_streams

    def response(request_id: int | str) -> SessionMessage:
        return SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=request_id, result={}))

    to_server, sent = anyio.create_memory_object_stream[SessionMessage](10)
    from_server, received = anyio.create_memory_object_stream[SessionMessage | Exception](10)
    diagnostics = Diagnostics()
    reads, writes = watch_streams((received, to_server), diagnostics)
    for request_id in (1, 2):
        await writes.send(SessionMessage(JSONRPCRequest(jsonrpc="2.0", id=request_id, method="tools/call")))
    # the answer to 2 comes late (after its caller gave up), the answer to 1 under the id as text, then 7 and a repeat
    for item in (response(2), response("1"), ValueError("a bad frame"), response(7), response(1)):
        await from_server.send(item)
    from_server.close()

    async with reads:
        items = [item async for item in reads]
    diagnostics.close()

    assert len(items) == 5 and [sent.receive_nowait().message.id for _ in range(2)] == [1, 2]
    assert diagnostics.unmatched_id == "7"


async def test_three_schema_breaking_replies_in_a_row_leave_the_server_reachable(
    fake_misbehaving_url: str, key: str
) -> None:
    from knime_mcp.errors import ServerProtocolError
    from knime_mcp.mcp.client import McpClient

    async with McpClient(_spec(fake_misbehaving_url, "schema-breaking", key, times=3, on="tools/call")) as client:
        for _ in range(3):
            with pytest.raises(ServerProtocolError, match="Protocol violation: .* does not follow the MCP schema"):
                await client.call_tool("echo", {"text": "broken"})
        result = await client.call_tool("echo", {"text": "fine"})

    assert not result.is_error and result.content[0].text == "fine"
    assert ServerProtocolError("x").exit_code == 3 and not issubclass(ServerProtocolError, ServerConnectError)


async def test_an_oauth_challenge_is_not_hidden_by_a_later_400_and_stops_the_sse_fallback(
    fake_misbehaving_url: str, key: str
) -> None:
    from knime_mcp.errors import ServerAuthError
    from knime_mcp.mcp.client import McpClient

    with pytest.raises(ServerAuthError, match=r"sign-in with OAuth \(HTTP 401\)") as caught:
        async with McpClient(_spec(fake_misbehaving_url, "auth-then-400", key)):
            pass
    assert "does not speak MCP" not in str(caught.value)


def _failing_api_tool(base: str, key: str) -> MCPTool:
    """A read-only GET of the HTTP API's ``/flaky/<key>``, which answers 503 for the first ``times`` requests."""
    from knime_mcp.http import HttpOperation, HttpParameter

    times = HttpParameter(name="times", location="query")
    operation = HttpOperation(method="GET", path=f"/flaky/{key}", parameters=(times,))
    schema = {"type": "object", "properties": {"times": {"type": "integer"}}}
    spec = ServerSpec(target=base, name="failing-api")
    return make_tool("fail", schema, server=spec, annotations=READ_ONLY, http=operation)


@pytest.mark.parametrize("kind", ["mcp", "http-tool"])
async def test_a_server_answering_500_to_every_call_is_left_alone_after_the_threshold_not_retried_for_every_row(
    fake_misbehaving_url: str, http_api_url: str, key: str, kind: str
) -> None:
    from fixtures.http_servers import attempts
    from knime_mcp.errors import CircuitOpenError
    from knime_mcp.net.breaker import DEFAULT_BREAKER

    # Given an MCP server over Streamable HTTP, or an HTTP tool's API, that answers every call with a 5xx
    if kind == "mcp":
        tool = _echo(_spec(fake_misbehaving_url, "status", key, code=500, times=10_000, on="tools/call"), READ_ONLY)
    else:
        tool = _failing_api_tool(http_api_url, key)
    # When a loop of 50 rows calls its read-only tool, each call retried up to 3 times
    async with ClientPool() as pool:
        dispatcher = Dispatcher(pool, retry=RetryPolicy(attempts=3, initial_wait=0.01, max_wait=0.02))
        arguments = {"text": "row"} if kind == "mcp" else {"times": 10_000}
        outcomes = [await dispatcher.call(tool, arguments) for _ in range(50)]
    # Then the server is sent as many requests as the breaker's threshold, and every later row fails fast, once
    received = _seen(fake_misbehaving_url, key).count("tools/call") if kind == "mcp" else attempts(http_api_url, key)
    fast = [outcome for outcome in outcomes if isinstance(outcome.error, CircuitOpenError)]
    assert received == DEFAULT_BREAKER.threshold and fast == outcomes[-len(fast) :]
    assert len(fast) >= len(outcomes) - DEFAULT_BREAKER.threshold and {each.record.attempts for each in fast} == {1}
    assert f"after {DEFAULT_BREAKER.threshold} failures in a row (last: " in str(fast[-1].error)
    assert "HTTP 500" in str(fast[-1].error) or "HTTP 503" in str(fast[-1].error)


def test_a_success_between_5xx_answers_starts_the_count_again() -> None:
    from knime_mcp.errors import ServerBusyError
    from knime_mcp.net.breaker import Circuit

    circuit = Circuit()
    for _ in range(2):
        circuit.failed(ServerBusyError(503, None))
        circuit.failed(ServerBusyError(500, None))
        circuit.succeeded()
    circuit.check()
