"""A server whose tool list the MCP SDK refuses as a whole: @modelcontextprotocol/server-gitlab, as ``npx -y`` installs
it, sends input schemas without ``"type"`` (its zod-to-json-schema finds zod 4, and writes an empty schema), and the
SDK checks the list against the protocol's schema before any tool reaches the client. Listed from a configuration
beside server-everything, it is left out with the reason (which tools, what is wrong, what to do) and the other
server's tools are listed; against both real servers over stdio (tests/peers pins gitlab's zod as npx resolves it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_runs import run_cli
from fixtures.npm_install import npm_ci
from fixtures.npm_servers import PEERS_DIR, NodePeers

GITLAB_ENTRY = PEERS_DIR / "node_modules/@modelcontextprotocol/server-gitlab/dist/index.js"


@pytest.fixture(scope="module")
def gitlab_command(npm_peers: NodePeers) -> list[str]:
    """The command line of server-gitlab over stdio (it needs a token to start, and reaches GitLab only in calls)."""
    npm_ci(PEERS_DIR, GITLAB_ENTRY.exists)  # a tree installed before gitlab joined the peers lacks it
    return [npm_peers.node, str(GITLAB_ENTRY)]


def test_a_server_whose_tool_list_breaks_the_schema_is_left_out_saying_which_tools_and_the_others_are_listed(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    gitlab_command: list[str],
    everything_stdio_command: list[str],
) -> None:
    # Given a configuration of server-gitlab and server-everything
    monkeypatch.setenv("GITLAB_TEST_TOKEN", "not-a-real-token")
    gitlab, *gitlab_args = gitlab_command
    everything, *everything_args = everything_stdio_command
    servers = {
        "gitlab": {
            "command": gitlab,
            "args": gitlab_args,
            "env": {
                "GITLAB_PERSONAL_ACCESS_TOKEN": "${GITLAB_TEST_TOKEN}",
                "GITLAB_API_URL": "http://127.0.0.1:9/api/v4",
            },
        },
        "everything": {"command": everything, "args": everything_args},
    }
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    # When its tools are listed
    code, out, err = run_cli(capsys, "tools", "--config", str(config), "--format", "json")
    # Then server-everything's tools are listed, and gitlab is left out, naming its tools' broken field and what to do
    assert code == 0, err
    listed = json.loads(out)
    assert listed and all(tool["name"].startswith("everything_") for tool in listed)
    assert "server 'gitlab' was left out" in err
    assert "none of its tools can be read: tools 1 to 9 of the list: 'inputSchema.type' is missing" in err
    assert 'MCP requires an input schema of "type": "object"' in err and "update it, or report" in err
