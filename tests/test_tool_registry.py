"""The tools table as a registry: stable tool ids, the Kind column, tags that travel with the tools, and selecting
tools by tag (policy, Tool Caller pick), against real servers where a listing is involved."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pyarrow as pa
import pytest

from knime_mcp.calls.listing import list_server_tools, list_servers_tools
from knime_mcp.config import ServerSpec
from knime_mcp.config.pasted import parse_pasted, pasted_tags
from knime_mcp.errors import ConfigError
from knime_mcp.mcp.sync import run_sync
from knime_mcp.seal import is_sealed_here
from knime_mcp.tools.arrow import tools_from_arrow, tools_from_frame, tools_to_arrow, tools_to_frame, tools_to_table
from knime_mcp.tools.http_operation import HttpOperation
from knime_mcp.tools.policy import ToolPolicy
from knime_mcp.tools.tags import all_tags, given_tags, parse_tags, pick_tool, tag_tools
from knime_mcp.tools.tool import MCPTool, ToolAnnotations
from tool_factory import make_tool

READ_ONLY = ToolAnnotations(read_only=True, destructive=False, annotated=True)
DESTRUCTIVE = ToolAnnotations(read_only=False, destructive=True, annotated=True)


def _ids(url: str) -> dict[str, str]:
    listing = run_sync(list_server_tools, ServerSpec(target=url))
    return {tool.tool_name: tool.tool_id for tool in listing.tools}


# -- Tool ids -------------------------------------------------------------------------------------------------------


def test_the_same_server_and_tool_give_the_same_id_in_two_listings_and_in_another_process(demo_http_url: str) -> None:
    first, second = _ids(demo_http_url), _ids(demo_http_url)
    child = subprocess.run(
        [sys.executable, "-c", f"import json, test_tool_registry as t; print(json.dumps(t._ids({demo_http_url!r})))"],
        capture_output=True,
        text=True,
        check=True,
        cwd=str(__import__("pathlib").Path(__file__).parent),
    )
    assert first == second == json.loads(child.stdout.splitlines()[-1])
    assert all(value.startswith("mcp-") and len(value) == len("mcp-") + 16 for value in first.values())
    assert len(set(first.values())) == len(first)


def test_the_id_comes_from_the_servers_own_tool_name_not_the_prefixed_one(demo_http_url: str) -> None:
    plain = run_sync(list_server_tools, ServerSpec(target=demo_http_url)).tools
    prefixed = run_sync(list_server_tools, ServerSpec(target=demo_http_url), prefix="web").tools
    assert [tool.name for tool in prefixed][0].startswith("web_")
    assert [tool.tool_id for tool in plain] == [tool.tool_id for tool in prefixed]


def test_headers_environment_authentication_and_display_name_neither_change_nor_enter_the_id() -> None:
    bare = make_tool("search", server=ServerSpec(target="https://example.com/mcp"))
    dressed = make_tool(
        "search",
        server=ServerSpec(
            target="https://example.com/mcp",
            name="GitHub",
            headers={"Authorization": "Bearer ${GITHUB_TOKEN}", "X-Team": "${TEAM}"},
        ),
    )
    stdio = make_tool("search", server=ServerSpec(target="npx -y @acme/server", env={"TOKEN": "${TOKEN}"}))
    stdio_elsewhere = make_tool("search", server=ServerSpec(target="npx -y @acme/server", env={"TOKEN": "${OTHER}"}))

    assert bare.tool_id == dressed.tool_id
    assert stdio.tool_id == stdio_elsewhere.tool_id


def test_what_is_cosmetic_in_an_address_gives_the_same_id_and_what_is_not_another() -> None:
    def tool_id(target: str, name: str = "search") -> str:
        return make_tool(name, server=ServerSpec(target=target)).tool_id

    assert tool_id("https://Example.COM:443/mcp/") == tool_id("https://example.com/mcp")
    assert tool_id("/usr/local/bin/npx -y @acme/server") == tool_id("npx -y @acme/server")
    assert tool_id(r"C:\\Python\\python.exe -m acme") == tool_id("python -m acme")
    assert tool_id("https://example.com:8443/mcp") != tool_id("https://example.com/mcp")
    assert tool_id("https://example.com/other") != tool_id("https://example.com/mcp")
    assert tool_id("npx -y @acme/other") != tool_id("npx -y @acme/server")
    assert tool_id("https://example.com/mcp", "fetch") != tool_id("https://example.com/mcp")


def test_an_http_tool_id_comes_from_the_base_url_the_method_and_the_path() -> None:
    def http_tool(method: str, path: str, base: str = "https://api.example.com/v1") -> MCPTool:
        operation = HttpOperation(method=method, path=path)
        return make_tool("getPet", server=ServerSpec(target=base, name="Pets"), http=operation)

    get = http_tool("GET", "/pets/{id}")
    assert get.tool_id.startswith("http-") and get.kind_label == "HTTP"
    assert get.tool_id == http_tool("GET", "/pets/{id}", "https://API.example.com/v1/").tool_id
    assert len({get.tool_id, http_tool("DELETE", "/pets/{id}").tool_id, http_tool("GET", "/pets").tool_id}) == 3


# -- Tool ID, Kind and Tags columns ---------------------------------------------------------------------------------


def test_the_tables_show_the_id_the_kind_and_the_tags_with_the_hints_tags_last() -> None:
    tools = tag_tools([make_tool("read", annotations=READ_ONLY), make_tool("wipe", annotations=DESTRUCTIVE)], ["gh"])
    tools.append(make_tool("plain"))

    for table in (tools_to_arrow(tools), tools_to_table(tools)):
        assert table.schema.field("Tags").type == pa.list_(pa.string())
        assert table.column("Tags").to_pylist() == [
            ["demo", "gh", "read-only"],
            ["demo", "gh", "destructive"],
            ["demo"],
        ]
        assert table.column("Kind").to_pylist() == ["MCP"] * 3
        assert table.column("Tool ID").to_pylist() == [tool.tool_id for tool in tools]


def test_tags_travel_with_the_tools_through_arrow_parquet_and_the_knime_table(tmp_path: object) -> None:
    import pyarrow.parquet as pq

    tools = tag_tools([make_tool("echo"), make_tool("add")], ["github", "Team A"])
    path = f"{tmp_path}/tools.parquet"
    pq.write_table(tools_to_arrow(tools), path)

    for back in (
        tools_from_arrow(tools_to_arrow(tools)),
        tools_from_arrow(pq.read_table(path)),
        tools_from_frame(tools_to_frame(tools)),
        [MCPTool.from_json(tool.to_json()) for tool in tools],
    ):
        assert all(tool.tags == ("github", "Team A") for tool in back)
        assert all(is_sealed_here(tool.server) for tool in back)
    # And a lone cell of the extension column (which keeps no seal of its own) still has them
    assert tools_to_arrow(tools).column("MCP Tool")[0].as_py().tags == ("github", "Team A")


def test_a_table_written_before_tags_existed_reads_with_no_tags() -> None:
    storage = tools_to_arrow([make_tool("echo")]).column(0).combine_chunks().storage
    older = pa.StructArray.from_arrays(
        [storage.field(name) for name in storage.type.names if name != "tags"],
        fields=[field for field in storage.type if field.name != "tags"],
    )
    older_cell = json.loads(make_tool("echo").to_json())
    assert "tags" not in older_cell

    (from_struct,) = tools_from_arrow(pa.table({"MCP Tool": older}))
    (from_cell,) = tools_from_frame(__import__("pandas").DataFrame({"MCP Tool": [json.dumps(older_cell)]}))

    assert from_struct.tags == from_cell.tags == ()
    assert is_sealed_here(from_struct.server) and is_sealed_here(from_cell.server)


def test_tags_that_are_not_a_list_of_texts_fail_naming_the_row() -> None:
    cell = json.loads(make_tool("echo").to_json())
    import pandas as pd

    for tags in ("github", [1, 2], {"a": "b"}):
        frame = pd.DataFrame({"MCP Tool": [json.dumps({**cell, "tags": tags})]})
        with pytest.raises(ConfigError, match="row 0: The tool's tags are not a list of texts"):
            tools_from_frame(frame)


def test_tags_are_not_sealed_so_a_table_edited_elsewhere_keeps_its_seal_but_gains_no_hint_tags() -> None:
    # Given a sealed destructive tool whose tags an edited table sets to "read-only" and "github"
    cell = json.loads(make_tool("wipe", annotations=DESTRUCTIVE).to_json())
    import pandas as pd

    (tool,) = tools_from_frame(pd.DataFrame({"MCP Tool": [json.dumps({**cell, "tags": ["read-only", "github"]})]}))

    # Then the server stays sealed (tags select tools, they do not vouch for them)
    assert is_sealed_here(tool.server)
    # And the tool counts as tagged "github" but not "read-only": that tag comes from its annotations alone
    assert all_tags(tool) == ("demo", "github", "destructive")
    policy = ToolPolicy(destructive="allow", tags=("read-only",))
    assert policy.offer([tool]).tools == []


# -- Tags given by a provider ---------------------------------------------------------------------------------------


PASTED = json.dumps(
    {
        "mcpServers": {
            "github": {"url": "https://example.com/github/mcp", "tags": ["code", " Team A ", ""]},
            "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
        }
    }
)


def test_a_pasted_configurations_tags_are_read_per_server_and_other_clients_keys_still_parse() -> None:
    assert pasted_tags(PASTED) == {"github": ("code", "Team A"), "files": ()}
    assert set(parse_pasted(PASTED)) == {"github", "files"}


@pytest.mark.parametrize("tags", ['"code"', "[1]", '["' + "x" * 101 + '"]'])
def test_a_pasted_server_whose_tags_are_not_a_list_of_short_texts_is_refused_naming_it(tags: str) -> None:
    text = '{"mcpServers": {"github": {"url": "https://example.com/mcp", "tags": ' + tags + "}}}"
    for read in (parse_pasted, pasted_tags):
        with pytest.raises(ConfigError, match="Server 'github': \"tags\" must be a list of texts"):
            read(text)


def test_a_listing_gets_its_servers_key_the_configurations_tags_and_the_settings_tags(demo_http_url: str) -> None:
    text = json.dumps(
        {"mcpServers": {"web": {"url": demo_http_url, "tags": ["code", " Team A "]}, "again": {"url": demo_http_url}}}
    )
    listing = run_sync(
        list_servers_tools, parse_pasted(text), tags=parse_tags("internal, code"), server_tags=pasted_tags(text)
    )
    assert {tool.server.name: tool.tags for tool in listing.tools} == {
        "web": ("web", "code", "Team A", "internal"), "again": ("again", "internal", "code"),
    }  # fmt: skip

    lone = run_sync(list_servers_tools, {None: ServerSpec(target=demo_http_url)}, prefix="demo", tags=("x",))
    assert {tool.tags for tool in lone.tools} == {("demo", "x")}


def test_the_tags_given_to_all_of_a_servers_tools_are_the_ones_they_share_without_the_annotations_tags() -> None:
    tools = [
        make_tool("a", tags=("web", "Code", "read-only", "only-a")),
        make_tool("b", tags=("code", "web", "destructive")),
    ]
    assert given_tags(tools) == ("web", "Code")
    assert given_tags([]) == ()


def test_an_mcp_tools_server_name_is_a_tag_wherever_it_was_listed_and_an_http_tools_is_not() -> None:
    tool = make_tool("search", server=parse_pasted(PASTED)["github"])
    assert all_tags(tool) == ("github",)
    api = make_tool("getPet", server=ServerSpec(target="https://api.example.com", name="Pets"),
                    http=HttpOperation(method="GET", path="/pets"))  # fmt: skip
    assert all_tags(api) == ()


def test_parse_tags_strips_drops_empty_ones_and_repeats_in_any_case() -> None:
    assert parse_tags(" github, ,GitHub, Team A,") == ("github", "Team A")
    assert parse_tags("") == ()


# -- Selecting by tag -----------------------------------------------------------------------------------------------


def test_the_policy_offers_only_tools_carrying_any_of_its_tags_without_a_warning_for_each_other() -> None:
    tools = [
        *tag_tools([make_tool("gh_search", annotations=READ_ONLY)], ["github"]),
        *tag_tools([make_tool("sl_post", annotations=DESTRUCTIVE)], ["slack"]),
        make_tool("other", annotations=READ_ONLY),
    ]
    offer = ToolPolicy(destructive="allow", tags=("GitHub",)).offer(tools)
    assert [tool.name for tool in offer.tools] == ["gh_search"] and offer.warnings == []

    by_hint = ToolPolicy(destructive="allow", tags=("read-only",)).offer(tools)
    assert [tool.name for tool in by_hint.tools] == ["gh_search", "other"]

    reason = ToolPolicy(tags=("github",)).check(tools[2])
    assert reason == (
        "tool 'other' carries none of the tags the tool policy selects (github); ask the workflow builder to select "
        "its tags too"
    )


def test_tags_that_select_no_tool_give_one_warning_line() -> None:
    offer = ToolPolicy(tags=("nothing",)).offer([make_tool("a"), make_tool("b")])
    assert offer.tools == [] and offer.warnings == [
        "Not offered to the model: none of the 2 tools carries any of the tags 'nothing'; check the tags in the "
        "tools table's Tags column"
    ]


def test_a_tool_is_picked_by_a_tag_alone_or_by_its_servers_own_name_among_the_tagged() -> None:
    github = ServerSpec(target="https://example.com/github/mcp", name="github")
    gitlab = ServerSpec(target="https://example.com/gitlab/mcp", name="gitlab")

    def listed(tool_name: str, server: ServerSpec, key: str) -> MCPTool:
        tool = make_tool(tool_name, server=server, tags=(key,))
        return dataclasses.replace(tool, name=f"{key}_{tool_name}")

    geo = ServerSpec(target="https://example.com/geo/mcp", name="geo")
    tools = [listed("search", github, "github"), listed("search", gitlab, "gitlab"), listed("geocode", geo, "geo")]
    assert pick_tool(tools, "", ["geo"]).name == "geo_geocode"
    assert pick_tool(tools, "search", ["gitlab"]).name == "gitlab_search"
    assert pick_tool(tools, "github_search", []).name == "github_search"

    with pytest.raises(ConfigError, match="2 tools are called 'search' by their servers: 'github_search'"):
        pick_tool(tools, "search", [])
    with pytest.raises(ConfigError, match=r"Choose the tool to call\. Hint: Available tools carrying any of the tags"):
        pick_tool(tools, "", ["github", "gitlab"])
    with pytest.raises(ConfigError, match=r"No tool carrying any of the tags 'jira'\. Hint: The tools' tags: github"):
        pick_tool(tools, "", ["jira"])


def test_the_server_key_tag_is_kept_when_the_tool_is_renamed() -> None:
    (tool,) = tag_tools([make_tool("echo")], ["demo"])
    assert dataclasses.replace(tool, name="demo_echo").tags == ("demo",)


def test_a_policy_given_its_tags_as_text_reads_them_as_the_settings_do() -> None:
    assert ToolPolicy(tags="github, Slack,GITHUB").tags == ("github", "Slack")  # type: ignore[arg-type]
