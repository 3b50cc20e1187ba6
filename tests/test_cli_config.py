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
    assert "${input:" not in err and "KNIME" not in err, "the command line takes no KNIME credential"
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


def _input_config(tmp_path: Path, servers: dict[str, object], inputs: list[str]) -> str:
    path = tmp_path / "mcp.json"
    declared = [{"id": name, "type": "promptString", "password": True} for name in inputs]
    path.write_text(json.dumps({"servers": servers, "inputs": declared}), encoding="utf-8")
    return str(path)


def test_an_input_of_the_config_is_read_from_the_environment_variable_its_message_names(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    auth_server_url: str,
    auth_token: str,
) -> None:
    # Given a VS Code configuration whose server takes its bearer token from the input 'mcp-token'
    header = {"Authorization": "Bearer ${input:mcp-token}"}
    config = _input_config(tmp_path, {"secure": {"type": "http", "url": auth_server_url, "headers": header}},
                           ["mcp-token"])  # fmt: skip
    # When nobody is at the terminal and the variable is not set, Then the message names the variable to set
    monkeypatch.delenv("KNIME_MCP_INPUT_MCP_TOKEN", raising=False)
    code, _, err = run_cli(capsys, "tools", "--config", config, "--format", "json")
    assert code == 3 and "KNIME_MCP_INPUT_MCP_TOKEN" in err and "'mcp-token'" in err and "KNIME credential" not in err
    # When the variable holds the token, Then the server's tools are listed, and the table names only the variable
    monkeypatch.setenv("KNIME_MCP_INPUT_MCP_TOKEN", auth_token)
    code, out, err = run_cli(capsys, "tools", "--config", config, "--format", "json")
    assert code == 0 and "echo" in _names(out), err
    assert auth_token not in out + err and "${KNIME_MCP_INPUT_MCP_TOKEN}" in out


def test_an_input_of_the_config_is_asked_for_on_the_terminal_without_echo(tmp_path: Path) -> None:
    import hashlib
    import os
    import subprocess
    import sys

    from fixtures.python_servers import SERVERS_DIR

    # Given a stdio server whose API_TOKEN is the input 'tok', and a person at a terminal (a pty)
    server = {
        "command": sys.executable,
        "args": [str(SERVERS_DIR / "env_echo_server.py")],
        "env": {"API_TOKEN": "${input:tok}"},
    }
    config = _input_config(tmp_path, {"echo": server}, ["tok"])
    env = {key: value for key, value in os.environ.items() if not key.startswith("KNIME_MCP_INPUT_")}
    primary, secondary = os.openpty()
    code = "import sys; from knime_mcp.cli.main import main; sys.exit(main(sys.argv[1:]))"
    process = subprocess.Popen(
        [sys.executable, "-c", code, "call", "--config", config, "token_digest"],
        stdin=secondary, stdout=subprocess.PIPE, stderr=secondary, env=env, start_new_session=True,
    )  # fmt: skip
    os.close(secondary)
    try:
        # When it asks, and the person types the secret
        seen = b""
        while b"tok" not in seen or not seen.rstrip().endswith(b":"):
            seen += os.read(primary, 1024) or b""
        os.write(primary, b"typed-secret-1f2e\n")
        out, _ = process.communicate(timeout=120)
        while True:
            try:
                more = os.read(primary, 1024)
            except OSError:
                break
            if not more:
                break
            seen += more
    finally:
        os.close(primary)
        process.kill() if process.poll() is None else None
    # Then the server had it, the prompt named the variable that could hold it, and the terminal never showed it
    assert process.returncode == 0 and hashlib.sha256(b"typed-secret-1f2e").hexdigest() in out.decode()
    assert b"KNIME_MCP_INPUT_TOK" in seen and b"typed-secret-1f2e" not in seen


def test_agent_and_tools_name_the_tools_of_a_config_alike(capsys: pytest.CaptureFixture[str], config_file: str) -> None:
    import anyio

    from knime_mcp.cli.agent import agent_setup
    from knime_mcp.cli.main import _parser

    # Given the demo server twice in one configuration, as 'local' (stdio) and 'remote' (http)
    code, out, _ = run_cli(capsys, "tools", "--config", config_file, "--format", "json")
    words = ["agent", "--config", config_file, "--provider", "ollama", "--model", "m", "--prompt", "hi"]
    setup = agent_setup(_parser().parse_args(words), [], io.StringIO())
    # Then the agent offers its tools under the names the tools table gives them
    assert code == 0 and sorted(tool.name for tool in anyio.run(setup.tools, None)) == sorted(_names(out))
