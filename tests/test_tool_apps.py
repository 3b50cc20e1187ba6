"""A tool's MCP App link (`MCPTool.app_uri`, `MCPTool.app_only`): read from the tool's `_meta` as real servers list
it (tests/servers/app_server.py and the published server-basic-vanillajs, over stdio), kept by the MCP Tool cell
and every form of the tools table (with its seal), and absent from cells written before it (the 0.5.0 fixtures)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import anyio
import pyarrow as pa
import pytest

from cli_runs import run_cli
from fixtures.npm_servers import app_server_command
from fixtures.python_servers import SERVERS_DIR
from knime_mcp import ConfigError, McpClient, ServerSpec, ToolCallError
from knime_mcp.agent.config import ToolBudget
from knime_mcp.agent.tool_offer import SEARCH_TOOL, ToolOffer
from knime_mcp.seal import is_sealed_here, team_seal_key
from knime_mcp.tools.app_link import app_link
from knime_mcp.tools.arrow import tools_from_arrow, tools_from_frame, tools_to_arrow, tools_to_frame, tools_to_table
from knime_mcp.tools.tool import MCPTool

APP_SERVER = ServerSpec(target=shlex.join([sys.executable, str(SERVERS_DIR / "app_server.py")]), name="charts")
CHART = "ui://charts/chart.html"
OLD = json.loads((Path(__file__).parent / "data" / "tool_cells_0_5_0.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def chart_tools() -> dict[str, MCPTool]:
    async def listed() -> list[MCPTool]:
        async with McpClient(APP_SERVER) as client:
            return await client.list_tools()

    return {tool.name: tool for tool in anyio.run(listed)}


def test_a_tools_app_is_its_ui_resource_and_app_only_tools_are_marked(chart_tools: dict[str, MCPTool]) -> None:
    apps = {name: (tool.app_uri, tool.app_only) for name, tool in chart_tools.items()}
    assert apps == {
        "show_chart": ("ui://charts/chart.html", False),
        "refresh_chart": ("ui://charts/chart.html", True),
        "legacy_view": ("ui://charts/chart.html", False),
        "web_view": (None, False),
        "oversized_view": ("ui://charts/huge.html", False),
        "plain": (None, False),
        "chart_reads": (None, False),
    }
    assert chart_tools["web_view"].notes == (
        "Tool 'web_view' names an app at 'https://charts.example.com/chart.html', which is not a ui:// resource; "
        "it has no app.",
    )
    assert chart_tools["plain"].notes == () and chart_tools["show_chart"].notes == ()


@pytest.mark.anyio
async def test_the_published_basic_app_servers_tool_links_its_app() -> None:
    async with McpClient(ServerSpec(target=shlex.join(app_server_command("basic-vanillajs")))) as client:
        (get_time,) = await client.list_tools()
    assert (get_time.name, get_time.app_uri, get_time.app_only) == ("get-time", "ui://get-time/mcp-app.html", False)


def test_visibility_decides_app_only_and_the_new_key_wins_over_the_legacy_one() -> None:
    assert app_link({"ui": {"resourceUri": "ui://a/x", "visibility": ["app", "model"]}}, "t") == (
        "ui://a/x",
        False,
        None,
    )
    assert app_link({"ui": {"resourceUri": "ui://a/x", "visibility": []}}, "t").only is True
    assert app_link({"ui": {"resourceUri": "ui://a/new"}, "ui/resourceUri": "ui://a/old"}, "t").uri == "ui://a/new"
    assert app_link({"ui": "ui://a/x"}, "t") == (None, False, None)
    assert (
        app_link({"ui": {"resourceUri": 7}}, "t").note
        == "Tool 't' names an app at 7, which is not a ui:// resource; it has no app."
    )
    assert app_link(None, "t") == (None, False, None)


def test_the_app_survives_the_cell_and_every_table_form_and_keeps_the_seal(chart_tools: dict[str, MCPTool]) -> None:
    tools = list(chart_tools.values())
    assert all(is_sealed_here(tool.server) for tool in tools)
    cell = json.loads(chart_tools["refresh_chart"].to_json())
    assert cell["app_uri"] == "ui://charts/chart.html" and cell["app_only"] is True
    assert "app_uri" not in json.loads(chart_tools["plain"].to_json())
    assert "app_only" not in json.loads(chart_tools["show_chart"].to_json())
    for back in (
        [MCPTool.from_json(tool.to_json()) for tool in tools],
        tools_from_arrow(tools_to_arrow(tools)),
        tools_from_arrow(tools_to_table(tools)),
        tools_from_frame(tools_to_frame(tools)),
    ):
        assert back == tools
        assert all(is_sealed_here(tool.server) for tool in back)
    assert tools_to_table(tools).column("App").to_pylist() == [tool.app_uri for tool in tools]
    assert tools_to_table(tools).column("App").to_pylist()[:4] == ["ui://charts/chart.html"] * 3 + [None]


def test_cells_written_before_apps_read_as_tools_without_an_app() -> None:
    with team_seal_key(OLD["team_key"]):
        tools = tools_from_arrow(pa.table({"MCP Tool": OLD["cells"]}))
        assert [is_sealed_here(tool.server) for tool in tools] == [True, True, True, False]
    assert [(tool.app_uri, tool.app_only) for tool in tools] == [(None, False)] * 4


def test_a_table_whose_app_fields_are_not_text_or_a_flag_names_the_fault(chart_tools: dict[str, MCPTool]) -> None:
    cell = json.loads(chart_tools["show_chart"].to_json())
    for field, value, said in [
        ("app_uri", 7, "app_uri of tool 'show_chart' is not text"),
        ("app_only", "yes", "not true or false"),
    ]:
        with pytest.raises(ConfigError, match=said):
            MCPTool.from_dict({**cell, field: value})


def test_an_app_only_tool_is_never_offered_found_or_called_by_a_model(chart_tools: dict[str, MCPTool]) -> None:
    tools = list(chart_tools.values())
    offer = ToolOffer(tools, "fence", ToolBudget())
    assert "refresh_chart" not in offer.offered and "show_chart" in offer.offered
    assert [spec["function"]["name"] for spec in offer.specs] == [n for n in chart_tools if n != "refresh_chart"]
    with pytest.raises(ToolCallError):
        offer.resolve("refresh_chart")
    searched = ToolOffer(tools, "fence", ToolBudget(tools=2))
    assert SEARCH_TOOL in searched.offered and "refresh_chart" not in searched
    hits = anyio.run(searched.resolve(SEARCH_TOOL).run, {"query": "refresh chart data app"})
    assert "refresh_chart" not in hits.structured["tools"] and "show_chart" in hits.structured["tools"]


def test_knime_mcp_tools_shows_each_tools_app_in_text_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    command = shlex.split(APP_SERVER.target)
    code, out, _ = run_cli(capsys, "tools", "--", *command)
    assert code == 0
    lines = {line.split()[0]: line for line in out.splitlines()[1:-1]}
    assert out.splitlines()[0].split() == ["NAME", "HINTS", "PERMISSIONS", "APP", "PARAMETERS", "DESCRIPTION"]
    assert "ui://charts/chart.html (app only)" in lines["refresh_chart"]
    assert "ui://charts/chart.html" in lines["show_chart"] and "(app only)" not in lines["show_chart"]
    assert lines["plain"].split()[:4] == ["plain", "destructive", "files,processes", "-"]  # no hints: destructive
    code, out, _ = run_cli(capsys, "tools", "--format", "json", "--", *command)
    apps = {tool["name"]: (tool["app_uri"], tool["app_only"]) for tool in json.loads(out)}
    assert code == 0 and apps["refresh_chart"] == ("ui://charts/chart.html", True) and apps["plain"] == (None, False)


def test_a_tools_list_without_apps_has_no_app_column(capsys: pytest.CaptureFixture[str], demo_http_url: str) -> None:
    code, out, _ = run_cli(capsys, "tools", demo_http_url)
    assert code == 0 and out.splitlines()[0].split() == ["NAME", "HINTS", "PERMISSIONS", "PARAMETERS", "DESCRIPTION"]


def test_a_tools_file_keeps_the_apps_and_a_person_may_call_an_app_only_tool_by_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "tools.json"
    code, _, _ = run_cli(
        capsys, "tools", "--format", "json", "--output", str(path), "--", *shlex.split(APP_SERVER.target)
    )
    read = {tool.name: tool for tool in (MCPTool.from_dict(data) for data in json.loads(path.read_text()))}
    assert code == 0 and (read["refresh_chart"].app_uri, read["refresh_chart"].app_only) == (CHART, True)
    code, out, _ = run_cli(capsys, "call", "--tools", str(path), "refresh_chart", "--args", '{"series": "s"}')
    assert code == 0 and "fresh data for s" in out
