"""Shaping the tool list: filter, prefix, sanitise and de-duplicate names, and map model names back."""

from __future__ import annotations

import re

import pytest

from knime_mcp.config import ServerSpec
from knime_mcp.errors import ConfigError, ToolCallError
from knime_mcp.tools.names import ToolNameMap, ensure_unique, filter_tools, prefix_tools, sanitize_names
from knime_mcp.tools.tool import MCPTool
from tool_factory import make_tool

VALID_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MEMORY = ServerSpec(target="npx -y @modelcontextprotocol/server-memory", name="memory")


def names(tools: list[MCPTool]) -> list[str]:
    return [tool.name for tool in tools]


TOOLS = [make_tool(name) for name in ("get_issue", "list_issues", "create_issue", "delete_repo")]


def test_include_keeps_tools_whose_name_matches_anywhere() -> None:
    assert names(filter_tools(TOOLS, include="issue")) == ["get_issue", "list_issues", "create_issue"]


def test_exclude_removes_matching_tools_after_include() -> None:
    assert names(filter_tools(TOOLS, include="issue|repo", exclude="^(create|delete)_")) == ["get_issue", "list_issues"]


def test_empty_patterns_keep_every_tool() -> None:
    assert names(filter_tools(TOOLS, include="", exclude="")) == names(TOOLS)


def test_a_bad_include_pattern_is_a_config_error_naming_the_setting() -> None:
    with pytest.raises(ConfigError) as caught:
        filter_tools(TOOLS, include="get_(")

    assert "The include pattern 'get_(' is not a valid regular expression" in str(caught.value)
    assert "Hint: Use a Python regular expression" in str(caught.value)


def test_a_bad_exclude_pattern_names_the_exclude_setting() -> None:
    with pytest.raises(ConfigError, match="The exclude pattern '\\*' is not a valid regular expression"):
        filter_tools(TOOLS, exclude="*")


def test_prefix_renames_tools_but_keeps_the_server_name_for_the_call() -> None:
    prefixed = prefix_tools(TOOLS[:1], "github")

    assert names(prefixed) == ["github_get_issue"]
    assert prefixed[0].tool_name == "get_issue"


def test_a_prefix_ending_in_an_underscore_gets_no_second_one() -> None:
    assert names(prefix_tools(TOOLS[:1], "github_")) == ["github_get_issue"]


def test_an_empty_prefix_changes_nothing() -> None:
    assert prefix_tools(TOOLS, "") == TOOLS


def test_sanitising_leaves_valid_names_alone() -> None:
    assert sanitize_names(TOOLS) == TOOLS


def test_sanitising_replaces_spaces_and_punctuation_and_notes_the_change() -> None:
    (tool,) = sanitize_names([make_tool("Get weather (v2)!")])

    assert tool.name == "Get_weather_v2"
    assert tool.tool_name == "Get weather (v2)!"
    assert tool.notes == (
        "name 'Get weather (v2)!' changed to 'Get_weather_v2': models accept only letters, digits, _ and -, at most 64",
    )


def test_sanitising_strips_accents_and_replaces_other_unicode() -> None:
    assert names(sanitize_names([make_tool("café_crème"), make_tool("検索 files"), make_tool("dot.name")])) == [
        "cafe_creme",
        "files",
        "dot_name",
    ]


def test_a_name_without_any_ascii_letter_gets_a_stable_hashed_name() -> None:
    first = sanitize_names([make_tool("検索"), make_tool("翻訳")])
    again = sanitize_names([make_tool("検索")])

    assert all(VALID_NAME.match(name) and name.startswith("tool_") for name in names(first))
    assert first[0].name != first[1].name
    assert again[0].name == first[0].name


def test_a_500_character_name_is_shortened_to_64_with_a_hash_that_tells_long_names_apart() -> None:
    long_a, long_b = "a" * 499 + "x", "a" * 499 + "y"

    shortened = names(sanitize_names([make_tool(long_a), make_tool(long_b)]))

    assert all(VALID_NAME.match(name) for name in shortened)
    assert [len(name) for name in shortened] == [64, 64]
    assert shortened[0] != shortened[1]
    assert shortened[0].startswith("a" * 55 + "_")


def test_unique_names_stay_as_they_are() -> None:
    assert ensure_unique(TOOLS) == TOOLS


def test_a_collision_gets_a_numeric_suffix_in_list_order_and_a_note_naming_both_tools() -> None:
    tools = [make_tool("search"), make_tool("search", server=MEMORY), make_tool("search", server=MEMORY)]

    unique = ensure_unique(tools)

    assert names(unique) == ["search", "search_2", "search_3"]
    assert unique[0].notes == ()
    assert unique[1].tool_name == "search"
    assert unique[1].notes == (
        f"name 'search' of tool 'search' of {MEMORY.display_name} is also used by tool 'search' of demo; renamed to "
        "'search_2'. "
        "Set a name prefix per server to choose distinct names.",
    )


def test_a_suffix_never_takes_a_name_another_tool_already_has() -> None:
    tools = [make_tool("search"), make_tool("search"), make_tool("search_2")]

    assert names(ensure_unique(tools)) == ["search", "search_3", "search_2"]


def test_names_that_collide_only_after_sanitising_become_unique_and_valid() -> None:
    tools = [make_tool("get weather"), make_tool("get-weather"), make_tool("get_weather"), make_tool("get/weather")]

    shaped = ensure_unique(sanitize_names(tools))

    assert names(shaped) == ["get_weather", "get-weather", "get_weather_2", "get_weather_3"]
    assert [tool.tool_name for tool in shaped] == ["get weather", "get-weather", "get_weather", "get/weather"]


def test_a_suffixed_64_character_name_stays_within_64_characters() -> None:
    name = "n" * 64

    assert names(ensure_unique([make_tool(name), make_tool(name)])) == [name, "n" * 62 + "_2"]


def test_the_shaping_functions_compose_left_to_right() -> None:
    tools = [make_tool("read file"), make_tool("write file"), make_tool("read file", server=MEMORY)]

    shaped = ensure_unique(sanitize_names(prefix_tools(filter_tools(tools, include="^read"), "fs")))

    assert names(shaped) == ["fs_read_file", "fs_read_file_2"]


def test_name_map_offers_valid_unique_names_and_resolves_each_back_to_its_payload() -> None:
    mcp_tools = [make_tool("search"), make_tool("search", server=MEMORY)]
    entries: list[tuple[str, object]] = [(tool.name, tool) for tool in mcp_tools]
    entries += [("Row Filter (workflow)", "workflow:row-filter"), ("x" * 500, "workflow:long")]

    name_map = ToolNameMap(entries)

    assert len(name_map) == 4
    assert all(VALID_NAME.match(name) for name in name_map.names)
    assert name_map.names[:3] == ["search", "search_2", "Row_Filter_workflow"]
    assert [name_map.resolve(name) for name in name_map.names] == [payload for _, payload in entries]
    assert [name_map.original_name(name) for name in name_map.names] == [name for name, _ in entries]
    assert name_map.items() == list(zip(name_map.names, [payload for _, payload in entries], strict=True))


def test_name_map_refuses_an_unknown_name_with_the_offered_ones_as_hint() -> None:
    name_map = ToolNameMap([("search", 1), ("fetch", 2)])

    with pytest.raises(ToolCallError) as caught:
        name_map.resolve("serch")

    assert str(caught.value) == "There is no tool named 'serch'. Hint: Call one of the offered tools: search, fetch."
    assert "serch" not in name_map and "search" in name_map
