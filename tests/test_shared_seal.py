"""A shared seal key: executors that share a team's key trust the tools tables the team made.

Each "machine" is a process of its own with its own key file (``KNIME_MCP_SEAL_KEY_FILE``) and, where it has one,
the team's key (``KNIME_MCP_SEAL_KEY``): machine A lists the bundled demo server (over stdio, a command line that a
table from data never runs) with the CLI, and machine B calls a tool from the file A wrote.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from knime_mcp.config import ServerSpec
from knime_mcp.seal import KEY_FILE_ENV, SHARED_KEY_ENV, is_sealed_here, seal_spec
from knime_mcp.tools.tool import MCPTool
from tool_factory import make_tool

TEAM_KEY = secrets.token_hex(32)
OTHER_TEAM_KEY = secrets.token_hex(32)
SPEC = ServerSpec(target="http://127.0.0.1:8000/mcp")


def _machine(tmp_path: Path, name: str, shared_key: str | None) -> dict[str, str]:
    """The environment of a machine with a key file of its own and, if given, the team's shared key."""
    env = {key: value for key, value in os.environ.items() if key != SHARED_KEY_ENV}
    env[KEY_FILE_ENV] = str(tmp_path / name / "seal.key")
    if shared_key is not None:
        env[SHARED_KEY_ENV] = shared_key
    return env


def _cli(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    code = "import sys; from knime_mcp.cli.main import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, *argv], env=env, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.fixture
def team_table(tmp_path: Path) -> Path:
    """The demo server's tools as machine A, which has the team's key, lists them: a stdio server."""
    listed = _cli(_machine(tmp_path, "a", TEAM_KEY), "tools", "--format", "json")
    assert listed.returncode == 0, listed.stderr
    table = tmp_path / "tools.json"
    table.write_text(listed.stdout)
    assert TEAM_KEY not in listed.stdout + listed.stderr
    return table


def _call_echo(env: dict[str, str], table: Path) -> subprocess.CompletedProcess[str]:
    return _cli(env, "call", "--tools", str(table), "echo", "--args", '{"text": "from the team"}')


def test_a_table_listed_on_machine_a_runs_on_machine_b_with_the_same_shared_key(
    team_table: Path, tmp_path: Path
) -> None:
    # When machine B, with a key file of its own but the same shared key, calls a tool of A's table
    called = _call_echo(_machine(tmp_path, "b", TEAM_KEY), team_table)

    # Then its stdio server runs as a person's server would, and the key is never printed
    assert called.returncode == 0, called.stderr
    assert "from the team" in called.stdout
    assert TEAM_KEY not in called.stdout + called.stderr


@pytest.mark.parametrize("shared_key", [OTHER_TEAM_KEY, None], ids=["another shared key", "no shared key"])
def test_machine_b_without_the_teams_key_refuses_the_table_and_says_what_to_do(
    team_table: Path, tmp_path: Path, shared_key: str | None
) -> None:
    # When machine B, with another team's key or its own key only, calls a tool of A's table
    called = _call_echo(_machine(tmp_path, "b", shared_key), team_table)

    # Then the table is data: its command line never runs, and the message names the shared key as a way out
    assert called.returncode != 0
    assert "A server command line taken from data was refused" in called.stderr
    assert SHARED_KEY_ENV in called.stderr and "list its tools again here" in called.stderr
    assert TEAM_KEY not in called.stdout + called.stderr


def test_without_a_shared_key_the_machines_own_key_seals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in _machine(tmp_path, "own", None).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv(SHARED_KEY_ENV, raising=False)

    sealed = seal_spec(SPEC)

    assert is_sealed_here(sealed) and (tmp_path / "own" / "seal.key").exists()
    monkeypatch.setenv(SHARED_KEY_ENV, TEAM_KEY)
    assert not is_sealed_here(sealed), "where a shared key is set, it is the one key that seals and is checked"


def test_with_a_shared_key_the_machines_own_key_file_is_neither_read_nor_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    own = tmp_path / "own" / "seal.key"
    monkeypatch.setenv(KEY_FILE_ENV, str(own))
    monkeypatch.setenv(SHARED_KEY_ENV, TEAM_KEY)

    sealed = seal_spec(SPEC)

    assert is_sealed_here(sealed) and not own.exists()
    assert sealed.seal == hmac.new(bytes.fromhex(TEAM_KEY), SPEC.identity.encode(), hashlib.sha256).hexdigest()


@pytest.mark.parametrize(
    "guessable_key",
    [b"", bytes(32), TEAM_KEY.encode(), SHARED_KEY_ENV.encode(), hashlib.sha256(b"").digest()],
    ids=["empty", "zeros", "the key's text", "the variable's name", "sha256 of nothing"],
)
def test_which_key_sealed_a_tool_cannot_be_chosen_by_the_table(
    guessable_key: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table holds a seal and nothing that names a key: every seal is checked with the one key in use here."""
    monkeypatch.setenv(SHARED_KEY_ENV, TEAM_KEY)
    tool = make_tool("echo", server=seal_spec(SPEC))
    cell = json.loads(tool.to_json())
    message = f"tool\n{tool.server.identity}\n{tool.policy_facts}".encode()
    forged = hmac.new(guessable_key, message, hashlib.sha256).hexdigest()

    assert is_sealed_here(MCPTool.from_dict(cell).server)
    assert not is_sealed_here(MCPTool.from_dict({**cell, "seal": forged}).server)


@pytest.mark.parametrize(
    "bad_key", ["not a key at all", secrets.token_hex(16), "zz" * 32], ids=["text", "too short", "not hex"]
)
def test_an_unusable_shared_key_seals_nothing_and_is_never_logged(
    bad_key: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    own = tmp_path / "own" / "seal.key"
    monkeypatch.setenv(KEY_FILE_ENV, str(own))
    monkeypatch.setenv(SHARED_KEY_ENV, bad_key)

    sealed = seal_spec(SPEC)

    # Then nothing is sealed (not with the machine's own key either, which would not travel), and the warning names
    # the variable, never its value
    assert sealed.seal is None and not is_sealed_here(dataclasses.replace(SPEC, seal="0" * 64))
    assert not own.exists()
    assert SHARED_KEY_ENV in caplog.text and bad_key not in caplog.text
