"""The agent's tool search with deferred loading, end to end: a run over `tests/servers/many_tools_server.py` (3,003
tools over stdio, more than the tool budget) with the scripted chat model, in `run_agent`, a chat session and the
CLI's `agent`: the model is offered the search tool and the pinned tools, a tool it found is offered from its next
call on and runs on the real server, and policy, approval, the tool-call log and tool list changes apply to it."""

from __future__ import annotations

import io
import json
import logging
import shlex
import sys
import time
from dataclasses import replace
from typing import Any

import anyio
import pytest
from langchain_core.messages import AIMessage

from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer, tool_calls
from fakes.scripted_providers import ScriptedEndpoint
from fakes.scripted_providers import answer as scripted_answer
from fakes.scripted_providers import tool_calls as scripted_tool_calls
from fixtures.python_servers import SERVERS_DIR
from knime_mcp.agent.approval import ApprovalPolicy, ApprovalRequest, Decision
from knime_mcp.agent.chat_session import ChatSession
from knime_mcp.agent.config import AgentConfig, ToolBudget
from knime_mcp.agent.loop import AgentRun
from knime_mcp.agent.tool_offer import SEARCH_TOOL
from knime_mcp.calls.listing import list_server_tools
from knime_mcp.cli.main import main
from knime_mcp.config import ServerSpec
from knime_mcp.tools.policy import ToolPolicy
from knime_mcp.tools.tool import MCPTool
from scripted_model import calls, offered, run_scripted, scripted, tool_texts

MANY_COMMAND = [sys.executable, str(SERVERS_DIR / "many_tools_server.py")]
MANY = ServerSpec(target=shlex.join(MANY_COMMAND), name="many")
CELSIUS = "change degrees celsius into fahrenheit"

_PATIENCE = 60.0
"""Seconds a chat test waits for its turn to end before it fails (a wait for readiness, not a timing)."""


def _tools(spec: ServerSpec) -> list[MCPTool]:
    return anyio.run(lambda: list_server_tools(spec)).tools


@pytest.fixture(scope="module")
def many_tools() -> list[MCPTool]:
    return _tools(MANY)


def _search(call_id: str, query: str) -> AIMessage:
    return calls((call_id, SEARCH_TOOL, {"query": query}))


def _found(run: AgentRun, entry: int) -> list[str]:
    """The tools a search of the run's log found."""
    result = json.loads(run.log[entry].result or "{}")
    return list(result["structured"]["tools"])


def test_a_table_within_the_budget_is_offered_whole_without_a_search_tool(caplog: pytest.LogCaptureFixture) -> None:
    # Given a server whose few tools fit the tool budget (the destructive one is blocked by the policy)
    tools = _tools(ServerSpec(target=shlex.join([*MANY_COMMAND, "--count", "3"]), name="many"))
    model = scripted(AIMessage("Done."))
    # When the agent runs
    with caplog.at_level(logging.INFO, logger="knime_mcp"):
        run = run_scripted(model, tools)
    # Then every allowed tool is offered as it is, in table order, and nothing is said about a search
    allowed = [tool.name for tool in tools if tool.name != "purge_archive"]
    assert offered(model, 0) == allowed and SEARCH_TOOL not in allowed
    assert not [line for line in run.warnings if "budget" in line]
    assert not [message for message in caplog.messages if "search" in message]


def test_past_the_budget_the_model_searches_and_calls_the_tool_it_found_on_the_server(
    many_tools: list[MCPTool], caplog: pytest.LogCaptureFixture
) -> None:
    # Given more tools than the budget, and a model that searches, then calls what it found
    model = scripted(
        _search("c1", CELSIUS), calls(("c2", "convert_temperature", {"value": 30, "unit": "C"})), AIMessage("86 °F.")
    )
    # When the agent runs
    with caplog.at_level(logging.INFO, logger="knime_mcp"):
        run = run_scripted(model, many_tools)
    # Then the model is first offered only the search tool, then the tool it found, with its own schema
    assert offered(model, 0) == [SEARCH_TOOL]
    assert offered(model, 1) == offered(model, 2) == [SEARCH_TOOL, "convert_temperature"]
    (spec,) = [spec for spec in model.requests[1][1] or [] if spec["function"]["name"] == "convert_temperature"]
    assert set(spec["function"]["parameters"]["properties"]) == {"value", "unit"}
    assert "<tool-description" in spec["function"]["description"]
    # And the search's answer names the tool, fenced as tool output; the call reached the real server
    search_text, convert_text = tool_texts(run)
    assert search_text.startswith("<tool-output") and "- convert_temperature: Convert a temperature" in search_text
    assert "86.0 °F" in convert_text
    # And the log shows the search like a call (query in the arguments, tools found in the result), then the call
    search, convert = run.log
    assert (search.tool, search.kind, search.server, search.status) == (SEARCH_TOOL, "tool search", None, "ok")
    assert json.loads(search.record.arguments_json) == {"query": CELSIUS} and "convert_temperature" in search.result
    assert (convert.tool, convert.kind, convert.server, convert.status) == ("convert_temperature", "MCP", "many", "ok")
    # And the KNIME log (not a warning) says the model searches
    assert not [line for line in run.warnings if "budget" in line]
    assert any(
        f"{len(many_tools) - 1:,} tools are more than the tool budget of 128 tools" in m for m in caplog.messages
    )


def test_pinned_tools_are_offered_from_the_start_next_to_the_search_tool(many_tools: list[MCPTool]) -> None:
    model = scripted(calls(("c1", "hr_count_orders", {"query": "open"})), AIMessage("Done."))
    config = AgentConfig(tool_budget=ToolBudget(pinned="^hr_count_(orders|tickets)$"))
    run = run_scripted(model, many_tools, config=config)
    assert offered(model, 0) == ["hr_count_orders", "hr_count_tickets", SEARCH_TOOL]
    assert tool_texts(run)[0].count("hr_count_orders ran with {'query': 'open'}") == 1


def test_a_tool_the_policy_blocks_is_never_found_nor_run(many_tools: list[MCPTool]) -> None:
    # Given the default policy (destructive tools blocked) and a deny-list, and a model searching for both
    model = scripted(
        _search("c1", "purge: delete every archived record for good"),
        _search("c2", CELSIUS),
        calls(("c3", "purge_archive", {}), ("c4", "convert_temperature", {"value": 1, "unit": "C"})),
        AIMessage("Done."),
    )
    config = AgentConfig(policy=ToolPolicy(deny="^convert_"))
    run = run_scripted(model, many_tools, config=config)
    # Then neither search finds them, nor can they be called by name: the model is told to search
    assert "purge_archive" not in _found(run, 0) and "convert_temperature" not in _found(run, 1)
    assert [entry.status for entry in run.log[2:]] == ["unknown_tool", "unknown_tool"]
    assert f"with {SEARCH_TOOL}" in tool_texts(run)[2]
    assert "purge_archive" not in offered(model, 3) and "convert_temperature" not in offered(model, 3)


class _Person:
    """An approver that denies every call, recording what it was asked."""

    def __init__(self) -> None:
        self.asked: list[ApprovalRequest] = []

    async def decide(self, request: ApprovalRequest) -> Decision | None:
        self.asked.append(request)
        return Decision("deny", None, "not now")


def test_a_found_tool_is_asked_about_like_an_offered_one_and_a_search_is_never_asked_about(
    many_tools: list[MCPTool],
) -> None:
    # Given a person asked about every call, who denies, and a model that searches, then calls what it found
    model = scripted(
        _search("c1", CELSIUS), calls(("c2", "convert_temperature", {"value": 30, "unit": "C"})), AIMessage("OK.")
    )
    person = _Person()
    config = AgentConfig(approval=ApprovalPolicy(everything=True))
    run = run_scripted(model, many_tools, config=config, approver=person)
    # Then the search runs without asking (it reaches no server), and the call of the tool found waits for the person
    (asked,) = person.asked
    assert (asked.tool, asked.server) == ("convert_temperature", "many")
    assert [entry.status for entry in run.log] == ["ok", "denied"] and "not now" in tool_texts(run)[1]


def test_a_tool_called_by_its_exact_name_before_it_was_found_runs_and_is_offered_from_then_on(
    many_tools: list[MCPTool],
) -> None:
    model = scripted(
        calls(("c1", "convert_temperature", {"value": 212, "unit": "F"}), ("c2", "no_such_tool", {})),
        AIMessage("100 °C."),
    )
    run = run_scripted(model, many_tools)
    assert [entry.status for entry in run.log] == ["ok", "unknown_tool"]
    assert "100.0 °C" in tool_texts(run)[0]
    assert f"Find the tool for what you want to do with {SEARCH_TOOL}" in tool_texts(run)[1]
    assert offered(model, 1) == [SEARCH_TOOL, "convert_temperature"]


def test_a_found_tool_the_server_removes_is_no_longer_offered_and_a_new_one_can_be_found() -> None:
    # Given a model that finds the temperature tool, then has the server replace it by a Morse code tool (the
    # low-level server says so on the older protocol's handshake)
    many_tools = _tools(replace(MANY, handshake="initialize"))
    model = scripted(
        _search("c1", CELSIUS),
        calls(("c2", "reshape", {})),
        _search("c3", "spell a text in morse code"),
        calls(("c4", "translate_morse", {"text": "sos"})),
        AIMessage("... --- ..."),
    )
    run = run_scripted(model, many_tools)
    # Then after the change, the removed tool is no longer offered, and the new one is found and runs
    assert "convert_temperature" in offered(model, 1)
    assert "convert_temperature" not in offered(model, 2) and "reshape" in offered(model, 2)
    assert _found(run, 3)[0] == "translate_morse" and "translate_morse" in offered(model, 4)
    assert tool_texts(run)[-1].count("... --- ...") == 1
    assert [entry.tool for entry in run.log][1:3] == ["reshape", "tools/list_changed"]


def test_the_chat_shows_a_search_as_a_call_and_a_tool_found_stays_offered_in_later_turns(
    many_tools: list[MCPTool],
) -> None:
    # Given a chat whose model searches in the first turn and only answers in the second
    model = scripted(_search("c1", CELSIUS), AIMessage("Found it."), AIMessage("Still here."))
    with ChatSession(model, many_tools, config=AgentConfig()) as session:
        session.send("Which tool converts temperatures?")
        events = _turn_events(session, 1)
        session.send("Thanks.")
        _turn_events(session, 2)
    # Then the chat shows the search as a call: its query as the arguments, the tools found as the result
    (start,) = [event for event in events if event["type"] == "tool_start"]
    (end,) = [event for event in events if event["type"] == "tool_end"]
    assert (start["tool"], start["kind"], start["server"], start["arguments"]) == (
        SEARCH_TOOL, "search", "", {"query": CELSIUS},
    )  # fmt: skip
    assert end["status"] == "ok" and "convert_temperature: Convert a temperature" in end["text"]
    # And the tool found is offered from the next model call on, in the next turn too
    assert offered(model, 0) == [SEARCH_TOOL]
    assert offered(model, 1) == offered(model, 2) == [SEARCH_TOOL, "convert_temperature"]


def _turn_events(session: ChatSession, turns: int) -> list[dict[str, Any]]:
    """The chat's events once ``turns`` turns ended."""
    deadline = time.monotonic() + _PATIENCE
    while sum(event["type"] == "turn_end" for event in session.events()) < turns:
        assert time.monotonic() < deadline, "gave up waiting for the turn to end"
        time.sleep(0.01)
    return session.events()


def test_the_cli_agent_takes_a_tool_budget_and_pinned_tools() -> None:
    # Given a model that searches, then calls what it found
    script = [
        tool_calls(("c1", SEARCH_TOOL, {"query": CELSIUS})),
        tool_calls(("c2", "convert_temperature", {"value": 0, "unit": "C"})),
        answer("32 °F."),
    ]
    with FakeOpenAIEndpoint(script) as endpoint:
        out, err = io.StringIO(), io.StringIO()
        code = main(
            [
                "agent", "--base-url", endpoint.base_url, "--model", "fake", shlex.join(MANY_COMMAND),
                "--tool-budget", "10", "--tool-budget-bytes", "20000", "--pin", "^crm_get_(orders|books)$",
                "--prompt", "What is 0 °C in °F?", "--format", "json",
            ],
            out=out,
            err=err,
        )  # fmt: skip
    # Then the model is offered the pinned tools and the search tool, then the tool found, and the call is made
    assert code == 0, err.getvalue()
    names = [[tool["function"]["name"] for tool in request["tools"]] for request in endpoint.requests]
    assert names[0] == ["crm_get_orders", "crm_get_books", SEARCH_TOOL]
    assert names[1] == names[2] == [*names[0], "convert_temperature"]
    printed = json.loads(out.getvalue())
    assert [(entry["tool"], entry["kind"]) for entry in printed["tool_calls"]] == [
        (SEARCH_TOOL, "tool search"), ("convert_temperature", "MCP"),
    ]  # fmt: skip


def test_the_cli_refuses_a_tool_budget_below_its_minimum() -> None:
    out, err = io.StringIO(), io.StringIO()
    code = main(["agent", "--model", "m", "--tool-budget", "1", "--prompt", "Hi"], out=out, err=err)
    assert code != 0 and "at least 2 tools" in err.getvalue()


def test_the_cli_chat_takes_the_same_options_and_shows_a_search_as_a_call(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a chat over the many tools with a small budget, and a person asking once, then leaving
    replies = [
        scripted_tool_calls(("c1", SEARCH_TOOL, {"query": CELSIUS})),
        scripted_tool_calls(("c2", "convert_temperature", {"value": 10, "unit": "C"})),
        scripted_answer("50 °F."),
    ]
    monkeypatch.setattr(sys, "stdin", io.StringIO("What is 10 °C in °F?\n/exit\n"))
    with ScriptedEndpoint("ollama", replies) as endpoint:
        out, err = io.StringIO(), io.StringIO()
        code = main(
            [
                "chat", shlex.join(MANY_COMMAND), "--provider", "ollama", "--base-url", endpoint.base_url,
                "--model", "llama3.2", "--tool-budget", "3", "--pin", "^crm_list_orders$",
            ],
            out=out,
            err=err,
        )  # fmt: skip
    # Then the terminal shows the search as a call with its query and the tools found, then the call of one
    assert code == 0, err.getvalue()
    shown = out.getvalue()
    assert f'[calling {SEARCH_TOOL} with {{"query": "{CELSIUS}"}}]' in shown
    assert "- convert_temperature: Convert a temperature" in shown and "50.0 °F" in shown
    names = [[tool["function"]["name"] for tool in request.body["tools"]] for request in endpoint.received]
    assert names[0] == ["crm_list_orders", SEARCH_TOOL] and names[1][-1] == "convert_temperature"
