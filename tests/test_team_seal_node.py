"""A team's seal key from a KNIME credential (*Team seal key (credential)*), through the nodes on both hosts.

Each "machine" is its own key file (``KNIME_MCP_SEAL_KEY_FILE``), without ``KNIME_MCP_SEAL_KEY``: machine A lists the
bundled demo server over stdio (a command line that a table from data never runs) with the MCP Tool Provider, machine
B calls its ``echo`` with the MCP Tool Caller, or offers it with the Agent Prompter, each naming the credential."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

import knime.extension as knext
import pandas as pd
import pytest

import node_host
from knime_mcp.seal import KEY_FILE_ENV, SHARED_KEY_ENV
from node_contexts import ExecuteContext

pytestmark = pytest.mark.knime_node

TEAM_KEY = secrets.token_hex(32)
OTHER_KEY = secrets.token_hex(32)


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """Become the machine ``name``: a key file of its own, no shared key in the environment."""
    monkeypatch.delenv(SHARED_KEY_ENV, raising=False)

    def become(name: str) -> None:
        monkeypatch.setenv(KEY_FILE_ENV, str(tmp_path / name / "seal.key"))

    return become


def _team(key: str) -> ExecuteContext:
    return ExecuteContext(credentials={"team": ("", key)})


@pytest.fixture
def team_tools(machine: Callable[[str], None]) -> knext.Table:
    """The demo server's echo as machine A lists it with the team's key."""
    from nodes.tool_provider import MCPToolProvider

    machine("a")
    provider = MCPToolProvider()
    provider.server.server = "demo"
    provider.pasted_config = ""
    provider.team_seal_key = "team"
    node_host.set_parameters(provider, selection__include="^echo$", selection__prefix="")
    (tools,) = node_host.execute_node(provider, _team(TEAM_KEY))
    assert TEAM_KEY not in tools.to_pandas().to_csv()
    machine("b")
    return tools


def _call(tools: knext.Table, ctx: ExecuteContext, credential: str = "team") -> Any:
    from nodes.tool_caller import MCPToolCaller

    caller = MCPToolCaller()
    caller.team_seal_key = credential
    node = node_host.set_parameters(caller, tool__name="echo", calls__on_error="FAIL", calls__trust_all_servers=False)
    data = node_host.source_table(pd.DataFrame({"text": ["from the team"]}))
    (table,) = node_host.execute_node(node, ctx, data, tools)
    return table.to_pandas()


def test_machine_b_with_the_same_team_key_credential_runs_machine_as_tools(team_tools: knext.Table) -> None:
    frame = _call(team_tools, _team(TEAM_KEY))
    assert list(frame["Result"]) == ["from the team"]


@pytest.mark.parametrize(("key", "credential"), [(OTHER_KEY, "team"), (TEAM_KEY, "")], ids=["other key", "none"])
def test_machine_b_without_the_team_key_refuses_the_table_saying_what_to_do(
    team_tools: knext.Table, key: str, credential: str
) -> None:
    with pytest.raises(knext.InvalidParametersError) as raised:
        _call(team_tools, _team(key), credential)
    message = str(raised.value)
    assert "A server command line taken from data was refused" in message and "Team seal key (credential)" in message
    assert TEAM_KEY not in message and OTHER_KEY not in message


def test_a_team_key_credential_that_is_not_connected_fails_naming_it(team_tools: knext.Table) -> None:
    with pytest.raises(knext.InvalidParametersError, match="team seal key credential 'team' is not available"):
        _call(team_tools, ExecuteContext())


@pytest.mark.parametrize(("key", "trusted"), [(TEAM_KEY, True), (OTHER_KEY, False)], ids=["same key", "other key"])
def test_the_http_tool_providers_table_is_sealed_with_the_team_key_credential(
    machine: Callable[[str], None], oas_examples: Path, key: str, trusted: bool
) -> None:
    from knime_mcp.seal import is_sealed_here, team_seal_key
    from knime_mcp.tools.arrow import tools_from_frame
    from nodes.http_tool_provider import HTTPToolProvider

    # Given the pet store's operations at the base URL a person set, listed on machine A with the team's key
    machine("a")
    provider = HTTPToolProvider()
    provider.team_seal_key = "team"
    document = str(oas_examples / "3.0/json/petstore.json")
    node_host.set_parameters(
        provider, document__document=document, document__base_url="http://petstore.swagger.io/v2",
        document__trust_flow_variable=False, auth__kind="NONE", auth__credential="", selection__include="^getPetById$",
    )  # fmt: skip
    (table,) = node_host.execute_node(provider, _team(TEAM_KEY), None)
    # When machine B reads the table with the key of its credential, Then its tools are trusted with the same key only
    machine("b")
    with team_seal_key(key):
        servers = [tool.server for tool in tools_from_frame(table.to_pandas())]
        assert servers and all(is_sealed_here(server) is trusted for server in servers)


@pytest.mark.parametrize(
    ("key", "said"), [(TEAM_KEY, "from the team"), (OTHER_KEY, "was refused")], ids=["same key", "other key"]
)
def test_the_agent_prompter_on_machine_b_trusts_the_table_with_the_same_team_key_only(
    team_tools: knext.Table, key: str, said: str
) -> None:
    from agent_runs import API_KEY, agent_node, chat_model_port, run_agent_node
    from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer, tool_calls

    credentials = {"llm": ("", API_KEY), "team": ("", key)}
    with FakeOpenAIEndpoint([tool_calls(("c1", "echo", {"text": "from the team"})), answer("Done.")]) as endpoint:
        model = chat_model_port(endpoint.base_url)
        node = agent_node("Echo.", team_seal_key="team", trust_all_servers=False)
        conversation, _ = run_agent_node(node, ExecuteContext(credentials), model, team_tools)
    (tool_message,) = conversation.query("Role == 'tool'")["Content"]
    assert said in tool_message and key not in conversation.to_csv()


@pytest.mark.parametrize(
    "weak_key", ["00" * 32, "c0ffee" * 11, secrets.token_hex(8)], ids=["zeros", "repeated", "short"]
)
def test_a_weak_team_key_credential_is_refused_saying_how_to_make_one(team_tools: knext.Table, weak_key: str) -> None:
    with pytest.raises(knext.InvalidParametersError, match="not a usable seal key") as raised:
        _call(team_tools, _team(weak_key))
    message = str(raised.value)
    assert "secrets.token_hex(32)" in message and "Team seal key (credential)" in message and weak_key not in message
