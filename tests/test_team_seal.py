"""The team's seal key given to the core explicitly (:func:`knime_mcp.seal.team_seal_key`, what a node's *Team seal
key (credential)* sets): it seals and checks within its block, before ``KNIME_MCP_SEAL_KEY`` and the machine's own
key, also in what :func:`run_sync` runs from there, and never leaks out of the block."""

from __future__ import annotations

import logging
import secrets
from pathlib import Path
from typing import Any

import pytest

from knime_mcp.config import ServerSpec
from knime_mcp.mcp.sync import run_sync
from knime_mcp.seal import KEY_FILE_ENV, SHARED_KEY_ENV, is_sealed_here, seal_spec, team_seal_key

TEAM_KEY = secrets.token_hex(32)
SPEC = ServerSpec(target="http://127.0.0.1:8000/mcp")


@pytest.fixture(autouse=True)
def own_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_FILE_ENV, str(tmp_path / "seal.key"))
    monkeypatch.delenv(SHARED_KEY_ENV, raising=False)


def test_the_team_key_seals_and_checks_within_its_block_only() -> None:
    with team_seal_key(TEAM_KEY):
        sealed = seal_spec(SPEC)
        assert is_sealed_here(sealed)
    assert not is_sealed_here(sealed), "outside the block the machine's own key checks"
    with team_seal_key(secrets.token_hex(32)):
        assert not is_sealed_here(sealed)
    with team_seal_key(TEAM_KEY):
        assert is_sealed_here(sealed)


def test_the_team_key_comes_before_the_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SHARED_KEY_ENV, secrets.token_hex(32))
    with team_seal_key(TEAM_KEY):
        sealed = seal_spec(SPEC)
    monkeypatch.setenv(SHARED_KEY_ENV, TEAM_KEY)
    assert is_sealed_here(sealed), "the same key, from the variable"


def test_no_team_key_leaves_the_key_as_it_is() -> None:
    sealed = seal_spec(SPEC)
    with team_seal_key(None), team_seal_key(""):
        assert is_sealed_here(sealed)


def test_what_run_sync_runs_from_the_block_uses_the_team_key() -> None:
    async def check(spec: ServerSpec) -> tuple[bool, ServerSpec]:
        return is_sealed_here(spec), seal_spec(spec)

    with team_seal_key(TEAM_KEY):
        sealed = seal_spec(SPEC)
        trusted, sealed_there = run_sync(check, sealed)
    assert trusted and sealed_there.seal == sealed.seal


def test_an_unusable_team_key_seals_nothing_and_is_never_shown(caplog: pytest.LogCaptureFixture) -> None:
    unusable = "not-hex-" + secrets.token_hex(8)
    with caplog.at_level(logging.WARNING), team_seal_key(unusable):
        assert seal_spec(SPEC).seal is None
    assert "team seal key credential" in caplog.text and unusable not in caplog.text


def test_a_chat_session_made_with_the_team_key_keeps_it_for_turns_sent_from_any_thread(
    demo_stdio_command: list[str],
) -> None:
    import shlex
    import threading

    import anyio
    from langchain_core.messages import AIMessage

    from knime_mcp.agent.chat_session import ChatSession
    from knime_mcp.agent.loop import AgentConfig
    from knime_mcp.calls.listing import list_server_tools
    from scripted_model import calls, scripted

    # Given the demo server's tools over stdio, sealed with the team's key, and a chat session made with it
    spec = ServerSpec(target=shlex.join(demo_stdio_command), name="demo")
    model = scripted(calls(("c1", "echo", {"text": "from the team"})), AIMessage("Done."))
    with team_seal_key(TEAM_KEY):
        tools = anyio.run(lambda: list_server_tools(spec)).tools
        session = ChatSession(model, tools, config=AgentConfig())
        session.open()
    try:
        # When a message is sent from a thread of its own, as a view's data service does
        sender = threading.Thread(target=session.send, args=("Echo.",))
        sender.start()
        sender.join()
        seen: list[dict[str, Any]] = []
        while not any(event["type"] == "turn_end" for event in seen):
            seen += session.events(seen[-1]["seq"] if seen else 0, wait=60.0) or pytest.fail(f"no turn end: {seen}")
        # Then the stdio server runs as a person's server would: the call was made
        ended = [event for event in session.events(0) if event["type"] == "tool_end"]
        assert [(event["status"], event["text"]) for event in ended] == [("ok", "from the team")]
    finally:
        session.close()


@pytest.mark.parametrize(
    "weak_key",
    ["00" * 32, "ab" * 32, "deadbeef" * 8, "".join(f"{n:02x}" for n in range(32)), secrets.token_hex(16)],
    ids=["zeros", "one byte repeated", "a pattern repeated", "counting", "short"],
)
def test_a_weak_team_key_seals_nothing_and_the_warning_says_how_to_make_one(
    weak_key: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from knime_mcp.seal import seal_key_problem

    assert seal_key_problem(weak_key) is not None and seal_key_problem(TEAM_KEY) is None
    for source in ("variable", "credential"):
        caplog.clear()
        if source == "variable":
            monkeypatch.setenv(SHARED_KEY_ENV, weak_key)
            assert seal_spec(SPEC).seal is None
        else:
            monkeypatch.delenv(SHARED_KEY_ENV)
            with caplog.at_level(logging.WARNING), team_seal_key(weak_key):
                assert seal_spec(SPEC).seal is None
        assert "secrets.token_hex(32)" in caplog.text and weak_key not in caplog.text
