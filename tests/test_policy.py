"""Tool policy: allow-list, deny-list and the destructive-tool rule, and the reasons a model is told."""

from __future__ import annotations

import pytest

from knime_mcp.errors import ConfigError
from knime_mcp.policy import ToolPolicy
from knime_mcp.tool import MCPTool, ToolAnnotations
from tool_factory import make_tool

READ_ONLY = ToolAnnotations(read_only=True, destructive=False, idempotent=True)
WRITES = ToolAnnotations(read_only=False, destructive=False)
DESTRUCTIVE = ToolAnnotations(read_only=False, destructive=True, idempotent=True)

SEARCH = make_tool("search", annotations=READ_ONLY)
CREATE = make_tool("create_order", annotations=WRITES)
DELETE = make_tool("delete_record", annotations=DESTRUCTIVE)
UNANNOTATED = make_tool("run_script")


def names(tools: list[MCPTool]) -> list[str]:
    return [tool.name for tool in tools]


def test_the_default_policy_blocks_a_destructive_tool_and_tells_the_model_who_can_allow_it() -> None:
    reason = ToolPolicy().check(DELETE)

    assert reason == (
        "tool 'delete_record' is annotated destructive (MCP counts a tool without hints as destructive) and the "
        "destructive-tool policy blocks it; ask the workflow builder to allow destructive tools"
    )


def test_the_default_policy_lets_read_only_and_non_destructive_writing_tools_through() -> None:
    assert [ToolPolicy().check(tool) for tool in (SEARCH, CREATE)] == [None, None]


def test_the_default_policy_treats_a_tool_without_hints_as_destructive_as_mcp_specifies() -> None:
    assert ToolPolicy().check(UNANNOTATED) is not None


def test_allowing_destructive_tools_lets_every_tool_through() -> None:
    assert ToolPolicy(destructive="allow").apply([SEARCH, CREATE, DELETE, UNANNOTATED]) == (
        [SEARCH, CREATE, DELETE, UNANNOTATED],
        [],
    )


def test_read_only_mode_blocks_a_tool_that_writes_even_when_it_is_not_destructive() -> None:
    reason = ToolPolicy(destructive="read_only").check(CREATE)

    assert reason == (
        "tool 'create_order' is not annotated read-only and the tool policy allows read-only tools only; "
        "ask the workflow builder to allow tools that write"
    )
    assert ToolPolicy(destructive="read_only").check(SEARCH) is None


def test_the_allow_list_must_match_the_whole_name_so_a_longer_name_is_not_admitted() -> None:
    policy = ToolPolicy(allow="search|create_order", destructive="allow")
    longer = make_tool("search_and_purge", annotations=READ_ONLY)

    assert names(policy.apply([SEARCH, CREATE, longer, DELETE])[0]) == ["search", "create_order"]
    assert policy.check(longer) == (
        "tool 'search_and_purge' is not on the tool allow-list 'search|create_order'; "
        "ask the workflow builder to add it to the allow-list"
    )


def test_the_deny_list_matches_anywhere_in_the_name_and_wins_over_the_allow_list() -> None:
    policy = ToolPolicy(allow=".*", deny="delete|drop", destructive="allow")

    assert policy.check(make_tool("db_drop_table")) == (
        "tool 'db_drop_table' matches the tool deny-list 'delete|drop'; "
        "ask the workflow builder to change the deny-list"
    )
    assert names(policy.apply([SEARCH, DELETE])[0]) == ["search"]


def test_a_pattern_written_against_the_server_name_still_applies_to_a_prefixed_tool() -> None:
    prefixed = SEARCH.with_changes(name="crm_search")

    assert ToolPolicy(allow="search").check(prefixed) is None
    assert ToolPolicy(deny="^search$").check(prefixed) is not None


def test_apply_keeps_the_order_of_allowed_tools_and_gives_one_note_per_blocked_tool() -> None:
    allowed, notes = ToolPolicy(deny="^create_").apply([DELETE, SEARCH, CREATE, UNANNOTATED])

    assert names(allowed) == ["search"]
    assert [note.split(" ", 2)[1] for note in notes] == ["'delete_record'", "'create_order'", "'run_script'"]


def test_empty_patterns_from_a_cleared_dialog_mean_no_list() -> None:
    assert ToolPolicy(allow="", deny="", destructive="allow").apply([SEARCH, DELETE])[0] == [SEARCH, DELETE]


@pytest.mark.parametrize(("setting", "label"), [("allow", "tool allow-list"), ("deny", "tool deny-list")])
def test_a_bad_regular_expression_is_a_config_error_naming_the_setting(setting: str, label: str) -> None:
    with pytest.raises(ConfigError) as caught:
        ToolPolicy(**{setting: "get_("})

    assert f"The {label} 'get_(' is not a valid regular expression" in str(caught.value)
    assert "Hint: Use a Python regular expression" in str(caught.value)


def test_an_unknown_destructive_mode_is_a_config_error_listing_the_choices() -> None:
    choices = "use one of allow, block, read_only"
    with pytest.raises(ConfigError, match=f"Unknown destructive-tool policy 'never'; {choices}"):
        ToolPolicy(destructive="never")  # type: ignore[arg-type]


def test_policies_with_the_same_settings_are_equal() -> None:
    assert ToolPolicy(allow="a", deny="b") == ToolPolicy(allow="a", deny="b")


@pytest.mark.anyio
async def test_the_dispatcher_never_calls_a_blocked_tool_and_tells_the_model_why(demo_http_url: str) -> None:
    from knime_mcp.client import McpClient
    from knime_mcp.config import ServerSpec
    from knime_mcp.dispatch import Dispatcher
    from knime_mcp.pool import ClientPool

    async with McpClient(ServerSpec(target=demo_http_url)) as client:
        delete = next(tool for tool in await client.list_tools() if tool.name == "delete_record")
    async with ClientPool() as pool:
        outcome = await Dispatcher(pool, policy=ToolPolicy()).call(delete, {"record_id": "r1"})
    assert outcome.record.status == "blocked" and outcome.result is None
    assert "destructive" in str(outcome.error) and "not made" in str(outcome.error)
