"""Tool policy: allow-list, deny-list and the destructive-tool rule, and the reasons a model is told."""

from __future__ import annotations

import mcp_types
import pytest

from knime_mcp.errors import ConfigError
from knime_mcp.tools.policy import ToolPolicy
from knime_mcp.tools.tool import MCPTool, ToolAnnotations
from tool_factory import make_tool

READ_ONLY = ToolAnnotations(read_only=True, destructive=False, idempotent=True, annotated=True)
WRITES = ToolAnnotations(read_only=False, destructive=False, annotated=True)
DESTRUCTIVE = ToolAnnotations(read_only=False, destructive=True, idempotent=True, annotated=True)

SEARCH = make_tool("search", annotations=READ_ONLY)
CREATE = make_tool("create_order", annotations=WRITES)
DELETE = make_tool("delete_record", annotations=DESTRUCTIVE)
UNANNOTATED = make_tool("run_script")


def names(tools: list[MCPTool]) -> list[str]:
    return [tool.name for tool in tools]


def test_the_default_policy_blocks_a_destructive_tool_and_tells_the_model_who_can_allow_it() -> None:
    reason = ToolPolicy().check(DELETE)

    assert reason == (
        "tool 'delete_record' is annotated destructive and the destructive-tool policy blocks it; "
        "ask the workflow builder to allow destructive tools"
    )


def test_the_default_policy_lets_read_only_and_non_destructive_writing_tools_through() -> None:
    assert [ToolPolicy().check(tool) for tool in (SEARCH, CREATE)] == [None, None]


def test_the_default_policy_allows_a_tool_without_annotations_as_most_fastmcp_servers_send_them() -> None:
    assert ToolPolicy().check(UNANNOTATED) is None


def test_treating_unannotated_tools_as_destructive_blocks_them_and_names_the_setting() -> None:
    reason = ToolPolicy(unannotated_destructive=True).check(UNANNOTATED)

    assert reason == (
        "tool 'run_script' has no MCP annotations, which the tool policy counts as destructive; "
        "ask the workflow builder to allow unannotated or destructive tools"
    )
    assert ToolPolicy(unannotated_destructive=True).check(CREATE) is None


@pytest.mark.parametrize(
    "hints",
    [
        mcp_types.ToolAnnotations(read_only_hint=False),
        mcp_types.ToolAnnotations(destructive_hint=True),
        mcp_types.ToolAnnotations(open_world_hint=False),
    ],
)
def test_a_tool_with_annotations_takes_the_spec_defaults_for_hints_it_leaves_out(
    hints: mcp_types.ToolAnnotations,
) -> None:
    tool = make_tool("write_file", annotations=ToolAnnotations.from_sdk(hints))

    assert "annotated destructive" in str(ToolPolicy().check(tool))


def test_a_title_alone_is_no_annotation_so_the_tool_counts_as_unannotated() -> None:
    hints = ToolAnnotations.from_sdk(mcp_types.ToolAnnotations(title="Write"))

    assert not hints.annotated and ToolPolicy().check(make_tool("write_file", annotations=hints)) is None


def test_the_offer_leaves_out_blocked_tools_and_names_the_unannotated_ones_it_keeps() -> None:
    offer = ToolPolicy().offer([SEARCH, DELETE, UNANNOTATED])

    assert names(offer.tools) == ["search", "run_script"]
    assert offer.unannotated == ["run_script"]
    assert offer.warnings == [
        "Not offered to the model: tool 'delete_record' is annotated destructive and the destructive-tool policy "
        "blocks it; ask the workflow builder to allow destructive tools",
        "Offered without MCP annotations, so not known to be safe: 'run_script'; switch on 'Treat unannotated tools "
        "as destructive' (CLI: --unannotated-destructive) to block them",
    ]


def test_the_offer_names_no_unannotated_tool_when_destructive_tools_are_allowed_anyway() -> None:
    offer = ToolPolicy(destructive="allow").offer([UNANNOTATED])

    assert names(offer.tools) == ["run_script"] and offer.warnings == []


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


def test_the_deny_list_ignores_case_so_a_capitalised_tool_name_cannot_slip_past_it() -> None:
    # Given a deny-list written in lower case and a server that capitalises its tool names
    policy = ToolPolicy(deny="delete_.*", destructive="allow")
    capitalised = make_tool("Delete_File")

    # When the policy judges the capitalised tool
    reason = policy.check(capitalised)

    # Then it is blocked, as its lower-case twin is
    assert reason is not None and "matches the tool deny-list 'delete_.*'" in reason
    assert names(policy.apply([SEARCH, capitalised, DELETE])[0]) == ["search"]


def test_the_allow_list_ignores_case_but_still_matches_the_whole_name() -> None:
    # Given an allow-list written in lower case
    policy = ToolPolicy(allow="get_.*", destructive="allow")

    # When tools differing only in case, and a tool the pattern matches only in part, are judged
    allowed = policy.apply([make_tool("GET_Weather"), make_tool("get_weather"), make_tool("forget_weather")])[0]

    # Then both spellings are admitted and the partial match is not
    assert names(allowed) == ["GET_Weather", "get_weather"]


def test_a_pattern_written_against_the_server_name_still_applies_to_a_prefixed_tool() -> None:
    prefixed = SEARCH.with_changes(name="crm_search")

    assert ToolPolicy(allow="search").check(prefixed) is None
    assert ToolPolicy(deny="^search$").check(prefixed) is not None


def test_apply_keeps_the_order_of_allowed_tools_and_gives_one_note_per_blocked_tool() -> None:
    allowed, notes = ToolPolicy(deny="^create_").apply([DELETE, SEARCH, CREATE, UNANNOTATED])

    assert names(allowed) == ["search", "run_script"]
    assert [note.split(" ", 2)[1] for note in notes] == ["'delete_record'", "'create_order'"]


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
    from knime_mcp.calls.dispatch import Dispatcher
    from knime_mcp.calls.pool import ClientPool
    from knime_mcp.config import ServerSpec
    from knime_mcp.mcp.client import McpClient

    async with McpClient(ServerSpec(target=demo_http_url)) as client:
        delete = next(tool for tool in await client.list_tools() if tool.name == "delete_record")
    async with ClientPool() as pool:
        outcome = await Dispatcher(pool, policy=ToolPolicy()).call(delete, {"record_id": "r1"})
    assert outcome.record.status == "blocked" and outcome.result is None
    assert "destructive" in str(outcome.error) and "not made" in str(outcome.error)


@pytest.mark.anyio
async def test_a_server_without_annotations_keeps_its_tools_under_the_default_policy(paged_server_url: str) -> None:
    from knime_mcp.config import ServerSpec
    from knime_mcp.mcp.client import McpClient

    async with McpClient(ServerSpec(target=paged_server_url)) as client:
        tools = await client.list_tools()

    offer = ToolPolicy().offer(tools)
    assert len(offer.tools) == 25 and offer.left_out == []
    assert offer.unannotated == [f"tool_{number:02d}" for number in range(25)]
    assert ToolPolicy(unannotated_destructive=True).offer(tools).tools == []


@pytest.mark.anyio
async def test_a_tool_that_runs_only_as_a_task_is_offered_and_called(
    everything_stdio_command: list[str],
) -> None:
    import shlex

    from knime_mcp.calls.dispatch import Dispatcher
    from knime_mcp.calls.listing import list_server_tools
    from knime_mcp.calls.pool import ClientPool
    from knime_mcp.config import ServerSpec

    listing = await list_server_tools(ServerSpec(target=shlex.join(everything_stdio_command)))
    research = next(tool for tool in listing.tools if tool.name == "simulate-research-query")

    assert research.task_required and research.notes == ()
    offer = ToolPolicy(destructive="allow").offer(listing.tools)
    assert {"simulate-research-query", "echo"} <= set(names(offer.tools)) and offer.warnings == []
    async with ClientPool() as pool:
        outcome = await Dispatcher(pool).call(research, {"topic": "MCP"})
    assert outcome.ok and outcome.result is not None
    assert outcome.result.text.startswith("# Research Report: MCP")
