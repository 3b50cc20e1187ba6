"""The fault suite seen from the Tool Caller and the agent: the same misbehaving fake server as tests/test_faults.py,
with each fault ending in an error a user can act on, every row kept in order, the run going on, and a canary secret
(credential, header and environment variable at once) appearing nowhere in outputs, logs or errors."""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest

from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer, tool_calls
from fixtures.fault_servers import fault_url
from knime_mcp.agent.loop import AgentConfig, run_agent
from knime_mcp.caller.table import CallerOptions, call_table_sync
from knime_mcp.calls.dispatch import RetryPolicy
from knime_mcp.config import AuthRef, ServerSpec, Timeouts
from knime_mcp.llm.chat_model import ChatModelConfig, build_chat_model
from knime_mcp.mcp.sync import run_sync
from knime_mcp.tools.tool import MCPTool, ToolAnnotations
from tool_factory import make_tool

CANARY = "canary-7f3a9c2e"
FAST = Timeouts(connect=10.0, call=1.0)
READ_ONLY = ToolAnnotations(read_only=True, destructive=False, idempotent=True)
NO_WAIT = RetryPolicy(attempts=2, initial_wait=0.01, max_wait=0.02)

FAULTS: dict[str, dict[str, Any]] = {
    "hang": {"on": "tools/call"},
    "drop": {"on": "tools/call"},
    "invalid-json": {"on": "tools/call"},
    "wrong-id": {"on": "tools/call"},
    "trickle": {"on": "tools/call"},
    "status": {"on": "tools/call", "code": 503, "times": 100},
}
"""Faults on ``tools/call`` only, so the session opens and each call meets the fault."""


@pytest.fixture
def canary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KNIME_MCP_CANARY", CANARY)


def _echo(base: str, mode: str, options: dict[str, Any]) -> MCPTool:
    """The fake's read-only echo, reached with the canary as bearer credential and inside a header."""
    spec = ServerSpec(
        target=fault_url(base, mode, key=uuid.uuid4().hex, **options),
        headers={"X-Trace": "${KNIME_MCP_CANARY}"},
        auth=AuthRef(kind="bearer", credential="mcp"),
        timeouts=FAST,
    )
    return make_tool("echo", server=spec, annotations=READ_ONLY)


def _credentials(name: str) -> tuple[str, str]:
    return "", CANARY


@pytest.mark.parametrize("mode", FAULTS)
def test_the_caller_keeps_every_row_in_order_through_a_fault(
    mode: str, fake_misbehaving_url: str, canary: None, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    tool = _echo(fake_misbehaving_url, mode, FAULTS[mode])
    batches: list[pa.RecordBatch] = []
    call_table_sync(
        tool,
        [pd.DataFrame({"text": [f"row {n}" for n in range(4)]})],
        batches.append,
        options=CallerOptions(on_error="column", retry=NO_WAIT, concurrency=2),
        credentials=_credentials,
    )
    rows = pa.Table.from_batches(batches).to_pandas()
    assert list(rows["text"]) == [f"row {n}" for n in range(4)]
    assert rows["Is error"].all() and rows["Error"].str.len().gt(0).all()
    assert rows["Error"].str.contains("Hint:").all()
    everything = rows.to_csv() + caplog.text
    assert CANARY not in everything


@pytest.mark.parametrize("mode", FAULTS)
def test_the_agent_tells_the_model_about_a_fault_and_goes_on(
    mode: str, fake_misbehaving_url: str, canary: None, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    tool = _echo(fake_misbehaving_url, mode, FAULTS[mode])
    script = [tool_calls(("c1", "echo", {"text": "hi"})), answer("The tool failed; here is what I know.")]
    with FakeOpenAIEndpoint(script) as endpoint:
        model = build_chat_model(ChatModelConfig(base_url=endpoint.base_url, model="fake-gpt"), CANARY)
        config = AgentConfig(retry=NO_WAIT, errors="column")
        run = run_sync(run_agent, model, [tool], "Echo hi.", config=config, credentials=_credentials, secrets=[CANARY])
        requests = json.dumps(endpoint.requests)
    assert run.failure is None
    assert run.conversation.new_messages[-1].text == "The tool failed; here is what I know."
    (entry,) = run.log
    assert entry.status in {"timeout", "connection_error", "tool_error"} and entry.error
    tool_reply = run.conversation.rows()[-2]["Content"]
    assert "failed" in tool_reply
    everything = json.dumps(run.conversation.rows(error_column=True)) + json.dumps([e.to_dict() for e in run.log])
    assert CANARY not in everything + caplog.text + requests


def test_a_server_that_dies_mid_run_leaves_every_row_with_its_error_in_column_mode(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    import sys

    from fixtures.python_servers import running_server
    from knime_mcp.calls.listing import list_server_tools

    command = [sys.executable, "-m", "knime_mcp.demo_server", "--transport", "streamable-http"]
    with running_server(command, tmp_path_factory.mktemp("dies") / "server.log") as server:
        echo = next(t for t in run_sync(list_server_tools, ServerSpec(target=server.url)).tools if t.name == "echo")
        frames = [pd.DataFrame({"text": [f"row {n}" for n in range(start, start + 50)]}) for start in (0, 50, 100)]

        def batches() -> Any:
            yield frames[0]
            server.process.terminate()
            server.process.wait(10)
            yield from frames[1:]

        out: list[pa.RecordBatch] = []
        options = CallerOptions(on_error="column", concurrency=4, retry=RetryPolicy(attempts=1))
        call_table_sync(echo, batches(), out.append, options=options)
    rows = pa.Table.from_batches(out).to_pandas()
    assert list(rows["text"]) == [f"row {n}" for n in range(150)]
    failed = rows[rows["Is error"]]
    assert len(failed) > 0 and failed["Error"].str.contains(r"\[server: ").all()
    assert failed["Error"].str.startswith("Not trying the server again").any()
