"""What servers ask of the client during an agent run and a CLI call: a tool list that changes mid-run, progress,
sampling answered by the run's own model, forms, and roots; against tests/servers/asking_server.py and npm's
server-everything, with the scripted chat model."""

from __future__ import annotations

import json
import logging
import shlex
import sys
from pathlib import Path

import anyio
import pytest
from langchain_core.messages import AIMessage

from cli_runs import run_cli as _cli
from fixtures.python_servers import SERVERS_DIR
from knime_mcp.agent.call_log import TOOLS_CHANGED
from knime_mcp.agent.loop import AgentConfig
from knime_mcp.calls.listing import list_server_tools
from knime_mcp.config import SamplingLimits, ServerRequestPolicy, ServerSpec
from knime_mcp.errors import ConfigError
from knime_mcp.tools.tool import MCPTool
from scripted_model import calls, offered, run_scripted, scripted, tool_texts

SHIFTING = [sys.executable, str(SERVERS_DIR / "shifting_server.py")]
ASKING = ServerSpec(target=shlex.join([sys.executable, str(SERVERS_DIR / "asking_server.py")]), name="asking")


def _tools(spec: ServerSpec = ASKING, prefix: str = "") -> list[MCPTool]:
    return anyio.run(lambda: list_server_tools(spec, prefix=prefix)).tools


def test_a_tool_the_server_adds_mid_run_is_offered_from_the_next_model_call_and_the_log_notes_it() -> None:
    # Given the asking server's tools under a prefix, and a model that unlocks a tool and then calls it
    model = scripted(calls(("c1", "ask_unlock", {})), calls(("c2", "ask_unlocked", {})), AIMessage("Done."))
    # When the agent runs
    run = run_scripted(model, _tools(prefix="ask"), config=AgentConfig(policy=AgentConfig().policy))
    # Then the new tool was offered, with the table's prefix, from the second model call on, and it ran
    assert "ask_unlocked" not in offered(model, 0) and "ask_unlocked" in offered(model, 1)
    assert [(entry.tool, entry.status) for entry in run.log] == [
        ("ask_unlock", "ok"),
        (TOOLS_CHANGED, "tools_changed"),
        ("ask_unlocked", "ok"),
    ]
    note = run.log[1]
    assert note.server == "asking" and json.loads(note.result or "") == {"added": ["ask_unlocked"], "removed": []}
    assert "unlocked tool ran" in tool_texts(run)[-1]


def test_a_long_tools_progress_reaches_the_runs_progress_message() -> None:
    model = scripted(calls(("c1", "slow", {})), AIMessage("Done."))
    messages: list[str] = []
    run_scripted(model, _tools(), progress=lambda fraction, message: messages.append(message))
    assert "Model call 1 of at most 25; tool slow: 1 of 3 (33%): step 1" in messages
    assert messages[-1] == "Model call 2 of at most 25"


@pytest.mark.parametrize("allowed", [False, True])
def test_sampling_is_answered_by_the_runs_model_only_when_allowed(allowed: bool) -> None:
    # Given a model whose second reply answers the server's sampling request, when that is allowed
    replies = [calls(("c1", "summarize", {"text": "a long text"})), AIMessage("tiny"), AIMessage("Done.")]
    model = scripted(*replies if allowed else [replies[0], replies[2]])
    requests = ServerRequestPolicy(sampling=SamplingLimits() if allowed else None)
    # When the agent runs
    run = run_scripted(model, _tools(), config=AgentConfig(server_requests=requests))
    # Then the tool got the model's answer, or the call failed saying sampling is declined
    if allowed:
        assert run.log[0].status == "ok" and "Summary: tiny" in tool_texts(run)[0]
    else:
        assert run.log[0].status == "tool_error" and "declines sampling requests" in (run.log[0].error or "")
    assert run.conversation.new_messages[-1].text == "Done."


@pytest.mark.parametrize("handshake", [None, "initialize"])
def test_a_sampling_prompt_over_the_size_cap_is_declined_without_asking_the_model_and_the_server_hears_why(
    handshake: str | None, caplog: pytest.LogCaptureFixture
) -> None:
    # Given a tool that asks the client's model about 200,000 characters, and sampling allowed with default limits
    spec = ServerSpec(target=shlex.join(SHIFTING), name="shifting", handshake=handshake)  # type: ignore[arg-type]
    model = scripted(calls(("c1", "oversample", {"size": 200_000})), AIMessage("Done."))
    config = AgentConfig(server_requests=ServerRequestPolicy(sampling=SamplingLimits()))
    # When the agent runs
    with caplog.at_level(logging.WARNING, logger="knime_mcp"):
        run = run_scripted(model, _tools(spec), config=config)
    # Then the chat model was never asked for the sampling answer, and the decline says why, in the log too
    assert len(model.requests) == 2 and run.conversation.new_messages[-1].text == "Done."
    reason = "prompt of 200,011 bytes; knime-mcp sends a model at most 100,000 bytes"
    assert reason in caplog.text
    if handshake is None:  # 2026-07-28: the decline ends the tool's input-required round, failing the call
        assert run.log[0].status == "tool_error" and reason in (run.log[0].error or "")
    else:  # the older protocol: the server gets the error answer to its request and goes on
        assert run.log[0].status == "ok" and f"Declined: The request has a {reason}" in tool_texts(run)[0]


def test_sampling_limits_below_one_are_refused() -> None:
    with pytest.raises(ConfigError, match="at least 1"):
        SamplingLimits(max_prompt_bytes=0)


def test_a_declined_form_reaches_the_model_as_a_failed_call_and_defaults_answer_it_when_allowed() -> None:
    model = scripted(calls(("c1", "confirm", {})), AIMessage("Done."))
    declined = run_scripted(model, _tools())
    assert declined.log[0].status == "tool_error" and "asked for input" in tool_texts(declined)[0]
    model = scripted(calls(("c1", "confirm", {})), AIMessage("Done."))
    defaults = AgentConfig(server_requests=ServerRequestPolicy(elicitation="defaults"))
    answered = run_scripted(model, _tools(), config=defaults)
    assert answered.log[0].status == "ok" and "copies=2" in tool_texts(answered)[0]


# -- the CLI --------------------------------------------------------------------------------------------------------


def test_call_prints_a_progress_line_per_notification_on_stderr(
    capsys: pytest.CaptureFixture[str], everything_http_url: str
) -> None:
    arguments = '{"duration": 0.2, "steps": 2}'
    code, out, err = _cli(capsys, "call", everything_http_url, "trigger-long-running-operation", "--args", arguments)
    assert code == 0 and "Long running operation completed" in out
    assert err.splitlines() == ["Progress: 1 of 2 (50%)", "Progress: 2 of 2 (100%)"]


def test_call_with_roots_offers_the_folders_to_a_stdio_server(
    capsys: pytest.CaptureFixture[str], everything_stdio_command: list[str], tmp_path: Path
) -> None:
    code, out, _ = _cli(
        capsys, "call", "--roots", str(tmp_path), "--", *everything_stdio_command, "--", "get-roots-list"
    )
    assert code == 0 and tmp_path.as_uri() in json.loads(out)["content"][0]["text"]


@pytest.mark.parametrize(("mode", "code"), [("decline", 4), ("defaults", 0)])
def test_call_answers_a_form_with_its_defaults_only_when_told(
    capsys: pytest.CaptureFixture[str], mode: str, code: int
) -> None:
    exit_code, out, err = _cli(capsys, "call", "--elicitation", mode, "--", *ASKING.command, "--", "confirm")
    assert exit_code == code
    if code == 0:
        assert json.loads(out)["content"][0]["text"] == "Confirmed: proceed=True, copies=2."
    else:
        assert "asked for input, which knime-mcp declined" in err
