"""The tools table as a registry through the nodes (Given/When/Then), on the headless host and both real KNIME legs:
the Tool ID, Kind and Tags columns of both providers, tags a person gives (a setting, a pasted configuration's
"tags"), and selecting tools by tag in the Tool Caller and the Agent Prompter."""

from __future__ import annotations

import json
from typing import Any

import knime.extension as knext
import pandas as pd
import pytest

import node_host
from agent_runs import API_KEY, agent_node, chat_model_port, offered_tools, run_agent_node
from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer
from knime_mcp.calls.listing import list_server_tools
from knime_mcp.config import ServerSpec
from knime_mcp.mcp.sync import run_sync
from knime_mcp.seal import is_sealed_here
from knime_mcp.tools.arrow import tools_from_frame
from node_contexts import ConfigureContext, ExecuteContext

pytestmark = pytest.mark.knime_node


def _provider(**settings: Any) -> Any:
    import extension

    node = extension.MCPToolProvider()
    node.pasted_config = settings.pop("pasted_config", "")
    defaults = {"server__server": "", "selection__prefix": "", "selection__tags": ""}
    return node_host.set_parameters(node, **{**defaults, **settings})


def _pasted(demo_http_url: str, everything_stdio_command: list[str]) -> str:
    """The demo server over HTTP as "web" (tagged "demo" there) and server-everything over stdio as "local"."""
    node, *args = everything_stdio_command
    servers = {
        "web": {"url": demo_http_url, "tags": ["demo", "read"]},
        "local": {"command": node, "args": args},
    }
    return json.dumps({"mcpServers": servers})


@pytest.fixture(scope="module")
def registry_table(demo_http_url: str, everything_stdio_command: list[str]) -> knext.Table:
    """The provider's table of a pasted configuration of two servers, with the *Tags* setting "Team A"."""
    node = _provider(pasted_config=_pasted(demo_http_url, everything_stdio_command), selection__tags="Team A, ")
    (table,) = node_host.execute_node(node, ExecuteContext())
    return table


def test_configure_declares_the_tool_id_and_kind_as_text_and_the_tags_as_a_list_of_texts() -> None:
    (schema,) = node_host.configure_node(_provider(server__server="http://nonexistent.invalid/mcp"), ConfigureContext())
    names = schema.column_names
    assert names[names.index("Tool ID") :][:4] == ["Tool ID", "Kind", "Tags", "App"]
    assert schema["Tool ID"].ktype == schema["Kind"].ktype == knext.string()
    assert schema["Tags"].ktype == knext.list_(knext.string())


def test_the_provider_tags_each_tool_with_its_servers_key_the_configurations_tags_the_setting_and_its_hints(
    registry_table: knext.Table, demo_http_url: str
) -> None:
    # Given the table the provider made of a pasted configuration (fixture), as KNIME hands it downstream
    frame = registry_table.to_pandas()
    tags = {name: list(tags) for name, tags in zip(frame["Name"], frame["Tags"], strict=True)}

    # Then each tool carries its server's key, that server's "tags", the setting's tags, and its hints' tag
    assert tags["web_add"] == ["web", "demo", "read", "Team A", "read-only"]
    assert tags["web_delete_record"] == ["web", "demo", "read", "Team A", "destructive"]
    assert tags["local_echo"][:2] == ["local", "Team A"]
    assert set(frame["Kind"]) == {"MCP"}
    # And the ids are the ones any listing of the same server gives, whatever the prefix
    listed = run_sync(list_server_tools, ServerSpec(target=demo_http_url)).tools
    ids = dict(zip(frame["Name"], frame["Tool ID"], strict=True))
    assert {f"web_{tool.tool_name}": tool.tool_id for tool in listed}.items() <= ids.items()
    # And the tools read back from the table carry their tags, still sealed
    tools = {tool.name: tool for tool in tools_from_frame(frame)}
    assert tools["web_add"].tags == ("web", "demo", "read", "Team A")
    assert is_sealed_here(tools["local_echo"].server)


def test_a_lone_server_is_tagged_with_the_name_prefix_and_the_setting(demo_http_url: str) -> None:
    node = _provider(server__server=demo_http_url, selection__prefix="demo", selection__tags="x")
    (table,) = node_host.execute_node(node, ExecuteContext())
    frame = table.to_pandas()
    assert [list(tags)[:2] for tags in frame["Tags"]] == [["demo", "x"]] * len(frame)


def test_the_http_tool_provider_gives_its_tools_the_kind_http_and_its_tags(http_api_url: str) -> None:
    import extension

    node = node_host.set_parameters(
        extension.HTTPToolProvider(),
        document__document=f"{http_api_url}/openapi.json",
        document__base_url="",
        selection__prefix="shop",
        selection__tags="orders",
    )
    (table,) = node_host.execute_node(node, ExecuteContext(), None)
    frame = table.to_pandas()
    assert set(frame["Kind"]) == {"HTTP"} and all(tool_id.startswith("http-") for tool_id in frame["Tool ID"])
    assert all(list(tags)[:2] == ["shop", "orders"] for tags in frame["Tags"])


# -- Tool Caller ----------------------------------------------------------------------------------------------------


def _caller(**settings: object) -> Any:
    from nodes.tool_caller import MCPToolCaller

    return node_host.set_parameters(MCPToolCaller(), **{"tool__name": "", "tool__tags": "", **settings})


def test_the_tool_caller_picks_by_tag_and_the_servers_own_name(registry_table: knext.Table) -> None:
    # Given two servers' "echo" tools, web_echo (the demo's) and local_echo (server-everything's)
    data = node_host.source_table(pd.DataFrame({"text": ["hi"], "message": ["hi"]}))
    # When the caller names "echo" among the tools tagged "local"
    (table,) = node_host.execute_node(_caller(tool__name="echo", tool__tags="LOCAL"), ExecuteContext(), data,
                                      registry_table)  # fmt: skip
    # Then server-everything's echo answered
    assert table.to_pandas()["Result"].tolist() == ["Echo: hi"]


def test_the_tool_caller_says_when_tags_select_no_tool_or_several(registry_table: knext.Table) -> None:
    data = node_host.source_table(pd.DataFrame({"text": ["hi"]}))
    with pytest.raises(
        knext.InvalidParametersError, match=r"No tool carrying any of the tags 'jira'\. Hint: The tools' tags: web"
    ):
        node_host.execute_node(_caller(tool__tags="jira"), ExecuteContext(), data, registry_table)
    with pytest.raises(
        knext.InvalidParametersError, match="2 tools are called 'echo' by their servers: 'web_echo', 'local_echo'"
    ):
        node_host.execute_node(_caller(tool__name="echo"), ExecuteContext(), data, registry_table)


# -- Agent Prompter -------------------------------------------------------------------------------------------------


def test_the_agent_offers_only_the_tools_carrying_a_tag_it_is_given(registry_table: knext.Table) -> None:
    # Given the registry table and "Only tools tagged" set to the demo server's configuration tag and read-only
    node = agent_node("Hi", only_tagged="demo", destructive="ALLOW")
    with FakeOpenAIEndpoint([answer("Hello.")]) as endpoint:
        run_agent_node(node, ExecuteContext({"llm": ("", API_KEY)}), chat_model_port(endpoint.base_url),
                       registry_table)  # fmt: skip
    # Then the model saw only the web server's tools, the destructive one too (the policy allows it here)
    offered = offered_tools(endpoint.requests[0])
    assert offered and all(name.startswith("web_") for name in offered) and "web_delete_record" in offered

    node = agent_node("Hi", only_tagged="read-only, local", destructive="ALLOW")
    with FakeOpenAIEndpoint([answer("Hello.")]) as endpoint:
        run_agent_node(node, ExecuteContext({"llm": ("", API_KEY)}), chat_model_port(endpoint.base_url),
                       registry_table)  # fmt: skip
    offered = offered_tools(endpoint.requests[0])
    assert "web_add" in offered and "web_delete_record" not in offered and "local_echo" in offered


@pytest.mark.parametrize("node_id", ["AgentPrompter", "AgentChat"])
def test_both_agent_nodes_hand_only_tools_tagged_to_the_tool_policy(node_id: str) -> None:
    import extension

    node = getattr(extension, node_id)()
    node.only_tagged = " github, Slack,github "
    assert node._config().policy.tags == ("github", "Slack")
