"""``knime-mcp agent --approve all|none|ask`` with ``--ask-*`` choosing the calls that need approval, in-process,
against the real ledger test server (whose ledger shows from the server's side whether a call was made) and the
scripted OpenAI-compatible endpoint on 127.0.0.1; ``ask`` reads its answers from stdin."""

from __future__ import annotations

import io
import json
from secrets import token_hex

import pytest

from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer, tool_calls
from fixtures.ledger import ledger
from fixtures.ledger import ledger_tools as listed_ledger_tools
from knime_mcp.cli.main import main
from knime_mcp.tools.tool import MCPTool


@pytest.fixture(scope="module")
def ledger_tools(ledger_server_url: str) -> list[MCPTool]:
    return listed_ledger_tools(ledger_server_url)


def _agent(url: str, script: list, *flags: str) -> tuple[int, dict, str, FakeOpenAIEndpoint]:
    out, err = io.StringIO(), io.StringIO()
    with FakeOpenAIEndpoint(script) as endpoint:
        argv = ["agent", "--base-url", endpoint.base_url, "--model", "fake", url, "--prompt", "Go.", "--format", "json"]
        code = main([*argv, "--destructive", "allow", *flags], out=out, err=err)
    return code, json.loads(out.getvalue() or "{}"), err.getvalue(), endpoint


def _told(endpoint: FakeOpenAIEndpoint, call_id: str) -> str:
    return next(m for m in endpoint.requests[1]["messages"] if m.get("tool_call_id") == call_id)["content"]


def test_approve_none_denies_the_calls_that_need_approval_and_runs_the_others(
    ledger_server_url: str, ledger_tools: list[MCPTool]
) -> None:
    key = f"k-{token_hex(4)}"
    script = [
        tool_calls(("c1", "delete_entry", {"key": key, "entry": "e1"}), ("c2", "stamp", {"key": key, "text": "s"})),
        answer("Stamped only."),
    ]
    code, printed, err, endpoint = _agent(ledger_server_url, script, "--approve", "none", "--ask-destructive")
    assert code == 0, err
    assert ledger(ledger_tools, key) == ["stamp s"]
    assert [(e["status"], e["approval"]) for e in printed["tool_calls"]] == [("denied", "deny"), ("ok", None)]
    assert "--approve none" in _told(endpoint, "c1")


def test_approve_all_approves_them(ledger_server_url: str, ledger_tools: list[MCPTool]) -> None:
    key = f"k-{token_hex(4)}"
    script = [tool_calls(("c1", "write_note", {"key": key, "text": "n"})), answer("Noted.")]
    code, printed, err, _ = _agent(ledger_server_url, script, "--approve", "all", "--ask-unannotated")
    assert code == 0, err
    assert ledger(ledger_tools, key) == ["write_note n"]
    assert [(e["status"], e["approval"]) for e in printed["tool_calls"]] == [("ok", "approve")]


def test_approve_ask_reads_yes_no_and_always_from_stdin(
    ledger_server_url: str, ledger_tools: list[MCPTool], monkeypatch: pytest.MonkeyPatch
) -> None:
    key = f"k-{token_hex(4)}"
    script = [
        tool_calls(("c1", "delete_entry", {"key": key, "entry": "e1"})),
        tool_calls(("c2", "stamp", {"key": key, "text": "1"})),
        tool_calls(("c3", "stamp", {"key": key, "text": "2"}), ("c4", "write_note", {"key": key, "text": "w"})),
        answer("Done."),
    ]
    # Denied with a reason; then "always" for stamp; then (stamp not asked again) yes for write_note
    monkeypatch.setattr("sys.stdin", io.StringIO("n\nkeep e1\nalways\ny\n"))
    code, printed, err, endpoint = _agent(
        ledger_server_url, script, "--approve", "ask", "--ask-pattern", "^(delete|stamp|write)"
    )
    assert code == 0, err
    assert ledger(ledger_tools, key) == ["stamp 1", "stamp 2", "write_note w"]
    assert [(e["tool_call_id"], e["approval"]) for e in printed["tool_calls"]] == [
        ("c1", "deny"), ("c2", "allow_session"), ("c3", "allow_session"), ("c4", "approve")
    ]  # fmt: skip
    assert err.count("Approve the call of") == 3 and "delete_entry" in err and '"e1"' in err
    assert "keep e1" in _told(endpoint, "c1")
