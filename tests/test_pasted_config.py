"""Pasted MCP configurations (Claude Desktop, Cursor, VS Code): read into named servers that connect, with secrets
refused by the reference to write instead, and malformed text refused with an error naming what is wrong."""

from __future__ import annotations

import json
import shlex

import pytest

from knime_mcp.config import MAX_PASTED_CHARS, AuthRef, ServerSpec, parse_pasted
from knime_mcp.errors import ConfigError
from knime_mcp.mcp.client import McpClient

SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4"


def _refused(config: object, *words: str) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        parse_pasted(config if isinstance(config, str) else json.dumps(config))
    text = str(caught.value)
    assert SECRET not in text
    for word in words:
        assert word in text
    return caught.value


def test_claude_desktop_servers_become_named_specs_in_order() -> None:
    specs = parse_pasted(
        json.dumps(
            {
                "mcpServers": {
                    "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
                    "github": {"command": "docker", "args": ["run", "-i"], "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}},
                    "remote": {"url": "https://example.com/mcp", "headers": {"X-Team": "data"}},
                    "events": {"type": "sse", "url": "https://example.com/sse"},
                }
            }
        )
    )
    assert list(specs) == ["memory", "github", "remote", "events"]
    assert specs["memory"] == ServerSpec(
        target="npx -y @modelcontextprotocol/server-memory", transport="stdio", name="memory"
    )
    assert specs["github"].env == {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}
    assert (specs["remote"].transport, specs["remote"].headers) == ("auto", {"X-Team": "data"})
    assert specs["events"].transport == "sse"


def test_vs_code_inputs_become_knime_credentials_and_env_references_become_variables() -> None:
    specs = parse_pasted(
        json.dumps(
            {
                "inputs": [{"type": "promptString", "id": "github-pat", "password": True}, {"id": "key"}],
                "servers": {
                    "github": {
                        "type": "http",
                        "url": "https://api.githubcopilot.com/mcp/",
                        "headers": {"Authorization": "Bearer ${input:github-pat}"},
                    },
                    "search": {"url": "https://example.com/mcp", "headers": {"X-API-Key": "${input:key}"}},
                    "local": {"command": "uvx", "args": ["server", "--dir", "${env:HOME}"], "env": {"A": "${env:B}"}},
                },
            }
        )
    )
    assert specs["github"].transport == "streamable-http"
    assert specs["github"].headers == {}
    assert specs["github"].auth == AuthRef(kind="bearer", credential="github-pat")
    assert specs["search"].auth == AuthRef(kind="header", header="X-API-Key", credential="key")
    assert specs["local"].command == ["uvx", "server", "--dir", "${HOME}"]
    assert specs["local"].env == {"A": "${B}"}


def test_vs_code_settings_wrapper_is_read() -> None:
    assert list(parse_pasted('{"mcp": {"servers": {"a": {"url": "http://127.0.0.1:1/mcp"}}}}')) == ["a"]


def test_a_literal_header_secret_is_refused_naming_the_credential_or_variable_to_write() -> None:
    error = _refused(
        {"mcpServers": {"gh": {"url": "https://x.example/mcp", "headers": {"Authorization": f"Bearer {SECRET}"}}}},
        "'gh'",
        "'Authorization'",
    )
    assert error.hint is not None
    assert '"Authorization": "Bearer ${input:CREDENTIAL}"' in error.hint
    assert "${VARIABLE}" in error.hint


def test_a_literal_env_secret_is_refused_naming_the_variable_to_write() -> None:
    error = _refused({"mcpServers": {"gh": {"command": "npx", "env": {"GITHUB_TOKEN": SECRET}}}}, "'GITHUB_TOKEN'")
    assert error.hint is not None and '"GITHUB_TOKEN": "${GITHUB_TOKEN}"' in error.hint


def test_a_credential_shaped_env_value_is_refused_whatever_its_name() -> None:
    _refused({"mcpServers": {"gh": {"command": "npx", "env": {"PAT": SECRET}}}}, "'PAT'", "${PAT}")


def test_a_secret_in_the_arguments_is_refused_by_position() -> None:
    _refused({"mcpServers": {"gh": {"command": "npx", "args": ["server", SECRET]}}}, "argument 2")


def test_a_secret_in_the_url_query_is_refused_naming_the_server() -> None:
    _refused({"mcpServers": {"s": {"url": f"https://x.example/mcp?token={SECRET}"}}}, "Server 's'", "'token'")


@pytest.mark.parametrize(
    ("server", "words"),
    [
        ({"command": "npx", "env": {"TOKEN": "${input:other}"}}, ("'TOKEN'", "'other'")),
        ({"command": "npx", "args": ["--token", "${input:pat}"]}, ("command line",)),
        ({"url": "https://x.example/mcp", "headers": {"Authorization": "Basic ${input:pat}"}}, ("'Authorization'",)),
        ({"url": "https://x.example/mcp", "headers": {"Authorization": "Bearer ${input:other}"}}, ("'other'",)),
    ],
)
def test_an_input_no_credential_can_stand_for_is_refused(server: dict, words: tuple[str, ...]) -> None:
    _refused({"inputs": [{"id": "pat"}], "servers": {"s": server}}, "Server 's'", *words)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('{"mcpServers": {"a": ', ("not JSON", "line 1")),
        ("[]", ("names no servers",)),
        ('{"mcpServers": {}}', ("names no servers",)),
        ('{"mcpServers": {"a": []}}', ("'a'", "not an object")),
        ('{"mcpServers": {"a": {}}}', ("'a'", '"command"', '"url"')),
        ('{"mcpServers": {"a": {"command": "x", "url": "http://h/mcp"}}}', ("either",)),
        ('{"mcpServers": {"a": {"command": ["x"]}}}', ('"command" must be text',)),
        ('{"mcpServers": {"a": {"command": "x", "env": {"A": 1}}}}', ('"env"',)),
        ('{"mcpServers": {"a": {"command": "x", "type": "carrier-pigeon"}}}', ("unknown type",)),
        ('{"servers": {"a": {"command": "x"}}, "inputs": {}}', ('"inputs"',)),
        ("[" * 100_000 + "]" * 100_000, ("configuration",)),
        (" " * (MAX_PASTED_CHARS + 1), (f"{MAX_PASTED_CHARS:,}",)),
    ],
)
def test_malformed_configurations_are_refused_with_what_is_wrong(text: str, words: tuple[str, ...]) -> None:
    _refused(text, *words)


def test_too_many_servers_are_refused() -> None:
    _refused({"mcpServers": {f"s{n}": {"command": "x"} for n in range(101)}}, "101 servers")


@pytest.mark.anyio
async def test_pasted_servers_connect_over_stdio_and_http(demo_stdio_command: list[str], demo_http_url: str) -> None:
    command, *args = demo_stdio_command
    specs = parse_pasted(
        json.dumps(
            {
                "mcpServers": {
                    "local": {"command": command, "args": args},
                    "remote": {"type": "http", "url": demo_http_url},
                }
            }
        )
    )
    assert specs["local"].target == shlex.join(demo_stdio_command)
    for spec in specs.values():
        async with McpClient(spec) as client:
            assert "echo" in {tool.name for tool in await client.list_tools()}


@pytest.mark.anyio
async def test_a_vs_code_input_sends_the_knime_credential(auth_server_url: str, auth_token: str) -> None:
    pasted = {
        "inputs": [{"id": "token", "type": "promptString", "password": True}],
        "servers": {"auth": {"url": auth_server_url, "headers": {"Authorization": "Bearer ${input:token}"}}},
    }
    spec = parse_pasted(json.dumps(pasted))["auth"]
    async with McpClient(spec, credentials=lambda name: ("", auth_token) if name == "token" else ("", "")) as client:
        assert await client.list_tools()


def test_a_literal_secret_a_credential_cannot_stand_for_is_refused_naming_only_the_variable() -> None:
    error = _refused(
        {"mcpServers": {"s": {"url": "https://x.example/mcp", "headers": {"Authorization": f"token {SECRET}"}}}},
        "'Authorization'",
    )
    assert error.hint is not None and "input:" not in error.hint and '"token ${VARIABLE}"' in error.hint
