"""The CLI's ``servers search``, ``servers show`` and ``connect``, in-process, against the stand-in registry
(`registry_url`, real recorded entries) and the presets, connecting to servers that run here offline: the
installed server-everything (npx resolves `name@version` to the copy in tests/peers, the folder the test runs in) and
the demo server over HTTP (the registry's remote entry points at it)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from cli_runs import run_cli
from fixtures.npm_servers import PEERS_DIR, NodePeers


def _closed_port_url() -> str:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{closed.getsockname()[1]}"


def test_servers_search_lists_the_presets_and_the_registry_marked_which(
    capsys: pytest.CaptureFixture[str], registry_url: str
) -> None:
    code, out, err = run_cli(capsys, "servers", "search", "time", "--registry", registry_url)
    lines = out.splitlines()
    assert code == 0 and err == ""
    assert lines[1].split()[:3] == ["time", "2026.10.19", "preset"]
    assert ["io.github.domdomegg/time-mcp-pypi", "1.0.6", "registry"] in [line.split()[:3] for line in lines]
    code, out, _ = run_cli(capsys, "servers", "search", "airtable", "--registry", registry_url, "--format", "json")
    (entry,) = json.loads(out)
    assert (entry["name"], entry["version"], entry["source"]) == (
        "io.github.domdomegg/airtable-mcp-server", "1.7.3", registry_url
    )  # fmt: skip


def test_servers_search_says_the_registry_is_unreachable_and_still_offers_the_presets(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run_cli(capsys, "servers", "search", "git", "--registry", _closed_port_url())
    assert code == 0 and "the registry could not be read" in err and "only the presets are listed" in err
    assert [line.split()[0] for line in out.splitlines()[1:-1]] == ["git", "github"]


def test_a_registry_text_cannot_drive_the_terminal_it_is_shown_in(
    capsys: pytest.CaptureFixture[str], registry_url: str
) -> None:
    code, out, _ = run_cli(capsys, "servers", "search", "hostile/terminal", "--registry", registry_url)
    assert code == 0 and "\x1b" not in out and "\x07" not in out and "\\u001b[2J" in out


def test_servers_show_says_what_an_entry_runs_and_the_inputs_it_needs(
    capsys: pytest.CaptureFixture[str], registry_url: str
) -> None:
    name = "io.github.domdomegg/airtable-mcp-server"
    code, out, _ = run_cli(capsys, "servers", "show", name, "--version", "1.7.2", "--registry", registry_url)
    assert code == 0 and out.startswith(f"{name}@1.7.2 (registry {registry_url}, active)")
    assert "Runs: npm package airtable-mcp-server@1.7.2" in out
    assert "AIRTABLE_API_KEY  [environment variable, required, secret]" in out
    code, _, err = run_cli(capsys, "servers", "show", "no-such-preset")
    assert code == 3 and "There is no preset 'no-such-preset'" in err


def test_connect_sets_up_a_preset_writes_it_and_lists_its_tools(
    capsys: pytest.CaptureFixture[str], npm_peers: NodePeers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(PEERS_DIR)  # npx -y finds the pinned version installed here, offline
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"mine": {"url": "https://example.com/mcp"}}, "other": 1}))
    code, out, err = run_cli(capsys, "connect", "everything", "--write", str(config))
    entry = {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything@2026.8.31"]}
    assert code == 0, err
    assert json.loads(out[: out.index("\n}\n") + 2]) == {"mcpServers": {"everything": entry}}
    assert "echo" in out and "get-sum" in out
    assert json.loads(config.read_text()) == {
        "mcpServers": {"mine": {"url": "https://example.com/mcp"}, "everything": entry}, "other": 1
    }  # fmt: skip
    code, out, _ = run_cli(capsys, "tools", "--config", str(config), "--server", "everything")
    assert code == 0 and "get-sum" in out


def test_connect_sets_up_a_registry_package_at_its_pinned_version(
    capsys: pytest.CaptureFixture[str], npm_peers: NodePeers, registry_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(PEERS_DIR)
    name = "io.modelcontextprotocol/everything"
    code, out, err = run_cli(capsys, "connect", name, "--version", "2026.8.31", "--registry", registry_url)
    assert code == 0, err
    assert '"@modelcontextprotocol/server-everything@2026.8.31"' in out and "get-sum" in out


def test_connect_sets_up_a_registry_remote_with_its_secret_header_from_the_environment(
    capsys: pytest.CaptureFixture[str], registry_url: str, demo_http_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = "io.github.knime-mcp-tests/demo"
    monkeypatch.delenv("X_API_KEY", raising=False)
    code, out, err = run_cli(capsys, "connect", name, "--registry", registry_url)
    assert code == 3 and '"X-API-Key": "${X_API_KEY}"' in out
    assert "Note: set X_API_KEY in the environment" in err and "X_API_KEY" in err.splitlines()[-1]
    monkeypatch.setenv("DEMO_KEY", "demo-key-value-0123456789")
    code, out, err = run_cli(capsys, "connect", name, "--registry", registry_url, "--env", "X-API-Key=${DEMO_KEY}")
    assert code == 0, err
    assert f'"url": "{demo_http_url}"' in out and '"X-API-Key": "${DEMO_KEY}"' in out and "create_order" in out
    assert "demo-key-value" not in out + err


def test_connect_refuses_a_hostile_entry_and_a_secret_written_out(
    capsys: pytest.CaptureFixture[str], registry_url: str, tmp_path: Path
) -> None:
    code, out, err = run_cli(capsys, "connect", "io.github.hostile/shell", "--registry", registry_url)
    assert code == 3 and out == "" and "which is not a plain npm package name; it is not run" in err
    code, out, err = run_cli(
        capsys, "connect", "github", "--env", "GITHUB_PERSONAL_ACCESS_TOKEN=ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"
    )
    assert code == 3 and out == "" and "is a secret and was given written out" in err and "ghp_" not in err
    code, out, err = run_cli(capsys, "connect", "memory", "--env", "MEMORY_FILE=/tmp/m.json")
    assert code == 2 and out == "" and "memory@2026.8.31 declares no input 'MEMORY_FILE'" in err
    assert "Its inputs: MEMORY_FILE_PATH" in err
