"""The command line does what it says: a server path without `--`, a task-only tool, options after `--`, an API
that wants a key nobody gave, and hints and warnings worded for the command line rather than for KNIME."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from cli_runs import run_cli
from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer
from fixtures.python_servers import SERVERS_DIR

ASKING = [sys.executable, str(SERVERS_DIR / "asking_server.py")]


@pytest.mark.parametrize("command", ["call", "call-table"])
def test_a_server_file_without_the_double_dash_is_a_usage_error_not_a_tool_of_the_demo_server(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    server = tmp_path / "server.py"
    server.write_text("print('a server')\n", encoding="utf-8")
    extra = ["--input", "in.csv", "--output", "out.parquet"] if command == "call-table" else []
    code, _, err = run_cli(capsys, command, str(server), *extra)
    assert code == 2 and "[server: demo]" not in err
    assert f"knime-mcp {command} -- {server} … -- TOOL" in err


def test_a_task_only_tool_runs_as_a_task_with_its_status_as_progress(
    capsys: pytest.CaptureFixture[str], everything_stdio_command: list[str]
) -> None:
    argv = ["call", "--", *everything_stdio_command, "--", "simulate-research-query", "--args", '{"topic": "MCP"}']
    code, out, err = run_cli(capsys, *argv)
    assert code == 0 and "# Research Report: MCP" in out
    assert err.startswith("Progress: Gathering sources...\nProgress: ")


def test_options_after_the_double_dash_go_to_the_server_with_a_warning(capsys: pytest.CaptureFixture[str]) -> None:
    # Given a stdio server whose command line ignores extra words, followed by two of the tools command's options
    server = ["sh", "-c", f"exec {shlex.quote(sys.executable)} -m knime_mcp.demo_server", "sh"]
    code, out, err = run_cli(capsys, "tools", "--", *server, "--format", "json", "--include=echo")
    # Then the server got them (the table is text, every tool listed), and stderr says so, naming both
    assert code == 0 and "delete_record" in out and not out.startswith("[")
    warning = [line for line in err.splitlines() if "after '--'" in line]
    assert len(warning) == 1 and "'--format'" in warning[0] and "'--include=echo'" in warning[0]


def test_help_says_that_words_after_the_double_dash_go_to_the_server(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "call", "--help")
    assert code == 0 and "options too" in " ".join(out.split())


def test_a_document_that_wants_a_key_nobody_gave_is_noted_with_its_schemes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    document = {
        "openapi": "3.0.3",
        "info": {"title": "Keyed", "version": "1"},
        "servers": [{"url": "http://127.0.0.1:9"}],
        "security": [{"ApiKeyAuth": []}, {"BearerAuth": []}],
        "components": {
            "securitySchemes": {
                "ApiKeyAuth": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
                "BearerAuth": {"type": "http", "scheme": "bearer"},
            }
        },
        "paths": {"/things": {"get": {"operationId": "listThings", "responses": {"200": {"description": "ok"}}}}},
    }
    path = tmp_path / "keyed.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    code, _, err = run_cli(capsys, "http-tools", str(path))
    notes = [line for line in err.splitlines() if "without a credential" in line]
    assert code == 0 and len(notes) == 1 and "'ApiKeyAuth'" in notes[0] and "'BearerAuth'" in notes[0]
    assert "--auth" in notes[0] and "the Authentication setting" not in notes[0]
    with_key = run_cli(capsys, "http-tools", str(path), "--base-url", "http://127.0.0.1:9", "--auth", "header",
                       "--secret", "${KEY}")  # fmt: skip
    assert with_key[0] == 0 and "without a credential" not in with_key[2]


def test_a_declined_form_is_explained_in_the_command_lines_words(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "call", "--", *ASKING, "--", "confirm")
    assert code == 4 and "--elicitation defaults" in err
    assert "workflow" not in err and "the node" not in err


def test_a_password_in_a_server_url_is_refused_with_advice_for_the_command_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run_cli(capsys, "tools", "http://user:pw@127.0.0.1:1/mcp")
    assert code == 3 and "contains a password" in err and "--header 'Authorization: Basic ${VAR}'" in err
    assert "KNIME credential" not in err


def test_the_agents_warnings_name_flags_not_knime_settings(
    capsys: pytest.CaptureFixture[str], demo_http_url: str
) -> None:
    with FakeOpenAIEndpoint([answer("Done.")]) as endpoint:
        argv = ["agent", "--base-url", endpoint.base_url, "--model", "fake", demo_http_url, "--prompt", "Hi"]
        code, _, err = run_cli(capsys, *argv, "--deny", "^echo$")
    assert code == 0
    assert "workflow builder" not in err
    assert "'delete_record' is annotated destructive" in err and "--destructive allow" in err
    assert "'echo' matches the tool deny-list" in err and "change --deny" in err


def test_one_tool_left_out_of_two_servers_is_one_warning_for_each_server(
    capsys: pytest.CaptureFixture[str], demo_http_url: str, demo_stdio_command: list[str]
) -> None:
    with FakeOpenAIEndpoint([answer("Done.")]) as endpoint:
        argv = ["agent", "--base-url", endpoint.base_url, "--model", "fake", "--prompt", "Hi"]
        code, _, err = run_cli(capsys, *argv, demo_http_url, shlex.join(demo_stdio_command))
    warnings = [line for line in err.splitlines() if "'delete_record' is annotated destructive" in line]
    assert code == 0 and len(warnings) == 2 and len(set(warnings)) == 2, err
    assert any(demo_http_url in line for line in warnings)


def test_the_agent_names_the_chat_models_base_url_when_it_cannot_connect(
    capsys: pytest.CaptureFixture[str], demo_http_url: str
) -> None:
    argv = ["agent", "--base-url", "http://127.0.0.1:1/v1", "--model", "fake-model", demo_http_url, "--prompt", "Hi"]
    code, _, err = run_cli(capsys, *argv, "--request-timeout", "5")
    assert code == 3 and "Could not connect to the chat model server" in err
    assert "127.0.0.1:1/v1" in err and "[server: fake-model]" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["tools", "http://127.0.0.1:1/mcp", "--format", "parquet"],
        ["tools", "http://127.0.0.1:1/mcp", "--format", "arrow", "--auth", "oauth"],
        ["http-tools", "http://127.0.0.1:1/openapi.json", "--format", "parquet"],
        ["tools", "http://127.0.0.1:1/mcp", "--output", "tools.txt"],
    ],
)
def test_a_table_format_usage_error_comes_before_any_heavy_import(argv: list[str]) -> None:
    code = f"import sys; from knime_mcp.cli.main import main\nprint(main({argv!r}))\n"
    code += "print(sorted(m for m in ('pyarrow', 'pandas', 'mcp', 'anyio', 'pydantic', 'httpx') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["2", "[]"], done.stdout + done.stderr
    assert done.stderr.startswith("Error: --")


def test_a_declined_sampling_request_is_explained_in_the_command_lines_words(
    capsys: pytest.CaptureFixture[str], everything_stdio_command: list[str]
) -> None:
    argv = ["call", "--", *everything_stdio_command, "--", "trigger-sampling-request", "--args", '{"prompt": "Hi"}']
    _, out, err = run_cli(capsys, *argv)
    # The server's result quotes the reason it was given, which says what the command line does
    assert "on the command line knime-mcp answers none" in out
    # and the warning on stderr speaks the command line's words only
    said = [line for line in err.splitlines() if "sampling" in line]
    assert said and all("knime-mcp answers none" in line and "'Answer sampling" not in line for line in said), err
