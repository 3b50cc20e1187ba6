"""Many servers on the command line: ``tools --config``, ``agent`` and ``chat`` with several servers list them at
once, leave out one that fails and name it on stderr with its reason in the command line's words, and fail with
``--strict`` as a single server's failure does."""

from __future__ import annotations

import io
import json
import socket
import sys
from pathlib import Path

import pytest

from cli_runs import run_cli
from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer, tool_calls
from fixtures.python_servers import SERVERS_DIR
from knime_mcp.cli.main import main


def closed_port_url() -> str:
    """An http URL on 127.0.0.1 where nothing listens: a port just bound and closed again."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/mcp"


@pytest.fixture
def config_file(tmp_path: Path, demo_stdio_command: list[str], auth_server_url: str) -> str:
    """The demo server over stdio, a server with nothing listening, and one that wants a token it is not sent."""
    command, *args = demo_stdio_command
    servers = {
        "local": {"command": command, "args": args},
        "down": {"type": "http", "url": closed_port_url()},
        "locked": {"type": "http", "url": auth_server_url},
    }
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return str(path)


def left_out(err: str) -> dict[str, str]:
    """The servers the warnings on stderr name as left out, with the reason each gives."""
    start = "Warning: server '"
    lines = [line.removeprefix(start) for line in err.splitlines() if line.startswith(start)]
    return dict(line.split("' was left out (--strict fails instead): ", 1) for line in lines)  # type: ignore[misc]


def test_tools_of_a_config_list_its_servers_at_once(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # Given three servers whose tool lists answer only once all three are being listed together
    script = str(SERVERS_DIR / "gathering_list_server.py")
    folder = tmp_path / "gathered"
    folder.mkdir()
    servers = {
        name: {"command": sys.executable, "args": [script, "--folder", str(folder), "--count", "3", "--name", name]}
        for name in ("a", "b", "c")
    }
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    # When tools lists them, Then each answered, in the file's order
    code, out, err = run_cli(capsys, "tools", "--config", str(path), "--format", "json")
    assert code == 0 and "Warning" not in err
    assert [tool["name"] for tool in json.loads(out)] == ["a_a_here", "b_b_here", "c_c_here"]


def test_tools_of_a_config_leave_out_failing_servers_and_name_them_with_reasons_in_the_clis_words(
    capsys: pytest.CaptureFixture[str], config_file: str
) -> None:
    code, out, err = run_cli(capsys, "tools", "--config", config_file, "--format", "json")
    assert code == 0
    assert {tool["name"].split("_", 1)[0] for tool in json.loads(out)} == {"local"}
    reasons = left_out(err)
    assert list(reasons) == ["down", "locked"]
    assert (
        reasons["down"].startswith("Could not connect") and "Hint: Check that the server is running" in reasons["down"]
    )
    assert reasons["locked"].startswith("The server refused the credentials (HTTP 401).")
    assert "Send the credential with --header 'Authorization: Bearer ${VAR}'" in reasons["locked"]


def test_tools_of_a_config_with_strict_fail_at_a_failing_server_naming_it(
    capsys: pytest.CaptureFixture[str], config_file: str
) -> None:
    code, out, err = run_cli(capsys, "tools", "--config", config_file, "--strict")
    assert code == 3 and out == ""
    assert err.startswith("Error: ") and ("[server: down]" in err or "[server: locked]" in err)


def test_tools_of_a_config_whose_every_server_fails_exit_non_zero_naming_each(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "mcp.json"
    servers = {"one": {"url": closed_port_url()}, "two": {"url": closed_port_url()}}
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    code, _, err = run_cli(capsys, "tools", "--config", str(path))
    assert code == 3 and err.startswith("Error: None of the 2 servers listed its tools. one: Could not connect")
    assert " | two: Could not connect" in err


def _agent(*words: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return (
        main(["agent", "--model", "fake", "--prompt", "Echo hi.", *words], out=out, err=err),
        out.getvalue(),
        err.getvalue(),
    )


def test_the_agent_with_a_config_uses_the_servers_that_answer_and_names_those_left_out(config_file: str) -> None:
    script = [tool_calls(("c1", "local_echo", {"text": "hi"})), answer("It said hi.")]
    with FakeOpenAIEndpoint(script) as endpoint:
        code, out, err = _agent("--base-url", endpoint.base_url, "--config", config_file)
    assert code == 0, err
    assert "[assistant] It said hi." in out and list(left_out(err)) == ["down", "locked"]
    offered = {tool["function"]["name"] for tool in endpoint.requests[0]["tools"]}
    assert "local_echo" in offered and not any(name.startswith(("down_", "locked_")) for name in offered)


def test_the_agent_with_strict_fails_before_the_model_is_asked(config_file: str) -> None:
    with FakeOpenAIEndpoint([answer("Never asked.")]) as endpoint:
        code, _, err = _agent("--base-url", endpoint.base_url, "--config", config_file, "--strict")
    assert code == 3 and err.startswith("Error: ") and endpoint.requests == []


def test_the_agent_with_servers_named_on_the_command_line_names_a_failing_one_by_its_address(
    demo_http_url: str,
) -> None:
    down = closed_port_url()
    with FakeOpenAIEndpoint([answer("Done.")]) as endpoint:
        code, _, err = _agent("--base-url", endpoint.base_url, demo_http_url, down)
    assert code == 0, err
    assert list(left_out(err)) == [down]
    assert "echo" in {tool["function"]["name"] for tool in endpoint.requests[0]["tools"]}


def test_a_chat_with_a_config_names_the_servers_left_out_and_chats_with_the_others(
    config_file: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("/exit\n"))
    out, err = io.StringIO(), io.StringIO()
    with FakeOpenAIEndpoint([]) as endpoint:
        code = main(
            ["chat", "--base-url", endpoint.base_url, "--model", "fake", "--config", config_file], out=out, err=err
        )
    assert code == 0, err.getvalue()
    assert list(left_out(err.getvalue())) == ["down", "locked"] and "Chatting with " in out.getvalue()
