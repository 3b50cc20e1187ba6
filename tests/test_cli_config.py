"""``--config FILE``: the servers of a pasted MCP configuration on the command line, one chosen with ``--server``
or all of them in one tools table, each tool name prefixed by its server's key."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from cli_runs import run_cli


@pytest.fixture
def config_file(tmp_path: Path, demo_stdio_command: list[str], demo_http_url: str) -> str:
    command, *args = demo_stdio_command
    path = tmp_path / "claude_desktop_config.json"
    servers = {"local": {"command": command, "args": args}, "remote": {"type": "http", "url": demo_http_url}}
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return str(path)


def _names(out: str) -> list[str]:
    return [tool["name"] for tool in json.loads(out)]


def test_tools_of_every_configured_server_in_one_table_prefixed_by_their_keys(
    capsys: pytest.CaptureFixture[str], config_file: str
) -> None:
    code, out, _ = run_cli(capsys, "tools", "--config", config_file, "--format", "json", "--include", "^(add|echo)$")
    assert code == 0
    names = _names(out)
    assert sorted(names[:2]) == ["local_add", "local_echo"] and sorted(names[2:]) == ["remote_add", "remote_echo"]
    assert {tool["tool_name"] for tool in json.loads(out)} == {"add", "echo"}


def test_prefix_follows_the_servers_key(capsys: pytest.CaptureFixture[str], config_file: str) -> None:
    code, out, _ = run_cli(
        capsys, "tools", "--config", config_file, "--prefix", "x", "--format", "json", "--include", "^add$"
    )
    assert code == 0 and _names(out) == ["local_x_add", "remote_x_add"]


def test_one_configured_server_chosen_by_name(capsys: pytest.CaptureFixture[str], config_file: str) -> None:
    code, out, _ = run_cli(capsys, "tools", "--config", config_file, "--server", "remote", "--format", "json")
    assert code == 0 and "echo" in _names(out)
    code, out, _ = run_cli(
        capsys, "call", "--config", config_file, "--server", "local", "add", "--args", '{"a": 1, "b": 2}'
    )
    assert code == 0 and json.loads(out)["structured"] == {"result": 3}


def test_a_command_that_takes_one_server_asks_which(capsys: pytest.CaptureFixture[str], config_file: str) -> None:
    code, _, err = run_cli(capsys, "call", "--config", config_file, "add")
    assert code == 2 and "--server NAME" in err and "'local'" in err and "'remote'" in err


@pytest.mark.parametrize(
    ("words", "said"),
    [
        (["--server", "nope"], "no server 'nope'"),
        (["http://127.0.0.1:1/mcp"], "not both"),
    ],
)
def test_wrong_choices_are_usage_errors(
    capsys: pytest.CaptureFixture[str], config_file: str, words: list[str], said: str
) -> None:
    code, _, err = run_cli(capsys, "tools", "--config", config_file, *words)
    assert code == 2 and said in err


def test_server_without_config_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "tools", "--server", "local")
    assert code == 2 and "add --config" in err


def test_a_literal_secret_in_the_file_is_refused_never_shown(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    secret = "sk-" + "Q" * 30
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"servers": {"s": {"command": "npx", "env": {"OPENAI_API_KEY": secret}}}}))
    code, out, err = run_cli(capsys, "tools", "--config", str(path))
    assert code != 0 and "'OPENAI_API_KEY'" in err and "${OPENAI_API_KEY}" in err
    assert secret not in out + err


def test_a_missing_file_is_named(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run_cli(capsys, "tools", "--config", str(tmp_path / "none.json"))
    assert code == 2 and "none.json" in err


def test_the_agent_uses_every_configured_server(config_file: str) -> None:
    from knime_mcp.cli.agent import agent_setup
    from knime_mcp.cli.main import _parser

    words = ["agent", "--config", config_file, "--provider", "ollama", "--model", "m", "--prompt", "hi"]
    assert [spec.name for spec in agent_setup(_parser().parse_args(words), [], io.StringIO()).specs] == [
        "local",
        "remote",
    ]


@pytest.mark.parametrize(("command", "listed"), [("prompts", "review_chart"), ("resources", "demo://chart/{+values}")])
def test_the_catalog_commands_take_one_configured_server(
    capsys: pytest.CaptureFixture[str], config_file: str, command: str, listed: str
) -> None:
    code, out, _ = run_cli(capsys, command, "--config", config_file, "--server", "local", "--format", "json")
    assert code == 0 and listed in out
    code, _, err = run_cli(capsys, command, "--config", config_file)
    assert code == 2 and "--server NAME" in err and "'local'" in err and "'remote'" in err
