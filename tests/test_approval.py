"""Approval before a call, in the core: the policy names the calls a person must approve, an approver answers, and
the run approves (perhaps with edited arguments), denies (the model is told why), allows a tool for the session, or
stops with the call awaiting approval and resumes it when run again with the decision.

Against the real ledger test server over Streamable HTTP, whose ledger shows from the server's side whether a call
was made, and how often; the model is the scripted one.
"""

from __future__ import annotations

import json
from datetime import datetime
from secrets import token_hex
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from fixtures.ledger import ledger
from fixtures.ledger import ledger_tools as listed_ledger_tools
from knime_mcp.agent.approval import ApprovalPolicy, ApprovalRequest, Decision, SessionApprover
from knime_mcp.agent.loop import AgentConfig, run_agent
from knime_mcp.calls.dispatch import LocalTool
from knime_mcp.conversation import Conversation, messages_from_rows
from knime_mcp.errors import ConfigError
from knime_mcp.mcp.sync import run_sync
from knime_mcp.tools.policy import ToolPolicy
from knime_mcp.tools.results import TextPart, ToolResult
from knime_mcp.tools.tool import MCPTool
from scripted_model import calls, scripted, tool_texts


@pytest.fixture(scope="module")
def ledger_tools(ledger_server_url: str) -> list[MCPTool]:
    return listed_ledger_tools(ledger_server_url)


class Person:
    """An approver answering from a script, recording every request it was shown."""

    def __init__(self, *decisions: Decision | None) -> None:
        self._decisions = list(decisions)
        self.asked: list[ApprovalRequest] = []

    async def decide(self, request: ApprovalRequest) -> Decision | None:
        self.asked.append(request)
        return self._decisions.pop(0)


def _key() -> str:
    return f"k-{token_hex(4)}"


def _tool(tools: list[MCPTool], name: str) -> MCPTool:
    return next(tool for tool in tools if tool.name == name)


def _run(model: Any, tools: list[Any], *, approval: ApprovalPolicy, approver: Any, **kwargs: Any) -> Any:
    """A run whose tool policy allows every tool: what is asked about is the approval policy's to say."""
    config = AgentConfig(approval=approval, policy=ToolPolicy(destructive="allow"))
    return run_sync(run_agent, model, tools, "Go.", config=config, approver=approver, **kwargs)


async def _workflow_run(arguments: dict[str, Any]) -> ToolResult:
    return ToolResult(content=[TextPart("done")])


WORKFLOW = LocalTool(name="wf_tool", description="A workflow.", input_schema={"type": "object"}, run=_workflow_run)


def test_each_rule_names_the_tools_it_asks_about(ledger_tools: list[MCPTool]) -> None:
    def asked(policy: ApprovalPolicy) -> list[str]:
        return [tool.name for tool in [*ledger_tools, WORKFLOW] if policy.needs_approval(tool)]

    assert asked(ApprovalPolicy()) == []
    assert asked(ApprovalPolicy(destructive=True)) == ["delete_entry"]
    assert asked(ApprovalPolicy(unannotated=True)) == ["write_note"]
    assert asked(ApprovalPolicy(pattern="STAMP|^wf_")) == ["stamp", "wf_tool"]
    assert asked(ApprovalPolicy(everything=True)) == ["delete_entry", "stamp", "write_note", "ledger", "wf_tool"]
    with pytest.raises(ConfigError, match="not a valid regular expression"):
        ApprovalPolicy(pattern="(")


def test_an_approved_call_is_made_once_and_the_log_keeps_the_decision_and_its_time(
    ledger_tools: list[MCPTool],
) -> None:
    key = _key()
    person = Person(Decision("approve"))
    model = scripted(calls(("c1", "delete_entry", {"key": key, "entry": "e1"})), AIMessage("Deleted."))
    run = _run(model, ledger_tools, approval=ApprovalPolicy(destructive=True), approver=person)

    assert ledger(ledger_tools, key) == ["delete_entry e1"]
    [request] = person.asked
    assert (request.call_id, request.tool, request.server, request.kind) == ("c1", "delete_entry", "ledger", "mcp")
    assert request.hints == {
        "read_only": False,
        "destructive": True,
        "idempotent": True,
        "open_world": False,
        "annotated": True,
    }
    assert request.arguments == {"key": key, "entry": "e1"}
    [entry] = run.log
    assert (entry.status, entry.approval.choice) == ("ok", "approve")
    assert datetime.fromisoformat(entry.approval.time).tzinfo is not None
    assert entry.to_dict()["approval"] == "approve"
    assert run.awaiting == []


def test_calls_the_policy_does_not_name_run_without_asking(ledger_tools: list[MCPTool]) -> None:
    key = _key()
    person = Person()
    model = scripted(calls(("c1", "stamp", {"key": key, "text": "a"})), AIMessage("Done."))
    run = _run(model, ledger_tools, approval=ApprovalPolicy(destructive=True), approver=person)
    assert person.asked == []
    assert ledger(ledger_tools, key) == ["stamp a"]
    assert run.log[0].approval is None


def test_edited_arguments_are_sent_validated_and_the_model_is_told(ledger_tools: list[MCPTool]) -> None:
    key = _key()
    person = Person(Decision("approve", arguments={"key": key, "text": "edited"}), Decision("approve", arguments={}))
    model = scripted(
        calls(("c1", "write_note", {"key": key, "text": "asked"})),
        calls(("c2", "write_note", {"key": key, "text": "again"})),
        AIMessage("Done."),
    )
    run = _run(model, ledger_tools, approval=ApprovalPolicy(unannotated=True), approver=person)

    assert ledger(ledger_tools, key) == ["write_note edited"]
    first, second = tool_texts(run)
    assert "changed its arguments" in first and '"edited"' in first and "noted 'edited'" in first
    assert "Invalid arguments" in second
    assert [entry.status for entry in run.log] == ["ok", "invalid_arguments"]
    assert json.loads(run.log[0].record.arguments_json) == {"key": key, "text": "edited"}


def test_a_denied_call_is_not_made_and_the_model_gets_the_reason(ledger_tools: list[MCPTool]) -> None:
    key = _key()
    person = Person(Decision("deny", reason="not on a Friday"))
    model = scripted(calls(("c1", "delete_entry", {"key": key, "entry": "e1"})), AIMessage("Fine."))
    run = _run(model, ledger_tools, approval=ApprovalPolicy(destructive=True), approver=person)

    assert ledger(ledger_tools, key) == []
    [message] = [m for m in run.conversation.new_messages if isinstance(m, ToolMessage)]
    assert message.status == "error" and "denied" in message.text and "not on a Friday" in message.text
    [entry] = run.log
    assert (entry.status, entry.approval.choice) == ("denied", "deny")
    assert run.conversation.new_messages[-1].text == "Fine."
    assert run.failure is None


def test_allow_for_the_session_approves_later_calls_of_the_tool_without_asking(ledger_tools: list[MCPTool]) -> None:
    key = _key()
    person = Person(Decision("allow_session"), Decision("deny"))
    approver = SessionApprover(person)
    model = scripted(
        calls(("c1", "write_note", {"key": key, "text": "1"})),
        calls(("c2", "write_note", {"key": key, "text": "2"}), ("c3", "delete_entry", {"key": key, "entry": "x"})),
        AIMessage("Done."),
    )
    policy = ApprovalPolicy(everything=True)
    run = _run(model, ledger_tools, approval=policy, approver=approver)
    assert [request.call_id for request in person.asked] == ["c1", "c3"]
    assert ledger(ledger_tools, key) == ["write_note 1", "write_note 2"]
    assert [(e.status, e.approval.choice) for e in run.log] == [
        ("ok", "allow_session"),
        ("ok", "allow_session"),
        ("denied", "deny"),
    ]
    # The same approver in the next run of the session (a chat's next turn) still allows the tool.
    model = scripted(calls(("c4", "write_note", {"key": key, "text": "3"})), AIMessage("Done."))
    _run(model, ledger_tools, approval=policy, approver=approver)
    assert len(person.asked) == 2 and ledger(ledger_tools, key)[-1] == "write_note 3"


def test_a_run_nobody_can_approve_stops_awaiting_and_resumes_exactly_that_call(ledger_tools: list[MCPTool]) -> None:
    key = _key()
    policy = ApprovalPolicy(destructive=True)
    first = scripted(
        calls(("c1", "delete_entry", {"key": key, "entry": "e1"}), ("c2", "stamp", {"key": key, "text": "s"}))
    )
    paused = _run(first, ledger_tools, approval=policy, approver=Person(None))

    # No call of the message was made: the one awaiting approval, nor the one that needs none.
    assert ledger(ledger_tools, key) == []
    last = paused.conversation.new_messages[-1]
    assert isinstance(last, AIMessage) and [call["id"] for call in last.tool_calls] == ["c1", "c2"]
    assert [(e.tool_call_id, e.status, e.approval.choice) for e in paused.log] == [
        ("c1", "awaiting_approval", "awaiting")
    ]
    assert [request.call_id for request in paused.awaiting] == ["c1"]
    assert paused.failure is None

    # The conversation as the node outputs it and reads it back.
    history = messages_from_rows(paused.conversation.rows())
    still = _run(scripted(), ledger_tools, approval=policy, approver=Person(None), history=history)
    assert ledger(ledger_tools, key) == [] and [r.call_id for r in still.awaiting] == ["c1"]
    assert still.conversation.new_messages == []

    second = scripted(AIMessage("Deleted and stamped."))
    resumed = _run(second, ledger_tools, approval=policy, approver=Person(Decision("approve")), history=history)
    assert sorted(ledger(ledger_tools, key)) == ["delete_entry e1", "stamp s"]
    assert [m.tool_call_id for m in resumed.conversation.new_messages if isinstance(m, ToolMessage)] == ["c1", "c2"]
    assert "Go." not in [m.text for m in resumed.conversation.new_messages]
    assert [(e.tool_call_id, e.status) for e in resumed.log] == [("c1", "ok"), ("c2", "ok")]
    assert resumed.awaiting == []
    # What the model was sent next: every call of the message answered.
    sent = second.requests[0][0]
    assert [m.tool_call_id for m in sent if isinstance(m, ToolMessage)] == ["c1", "c2"]

    # Run again on the finished conversation: nothing is resumed, no call is made twice.
    done = messages_from_rows(Conversation(None, [*history, *resumed.conversation.new_messages]).rows())
    third = scripted(AIMessage("Nothing to do."))
    _run(third, ledger_tools, approval=policy, approver=Person(), history=done)
    assert sorted(ledger(ledger_tools, key)) == ["delete_entry e1", "stamp s"]


def test_calls_of_one_reply_that_share_an_id_are_each_decided_and_a_denied_one_is_never_made(
    ledger_tools: list[MCPTool],
) -> None:
    # Given a model reply whose two calls share the id c1: the first deletes, the second stamps
    key = _key()
    person = Person(Decision("deny", reason="keep it"), Decision("approve"))
    model = scripted(
        calls(("c1", "delete_entry", {"key": key, "entry": "e1"}), ("c1", "stamp", {"key": key, "text": "s"})),
        AIMessage("Stamped."),
    )
    # When a person denies the first and approves the second
    run = _run(model, ledger_tools, approval=ApprovalPolicy(everything=True), approver=person)
    # Then only the approved call reached the server: the approval of one never runs the other
    assert ledger(ledger_tools, key) == ["stamp s"]
    # And each call was asked about, logged and answered under an id of its own, which the model's message carries
    ids = [request.call_id for request in person.asked]
    assert ids[0] == "c1" and len(set(ids)) == 2
    assert [(e.tool_call_id, e.tool, e.status, e.approval.choice) for e in run.log] == [
        (ids[0], "delete_entry", "denied", "deny"),
        (ids[1], "stamp", "ok", "approve"),
    ]
    asked = next(m for m in run.conversation.new_messages if isinstance(m, AIMessage) and m.tool_calls)
    assert [call["id"] for call in asked.tool_calls] == ids
    replies = [m for m in run.conversation.new_messages if isinstance(m, ToolMessage)]
    assert [(m.tool_call_id, m.status) for m in replies] == [(ids[0], "error"), (ids[1], "success")]
    assert "keep it" in replies[0].text


def test_resumed_calls_that_share_an_id_are_decided_by_their_place_in_the_message(ledger_tools: list[MCPTool]) -> None:
    # Given a conversation (data) that ends with two calls awaiting approval under one id
    key = _key()
    history = [
        HumanMessage("Go."),
        calls(("c1", "delete_entry", {"key": key, "entry": "e1"}), ("c1", "stamp", {"key": key, "text": "s"})),
    ]
    # When a person denies the first and approves the second
    person = Person(Decision("deny"), Decision("approve"))
    run = _run(scripted(AIMessage("Stamped.")), ledger_tools, approval=ApprovalPolicy(everything=True),
               approver=person, history=history)  # fmt: skip
    # Then each decision held for its own call only
    assert ledger(ledger_tools, key) == ["stamp s"]
    assert [(e.tool, e.status) for e in run.log] == [("delete_entry", "denied"), ("stamp", "ok")]


def test_an_approval_column_deciding_by_an_id_that_several_awaiting_calls_share_is_a_clear_error() -> None:
    # Given a conversation table (data) whose last message has two calls awaiting approval under one id
    import pyarrow as pa

    from knime_mcp.agent.approval_column import APPROVAL, table_approver

    paused = calls(("c1", "delete_entry", {"entry": "e1"}), ("c1", "stamp", {"text": "s"}))
    rows = Conversation(None, [HumanMessage("Go."), paused]).rows()
    decided = [{**row, APPROVAL: None} for row in rows[:-1]] + [{**rows[-1], APPROVAL: '{"c1": "approve"}'}]
    # When its Approval column decides by that id, Then it is refused: the decision cannot say which call it means
    with pytest.raises(ConfigError, match="'c1'.*2 calls"):
        table_approver(pa.Table.from_pylist(decided), messages_from_rows(rows))


@pytest.mark.parametrize(
    "name",
    [
        "d\u0435lete_all",
        "D\u0415L\u0415T\u0415",
        "de\u0399ete",
        "deIete",
        "del\u200bete",
        "\uff44\uff45\uff4c\uff45\uff54\uff45",
        "\U0001d41d\U0001d41e\U0001d425\U0001d41e\U0001d42d\U0001d41e",
    ],
    ids=["cyrillic", "upper-cyrillic", "greek-iota", "ascii-capital-i", "zero-width", "fullwidth", "math-bold"],
)
def test_a_name_pattern_finds_a_tool_whose_name_only_looks_different(name: str) -> None:
    tool = LocalTool(name=name, description="", input_schema={"type": "object"}, run=_workflow_run)
    assert ApprovalPolicy(pattern="^delete").needs_approval(tool)
    assert not ApprovalPolicy(pattern="^remove").needs_approval(tool)


def test_a_server_tool_named_with_a_lookalike_letter_is_asked_about_and_a_denial_keeps_it_from_running() -> None:
    # Given a server whose read-only-claiming `dеlete_all` has a Cyrillic е, and a pattern asking about delete tools
    import shlex
    import sys

    from fixtures.python_servers import SERVERS_DIR
    from knime_mcp.calls.listing import list_server_tools
    from knime_mcp.config import ServerSpec

    spec = ServerSpec(target=shlex.join([sys.executable, str(SERVERS_DIR / "lookalike_server.py")]), name="lookalike")
    [tool] = run_sync(list_server_tools, spec).tools
    person = Person(Decision("deny"))
    model = scripted(calls(("c1", tool.name, {})), AIMessage("Left alone."))
    # When the model calls it
    run = _run(model, [tool], approval=ApprovalPolicy(pattern="delete"), approver=person)
    # Then the person is asked, and the denied call is not made
    assert [request.tool for request in person.asked] == [tool.name]
    assert [(entry.status, entry.approval.choice) for entry in run.log] == [("denied", "deny")]
    assert "everything deleted" not in "\n".join(tool_texts(run))
