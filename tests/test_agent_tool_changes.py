"""How an agent run follows servers whose tools change while it runs: a tool added during a call (over stdio and
Streamable HTTP), a known tool listed again with other annotations (judged again by the tool policy, and logged), and
listings that hold a tool without a name; against tests/servers/shifting_server.py and nameless_tool_server.py, real
servers on the SDK's `MCPServer` and low-level `Server`, with the scripted chat model."""

from __future__ import annotations

import json
import logging
import shlex
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import anyio
import pytest
from langchain_core.messages import AIMessage

from fixtures.python_servers import SERVERS_DIR, running_server
from knime_mcp.agent.call_log import TOOLS_CHANGED
from knime_mcp.agent.loop import AgentConfig
from knime_mcp.calls.listing import list_server_tools
from knime_mcp.config import Handshake, ServerSpec
from knime_mcp.tools.tool import MCPTool
from scripted_model import calls, offered, run_scripted, scripted, tool_texts

SHIFTING = [sys.executable, str(SERVERS_DIR / "shifting_server.py")]
NAMELESS = ServerSpec(
    target=shlex.join([sys.executable, str(SERVERS_DIR / "nameless_tool_server.py")]),
    name="nameless",
    handshake="initialize",  # the low-level server sends its notification only on the older protocol
)


@contextmanager
def _shifting(transport: str, tmp_path: Path, handshake: Handshake | None = None) -> Iterator[ServerSpec]:
    """A fresh shifting server (its tools change for good once a test changes them) over ``transport``; on the
    ``initialize`` handshake it declares no ``tools.listChanged``, and notifies all the same."""
    if transport == "stdio":
        yield ServerSpec(target=shlex.join(SHIFTING), name="shifting", handshake=handshake)
        return
    with running_server([*SHIFTING, "--port", "0"], tmp_path / "server.log") as server:
        yield ServerSpec(target=server.url, name="shifting", handshake=handshake)


@pytest.fixture(params=["stdio", "streamable-http"])
def shifting(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ServerSpec]:
    with _shifting(request.param, tmp_path) as spec:
        yield spec


def _tools(spec: ServerSpec) -> list[MCPTool]:
    return anyio.run(lambda: list_server_tools(spec)).tools


@pytest.mark.parametrize("transport", ["stdio", "streamable-http"])
@pytest.mark.parametrize("handshake", [None, "initialize"], ids=["declared", "undeclared"])
def test_a_tool_the_server_adds_during_a_call_is_offered_from_the_next_model_call(
    transport: str, handshake: Handshake | None, tmp_path: Path
) -> None:
    # Given a server whose tool `grow` adds `new_tool` and says so as an mcp 1.x server does (on the `initialize`
    # handshake also without declaring `tools.listChanged`, as mcp 1.x servers do), and a model calling both
    model = scripted(calls(("c1", "grow", {})), calls(("c2", "new_tool", {})), AIMessage("Done."))
    # When the agent runs
    with _shifting(transport, tmp_path, handshake) as spec:
        run = run_scripted(model, _tools(spec))
    # Then the model is offered the new tool right after the call, the call runs (instead of coming back unknown),
    # and the log notes the change
    assert "new_tool" not in offered(model, 0) and "new_tool" in offered(model, 1)
    assert [(entry.tool, entry.status) for entry in run.log] == [
        ("grow", "ok"),
        (TOOLS_CHANGED, "tools_changed"),
        ("new_tool", "ok"),
    ]
    assert json.loads(run.log[1].result or "") == {"added": ["new_tool"], "removed": []}
    assert "new tool ran" in tool_texts(run)[-1]


def test_the_tools_a_tools_table_left_out_stay_out_while_a_tool_added_during_a_call_is_offered(
    shifting: ServerSpec,
) -> None:
    # Given a tools table that holds only `grow` of the server's tools (the person chose it in the provider)
    tools = [tool for tool in _tools(shifting) if tool.name == "grow"]
    model = scripted(calls(("c1", "grow", {})), calls(("c2", "grow", {})), AIMessage("Done."))
    # When the agent calls it twice
    run = run_scripted(model, tools)
    # Then only the tool the server added joins it, once, and the tools the table left out are never offered
    assert offered(model, 0) == ["grow"]
    assert sorted(offered(model, 1)) == sorted(offered(model, 2)) == ["grow", "new_tool"]
    changes = [json.loads(entry.result or "") for entry in run.log if entry.tool == TOOLS_CHANGED]
    assert changes == [{"added": ["new_tool"], "removed": []}]


def test_a_server_that_notifies_without_declaring_it_cannot_bring_back_the_tools_a_table_left_out() -> None:
    # Given a tools table with only `grow` of a server that never declared that its tools change, but notifies
    undeclared = replace(NAMELESS, target=f"{NAMELESS.target} --undeclared")
    tools = [tool for tool in _tools(undeclared) if tool.name == "grow"]
    model = scripted(calls(("c1", "grow", {})), AIMessage("Done."))
    # When the agent calls `grow`, which adds `grown` and notifies
    run = run_scripted(model, tools)
    # Then the tool it added is offered, and the tools the table left out (`echo`) are not: the server was listed as
    # its session opened, so the listing after the change tells them apart
    assert offered(model, 1) == ["grow", "grown"]
    changes = [json.loads(entry.result or "") for entry in run.log if entry.tool == TOOLS_CHANGED]
    assert changes == [{"added": ["grown"], "removed": []}]


def test_a_chat_offers_a_tool_added_during_a_call_from_its_next_model_call(tmp_path: Path) -> None:
    # Given a chat over a server that declares no `tools.listChanged` and adds a tool during `grow`
    from knime_mcp.agent.chat_session import ChatSession

    model = scripted(calls(("c1", "grow", {})), calls(("c2", "new_tool", {})), AIMessage("Done."))
    with (
        _shifting("stdio", tmp_path, "initialize") as spec,
        ChatSession(model, _tools(spec), config=AgentConfig()) as chat,
    ):
        # When a turn calls `grow` and then the new tool
        chat.send("Go.")
        events = chat.events(0, wait=60)
        while events[-1]["type"] != "turn_end":
            later = chat.events(events[-1]["seq"], wait=60)
            assert later, "the turn did not end"
            events += later
        log = chat.run().log
    # Then the new tool was offered and ran in the same turn
    assert "new_tool" in offered(model, 1)
    assert [(entry.tool, entry.status) for entry in log][-1] == ("new_tool", "ok")


def test_a_tool_listed_again_as_destructive_is_no_longer_offered_or_called_and_the_log_notes_why(
    shifting: ServerSpec, caplog: pytest.LogCaptureFixture
) -> None:
    # Given a server whose `turn` lists `wipe` again annotated destructive, and a model that then calls `wipe`
    model = scripted(calls(("c1", "turn", {})), calls(("c2", "wipe", {})), AIMessage("Done."))
    # When the agent runs with the default policy, which blocks destructive tools
    with caplog.at_level(logging.WARNING, logger="knime_mcp"):
        run = run_scripted(model, _tools(shifting))
    # Then `wipe`, offered at first, is not offered after the change, and the call of it never reaches the server
    assert "wipe" in offered(model, 0) and "wipe" not in offered(model, 1)
    assert [(entry.tool, entry.status) for entry in run.log] == [
        ("turn", "ok"),
        (TOOLS_CHANGED, "tools_changed"),
        ("wipe", "unknown_tool"),
    ]
    assert "records wiped" not in "\n".join(tool_texts(run))
    # And the log row names the tool, its new annotations and why it is no longer offered
    change = json.loads(run.log[1].result or "")
    assert change["added"] == [] and change["removed"] == []
    assert change["changed"]["wipe"]["destructive"] is True
    assert "annotated destructive" in change["blocked"]["wipe"]
    assert "shifting" in caplog.text and "annotated destructive" in caplog.text


def test_a_tool_listed_again_with_other_annotations_that_the_policy_allows_is_offered_and_noted(
    shifting: ServerSpec,
) -> None:
    model = scripted(calls(("c1", "turn", {})), calls(("c2", "wipe", {})), AIMessage("Done."))
    from knime_mcp.tools.policy import ToolPolicy

    run = run_scripted(model, _tools(shifting), config=AgentConfig(policy=ToolPolicy(destructive="allow")))
    assert "wipe" in offered(model, 1) and run.log[2].status == "ok"
    change = json.loads(run.log[1].result or "")
    assert change["changed"]["wipe"]["destructive"] is True and "blocked" not in change


# -- a tool without a name ------------------------------------------------------------------------------------------


def test_a_tool_without_a_name_is_left_out_of_the_listing_with_a_note_naming_the_server_and_the_rest_are_kept() -> None:
    listing = anyio.run(lambda: list_server_tools(NAMELESS))
    assert [tool.name for tool in listing.tools] == ["echo", "grow"]
    (note,) = [note for note in listing.notes if "no name" in note]
    assert "'nameless'" in note and "Tool 2 of 3" in note and "'Nameless'" in note


def test_a_tool_without_a_name_in_a_listing_after_a_change_leaves_the_new_tools_offered(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Given the tools of a server that lists a nameless tool, and a model that makes it add `grown`, then calls it
    model = scripted(calls(("c1", "grow", {})), calls(("c2", "grown", {})), AIMessage("Done."))
    # When the agent runs
    with caplog.at_level(logging.WARNING, logger="knime_mcp"):
        run = run_scripted(model, _tools(NAMELESS))
    # Then the listing after the change kept the good tools, `grown` ran, and the nameless one was warned about
    assert "grown" in offered(model, 1)
    assert [(entry.tool, entry.status) for entry in run.log][-1] == ("grown", "ok")
    assert "Tool 2 of 4 listed by server 'nameless' (titled 'Nameless') was left out" in caplog.text
