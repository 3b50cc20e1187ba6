"""The tool search's index (knime_mcp.agent.tool_search): BM25 over what each tool says about itself finds the tool
for a task described in other words, among the 3,003 tools `tests/servers/many_tools_server.py` lists, and follows a
changed tool set; and what the offer (knime_mcp.agent.tool_offer) makes of the budget, pins and found tools."""

from __future__ import annotations

import shlex
import sys

import anyio
import pytest

from fixtures.python_servers import SERVERS_DIR
from knime_mcp.agent.config import ToolBudget
from knime_mcp.agent.tool_offer import SEARCH_TOOL, ToolOffer
from knime_mcp.agent.tool_search import DEFAULT_RESULTS, ToolIndex
from knime_mcp.calls.dispatch import LocalTool
from knime_mcp.calls.listing import list_server_tools
from knime_mcp.config import ServerSpec
from knime_mcp.errors import ConfigError, ToolCallError
from knime_mcp.tools.results import ToolResult
from knime_mcp.tools.tool import MCPTool
from tool_factory import make_tool, object_schema

MANY = ServerSpec(target=shlex.join([sys.executable, str(SERVERS_DIR / "many_tools_server.py")]), name="many")


@pytest.fixture(scope="module")
def many_tools() -> list[MCPTool]:
    return anyio.run(lambda: list_server_tools(MANY)).tools


def _index(tools: list[MCPTool]) -> ToolIndex:
    return ToolIndex([(tool.name, tool) for tool in tools])


def _names(index: ToolIndex, query: str) -> list[str]:
    return [hit.name for hit in index.search(query)]


@pytest.mark.parametrize(
    ("task", "tool"),
    [
        ("change 30 degrees celsius into fahrenheit", "convert_temperature"),
        ("give me a count of the payslips that payroll keeps", "payroll_count_payslips"),
        ("put the clinic bookings away in storage, archive them", "clinic_archive_bookings"),
    ],
)
def test_a_task_described_in_other_words_finds_its_tool_first_among_thousands(
    many_tools: list[MCPTool], task: str, tool: str
) -> None:
    # Given an index of the thousands of tools of one server
    index = _index(many_tools)
    assert len(index) == len(many_tools) > 3000
    # When the model searches with a description of its task
    hits = index.search(task)
    # Then the tool for it comes first, the hits best first, each with a score above 0
    assert hits[0].name == tool and hits[0].tool.name == tool
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)
    assert all(hit.score > 0 for hit in hits) and len(hits) <= DEFAULT_RESULTS


def test_a_query_with_no_word_in_common_with_any_tool_finds_nothing(many_tools: list[MCPTool]) -> None:
    index = _index(many_tools)
    assert index.search("zebra quantum xylophone") == []
    assert index.search("the of and") == []  # stop words only
    assert index.search("") == []


def test_names_are_split_into_words_and_parameters_and_the_server_name_are_searched_too() -> None:
    # Given tools whose only mention of a word is in a camelCase name, a parameter's description, or a server name
    gitlab = ServerSpec(target="http://127.0.0.1:1/mcp", name="gitlab")
    tools = [
        make_tool("getWeatherForecast", description="Look something up."),
        make_tool("lookup", input_schema=object_schema(code={"type": "string", "description": "A postal zipcode."})),
        make_tool("list_projects", server=gitlab, description="List the projects."),
        make_tool("list_projects_2", tool_name="list_projects", description="List the projects."),
    ]
    index = _index(tools)
    # Then each is found by that word
    assert _names(index, "weather forecast")[0] == "getWeatherForecast"
    assert _names(index, "zipcode") == ["lookup"]
    assert _names(index, "gitlab projects")[0] == "list_projects"


def test_a_word_finds_the_other_forms_of_it_and_ranks_the_form_it_was_given_in_first() -> None:
    # Given tools that use "running", "run" and "repositories"
    tools = [
        make_tool("start", description="Run a pipeline."),
        make_tool("totals", description="Running totals of the sales."),
        make_tool("forks", description="List the forks of the repositories."),
    ]
    index = _index(tools)
    # Then a search finds them by the other forms of those words, the tool using the word as searched first
    assert _names(index, "running") == ["totals", "start"]
    assert _names(index, "run") == ["start", "totals"]
    assert _names(index, "repository") == ["forks"]


def test_a_name_with_capitals_inside_is_found_whole_and_by_its_parts() -> None:
    index = _index([make_tool("read_query", description="Run a query on a SQLite database."), make_tool("getIssue")])
    assert _names(index, "SQLite") == ["read_query"] and _names(index, "sqlite") == ["read_query"]
    assert _names(index, "issue") == ["getIssue"] and _names(index, "getIssue") == ["getIssue"]


def test_nested_parameters_their_referenced_definitions_and_allowed_values_are_searched_but_unused_ones_not() -> None:
    # Given schemas whose words are only in an array's items, a referenced definition, an enum and an unused definition
    observations = {"type": "array", "description": "What is known of the entity."}
    entities = {"type": "array", "items": object_schema(observations=observations)}
    person = object_schema(surname={"type": "string"})
    hire = {
        **object_schema(who={"$ref": "#/$defs/person"}),
        "$defs": {"person": person, "unused": {"description": "A walrus."}},
    }
    scheme = {"anyOf": [{"enum": ["light", "dark"]}, {"type": "null"}]}
    tools = [
        make_tool("add", input_schema=object_schema(entities=entities)),
        make_tool("hire", input_schema=hire),
        make_tool("emulate", input_schema=object_schema(scheme=scheme)),
    ]
    index = _index(tools)
    # Then each is found by those words, and none by the unused definition's
    assert _names(index, "observations known") == ["add"]
    assert _names(index, "surname") == ["hire"]
    assert _names(index, "dark") == ["emulate"]
    assert _names(index, "walrus") == []


def test_an_update_with_other_tools_finds_the_new_and_no_longer_the_removed_ones() -> None:
    # Given an index of two tools
    old, kept = make_tool("convert_temperature", description="Celsius to Fahrenheit."), make_tool("echo")
    index = _index([old, kept])
    assert _names(index, "celsius") == ["convert_temperature"]
    # When a server's tools changed: one removed, one added
    index.update([("echo", kept), ("translate_morse", make_tool("translate_morse", description="Morse code."))])
    # Then the search finds the new tool, and no longer the removed one
    assert _names(index, "morse code") == ["translate_morse"] and _names(index, "celsius") == []
    assert len(index) == 2


def test_an_index_of_no_tools_finds_nothing_and_finds_the_tools_an_update_brings() -> None:
    index = _index([])
    assert len(index) == 0 and index.search("anything") == []
    index.update([("deploy", make_tool("deploy", description="Deploy the apps."))])
    assert _names(index, "deploying apps") == ["deploy"]


def test_an_update_with_the_same_tools_keeps_the_index() -> None:
    tools = [make_tool("echo"), make_tool("add")]
    index = _index(tools)
    built = index._retriever
    index.update([(tool.name, tool) for tool in [make_tool("echo"), make_tool("add")]])  # equal, not identical
    assert index._retriever is built


# -- the offer -------------------------------------------------------------------------------------------------------


def _search(offer: ToolOffer, query: str) -> ToolResult:
    tool = offer.resolve(SEARCH_TOOL)
    assert isinstance(tool, LocalTool)
    return anyio.run(tool.run, {"query": query})


def test_tools_within_the_budget_are_all_offered_without_a_search_tool() -> None:
    tools = [make_tool(f"tool_{number}") for number in range(3)]
    offer = ToolOffer(tools, "f", ToolBudget(tools=3))
    assert offer.offered == ["tool_0", "tool_1", "tool_2"] and offer.warnings == []


def test_over_the_budget_the_pinned_tools_and_the_search_tool_are_offered_and_a_search_offers_what_it_found(
    many_tools: list[MCPTool],
) -> None:
    # Given more tools than the budget, two of them pinned
    offer = ToolOffer(many_tools, "f", ToolBudget(pinned="^hr_count_(invoices|orders)$"))
    # Then the pinned tools and the search tool are offered
    assert offer.offered == ["hr_count_invoices", "hr_count_orders", SEARCH_TOOL]
    # When the model searches
    result = _search(offer, "change degrees celsius into fahrenheit")
    # Then the answer names the tools found with a line about each, which are offered from then on
    assert "convert_temperature: Convert a temperature between degrees Celsius and degrees Fahrenheit." in result.text
    assert "call them by name from your next step on" in result.text
    assert offer.offered == ["hr_count_invoices", "hr_count_orders", SEARCH_TOOL, "convert_temperature"]
    (spec,) = [spec for spec in offer.specs if spec["function"]["name"] == "convert_temperature"]
    assert spec["function"]["parameters"]["required"] == ["value", "unit"]


def test_found_tools_past_the_budget_push_out_the_least_recently_found_but_never_the_latest(
    many_tools: list[MCPTool],
) -> None:
    # Given a budget of the search tool, one search's tools and two more
    found = DEFAULT_RESULTS
    offer = ToolOffer(many_tools, "f", ToolBudget(tools=found + 3))
    # When the model searches twice, finding as many tools as a search returns each time
    first = _search(offer, "payroll payslips").structured["tools"]  # type: ignore[index]
    second = _search(offer, "billing invoices").structured["tools"]  # type: ignore[index]
    assert len(first) == len(second) == found and not set(first) & set(second)
    # Then all but two of those found first make room for those found last
    assert offer.offered == [SEARCH_TOOL, *first[-2:], *second]
    # And a tool called again counts as found again
    offer.called([first[0]])
    assert offer.offered == [SEARCH_TOOL, first[-1], *second, first[0]]


def test_pinned_tools_past_the_budget_are_left_to_the_search_with_a_warning(many_tools: list[MCPTool]) -> None:
    offer = ToolOffer(many_tools, "f", ToolBudget(tools=4, pinned="^hr_"))
    assert offer.offered == ["hr_list_invoices", "hr_list_contacts", "hr_list_orders", SEARCH_TOOL]
    (warning,) = offer.warnings
    assert warning.startswith("Not always offered to the model: 197 pinned tools over the tool budget")
    assert "'hr_list_shipments'" in warning and "and 177 more" in warning


def test_a_name_no_tool_has_tells_the_model_to_search() -> None:
    offer = ToolOffer([make_tool(f"tool_{number}") for number in range(3)], "f", ToolBudget(tools=2))
    with pytest.raises(ToolCallError) as raised:
        offer.resolve("tool_9")
    assert raised.value.hint is not None and f"with {SEARCH_TOOL}" in raised.value.hint
    assert offer.resolve("tool_2").name == "tool_2"  # a tool not found yet is known by its exact name


def test_a_budget_below_its_minimum_or_with_a_broken_pattern_is_refused() -> None:
    with pytest.raises(ConfigError, match="at least 2 tools"):
        ToolBudget(tools=1)
    with pytest.raises(ConfigError, match="at least 1,000 bytes"):
        ToolBudget(spec_bytes=10)
    with pytest.raises(ConfigError, match="not a valid regular expression"):
        ToolBudget(pinned="(")
