"""UTCP manuals on the command line: `utcp-tools` (another name of `http-tools`) and `--utcp` (another spelling of
`--openapi`) on `call`, against the providers on 127.0.0.1 (tests/fixtures/utcp_servers.py)."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest

from cli_runs import run_cli
from fixtures.utcp_servers import caught

KEY_VARIABLE = "KNIME_MCP_TEST_UTCP_CLI_KEY"
HEADER_KEY = ("--auth", "header", "--secret", f"${{{KEY_VARIABLE}}}")


@pytest.fixture()
def api_key(auth_token: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(KEY_VARIABLE, auth_token)
    return auth_token


def test_utcp_tools_lists_a_providers_manual_as_http_tools(
    capsys: pytest.CaptureFixture[str], utcp_provider_url: str, api_key: str
) -> None:
    code, out, err = run_cli(capsys, "utcp-tools", f"{utcp_provider_url}/utcp", *HEADER_KEY, "--format", "json")
    rows = {row["name"]: row for row in json.loads(out)}
    assert code == 0 and set(rows) == {"weather", "shout"}, err
    assert rows["weather"]["server"]["auth"]["header"] == "X-Api-Key" and api_key not in out


def test_http_tools_finds_the_manual_at_utcp_under_a_base_url(
    capsys: pytest.CaptureFixture[str], utcp_provider_url: str
) -> None:
    code, out, err = run_cli(capsys, "http-tools", "--base-url", utcp_provider_url, "--format", "json")
    assert code == 0 and {row["name"] for row in json.loads(out)} == {"weather", "shout"}, err


def test_call_utcp_calls_a_tool_of_the_manual_with_the_persons_key(
    capsys: pytest.CaptureFixture[str], utcp_provider_url: str, api_key: str
) -> None:
    argv = ["call", "--utcp", f"{utcp_provider_url}/utcp", "weather", "--args", '{"city": "Bern"}', *HEADER_KEY]
    code, out, err = run_cli(capsys, *argv)
    assert code == 0 and '"city": "Bern"' in out and '"temperature": 21' in out, err


def test_call_utcp_of_a_manual_file_gives_the_credential_with_base_url_only(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, utcp_provider_url: str, api_key: str
) -> None:
    manual = tmp_path / "manual.json"
    with urllib.request.urlopen(f"{utcp_provider_url}/utcp", timeout=30) as answer:
        manual.write_bytes(answer.read())
    argv = ["call", "--utcp", str(manual), "shout", "--args", '{"text": "hi"}', *HEADER_KEY]
    code, _, err = run_cli(capsys, *argv)
    assert code == 3 and "UTCP manual, read from a file" in err and f"--base-url {utcp_provider_url}" in err, err
    code, out, err = run_cli(capsys, *argv, "--base-url", utcp_provider_url)
    assert code == 0 and '"shouted": "HI"' in out, err


def test_the_tools_a_manual_leaves_out_are_notes_on_stderr(
    capsys: pytest.CaptureFixture[str], utcp_manual_url: str
) -> None:
    code, out, err = run_cli(capsys, "utcp-tools", f"{utcp_manual_url}/hostile/utcp", "--format", "json")
    assert code == 0 and {row["name"] for row in json.loads(out)} == {"steal_by_auth", "own_tool"}
    assert "Note: Left out the UTCP tool 'oauth_tool'" in err and "Note: Left out the UTCP tool 'steal_in_url'" in err
    assert "knime-mcp calls it only at a public address" in err and "pass --base-url http://127.0.0.2" in err
    assert caught(utcp_manual_url) == []
