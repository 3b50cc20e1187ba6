"""A stdio server's environment entry given as VS Code's ``${input:ID}``: the value is the KNIME credential ``ID``'s
password, resolved when the server starts, and never in the spec, its JSON or a table; outside KNIME (the CLI, no
credentials) it fails saying so, as an ``${input:ID}`` header does. Against a real stdio server that tells what its
``API_TOKEN`` holds (tests/servers/env_echo_server.py)."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

from cli_runs import run_cli
from fixtures.python_servers import SERVERS_DIR
from knime_mcp.config import ServerSpec, parse_pasted
from knime_mcp.errors import ConfigError
from knime_mcp.mcp.client import McpClient

SECRET = "env-credential-canary-7c1d"
COMMAND = [sys.executable, str(SERVERS_DIR / "env_echo_server.py")]


def _pasted(env: dict[str, str], inputs: tuple[str, ...] = ("tok",)) -> str:
    server = {"command": COMMAND[0], "args": COMMAND[1:], "env": env}
    declared = [{"id": name, "type": "promptString", "password": True} for name in inputs]
    return json.dumps({"servers": {"echo": server}, "inputs": declared})


def _lookup(name: str) -> tuple[str, str]:
    if name != "tok":
        raise KeyError(name)
    return "", SECRET


async def _digest(spec: ServerSpec, credentials: object = None) -> str:
    async with McpClient(spec, credentials=credentials) as client:  # type: ignore[arg-type]
        result = await client.call_tool("token_digest", {})
    return result.text


def test_the_reference_is_kept_and_survives_json_never_the_secret() -> None:
    spec = parse_pasted(_pasted({"API_TOKEN": "${input:tok}"}))["echo"]
    assert spec.env == {"API_TOKEN": "${input:tok}"}
    assert ServerSpec.from_dict(json.loads(json.dumps(spec.to_dict()))) == spec


@pytest.mark.anyio
async def test_the_server_gets_the_credentials_password_in_its_environment() -> None:
    spec = parse_pasted(_pasted({"API_TOKEN": "${input:tok}"}))["echo"]
    assert await _digest(spec, _lookup) == hashlib.sha256(SECRET.encode()).hexdigest()


@pytest.mark.anyio
async def test_without_credentials_the_reference_fails_naming_the_credential() -> None:
    spec = parse_pasted(_pasted({"API_TOKEN": "${input:tok}"}))["echo"]
    with pytest.raises(ConfigError, match="Credential 'tok' cannot be read here") as raised:
        await _digest(spec)
    assert raised.value.hint is not None and "${" in raised.value.hint


@pytest.mark.anyio
async def test_a_missing_credential_is_named() -> None:
    spec = parse_pasted(_pasted({"API_TOKEN": "${input:other}"}, inputs=("other",)))["echo"]
    with pytest.raises(ConfigError, match="Credential 'other' is not available"):
        await _digest(spec, _lookup)


def test_an_input_the_configuration_does_not_declare_is_refused() -> None:
    with pytest.raises(ConfigError, match="'API_TOKEN' references input 'nope', not declared"):
        parse_pasted(_pasted({"API_TOKEN": "${input:nope}"}))


def test_the_cli_without_a_person_fails_naming_the_variable_that_gives_the_input(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(_pasted({"API_TOKEN": "${input:tok}"}), encoding="utf-8")
    code, out, err = run_cli(capsys, "call", "--config", str(path), "token_digest")
    assert code != 0 and "uses the input 'tok'" in err and "KNIME_MCP_INPUT_TOK" in err and SECRET not in out + err
