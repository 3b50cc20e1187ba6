"""``--tag`` on the command line: ``call`` and ``call-table`` pick a tool of a tools file by tag (and the server's own
name), ``agent`` offers only the tools carrying a tag, ``tools`` lists only them, and the servers of ``--config`` give
their tools the ``"tags"`` the file gives them; against the real demo server and server-everything, and the scripted
OpenAI-compatible endpoint on 127.0.0.1."""

from __future__ import annotations

import io
import json
import shlex
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from cli_runs import run_cli
from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer
from knime_mcp.calls.listing import list_servers_tools
from knime_mcp.cli.main import main
from knime_mcp.config import ServerSpec
from knime_mcp.mcp.sync import run_sync
from knime_mcp.tools.arrow import write_tools


@pytest.fixture(scope="module")
def tagged_tools_file(
    tmp_path_factory: pytest.TempPathFactory, demo_http_url: str, everything_stdio_command: list[str]
) -> Path:
    """A tools file of the demo server ("web", also tagged "demo") and server-everything over stdio ("local"), as
    the MCP Tool Provider writes a pasted configuration's tools."""
    servers = {
        "web": ServerSpec(target=demo_http_url),
        "local": ServerSpec(target=shlex.join(everything_stdio_command)),
    }
    listing = run_sync(list_servers_tools, servers, server_tags={"web": ("demo",)})
    path = tmp_path_factory.mktemp("registry") / "tools.arrow"
    write_tools(listing.tools, path, "arrow")
    return path


def test_call_picks_the_tool_by_tag_and_the_servers_own_name(
    capsys: pytest.CaptureFixture[str], tagged_tools_file: Path
) -> None:
    argv = ["call", "--tools", str(tagged_tools_file), "--tag", "local", "echo", "--args", '{"message": "hi"}']
    code, out, err = run_cli(capsys, *argv)
    assert code == 0, err
    assert json.loads(out)["content"][0]["text"] == "Echo: hi"


def test_call_says_when_the_tags_select_no_tool_or_several_that_their_servers_call_alike(
    capsys: pytest.CaptureFixture[str], tagged_tools_file: Path
) -> None:
    code, _, err = run_cli(capsys, "call", "--tools", str(tagged_tools_file), "--tag", "jira", "echo")
    assert code == 3 and "No tool carrying any of the tags 'jira'." in err and "The tools' tags: web, demo" in err
    code, _, err = run_cli(capsys, "call", "--tools", str(tagged_tools_file), "--tag", "web,LOCAL", "echo")
    assert code == 3 and "2 tools carrying any of the tags 'web', 'LOCAL' are called 'echo' by their servers" in err


def test_call_table_picks_the_tool_by_tag(
    capsys: pytest.CaptureFixture[str], tagged_tools_file: Path, tmp_path: Path
) -> None:
    (tmp_path / "in.csv").write_text("message\nhi\nthere\n")
    output = tmp_path / "out.parquet"
    code, _, err = run_cli(
        capsys, "call-table", "--tools", str(tagged_tools_file), "--tag", "local", "echo",
        "--input", str(tmp_path / "in.csv"), "--output", str(output),
    )  # fmt: skip
    assert code == 0, err
    assert pq.read_table(output).column("Result").to_pylist() == ["Echo: hi", "Echo: there"]


def test_the_agent_offers_only_the_tools_carrying_a_tag(tagged_tools_file: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    with FakeOpenAIEndpoint([answer("Hello.")]) as endpoint:
        argv = ["agent", "--base-url", endpoint.base_url, "--model", "fake", "--tools", str(tagged_tools_file)]
        code = main([*argv, "--prompt", "Hi", "--destructive", "allow", "--tag", "demo"], out=out, err=err)
    assert code == 0, err.getvalue()
    offered = [tool["function"]["name"] for tool in endpoint.requests[0]["tools"]]
    assert offered and all(name.startswith("web_") for name in offered)


def test_tools_lists_only_the_tools_carrying_a_tag(capsys: pytest.CaptureFixture[str], demo_http_url: str) -> None:
    code, out, err = run_cli(capsys, "tools", demo_http_url, "--format", "json", "--tag", "read-only")
    assert code == 0, err
    listed = json.loads(out)
    assert listed and all(tool["annotations"]["read_only"] for tool in listed)
    assert "delete_record" not in {tool["name"] for tool in listed} and "carries none" not in err


def test_the_agent_selects_a_configurations_server_by_its_key(
    tmp_path: Path, demo_http_url: str, everything_stdio_command: list[str]
) -> None:
    node, *args = everything_stdio_command
    config = tmp_path / "mcp.json"
    servers = {"web": {"url": demo_http_url}, "local": {"command": node, "args": args}}
    config.write_text(json.dumps({"mcpServers": servers}))
    out, err = io.StringIO(), io.StringIO()
    with FakeOpenAIEndpoint([answer("Hello.")]) as endpoint:
        argv = ["agent", "--base-url", endpoint.base_url, "--model", "fake", "--config", str(config)]
        code = main([*argv, "--prompt", "Hi", "--destructive", "allow", "--tag", "local"], out=out, err=err)
    assert code == 0, err.getvalue()
    offered = [tool["function"]["name"] for tool in endpoint.requests[0]["tools"]]
    assert "echo" in offered or "local_echo" in offered
    assert not {"add", "web_add", "word_stats", "web_word_stats"} & set(offered)


def _tagged_config(tmp_path: Path, demo_http_url: str, everything_stdio_command: list[str]) -> Path:
    """A configuration file of the demo server ("web", tagged "demo" and "Team A") and server-everything ("local")."""
    node, *args = everything_stdio_command
    servers = {"web": {"url": demo_http_url, "tags": ["demo", "Team A"]}, "local": {"command": node, "args": args}}
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    return config


def test_tools_gives_each_server_of_a_configuration_the_tags_the_file_gives_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, demo_http_url: str, everything_stdio_command: list[str]
) -> None:
    config = _tagged_config(tmp_path, demo_http_url, everything_stdio_command)
    code, out, err = run_cli(capsys, "tools", "--config", str(config), "--format", "json")
    assert code == 0, err
    tags = {tuple(tool.get("tags", ())) for tool in json.loads(out)}
    assert tags == {("web", "demo", "Team A"), ("local",)}
    code, out, err = run_cli(capsys, "tools", "--config", str(config), "--format", "json", "--tag", "team a")
    assert code == 0, err
    listed = json.loads(out)
    assert listed and all(tool["name"].startswith("web_") for tool in listed)


def test_tools_gives_the_one_server_of_a_configuration_chosen_by_name_its_tags(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, demo_http_url: str, everything_stdio_command: list[str]
) -> None:
    config = _tagged_config(tmp_path, demo_http_url, everything_stdio_command)
    code, out, err = run_cli(capsys, "tools", "--config", str(config), "--server", "web", "--format", "json")
    assert code == 0, err
    listed = json.loads(out)
    assert listed and all(tool["tags"] == ["demo", "Team A"] for tool in listed)  # "web" is the server's name


def test_the_agent_selects_a_configurations_server_by_the_tags_the_file_gives_it(
    tmp_path: Path, demo_http_url: str, everything_stdio_command: list[str]
) -> None:
    config = _tagged_config(tmp_path, demo_http_url, everything_stdio_command)
    out, err = io.StringIO(), io.StringIO()
    with FakeOpenAIEndpoint([answer("Hello.")]) as endpoint:
        argv = ["agent", "--base-url", endpoint.base_url, "--model", "fake", "--config", str(config)]
        code = main([*argv, "--prompt", "Hi", "--destructive", "allow", "--tag", "Team A"], out=out, err=err)
    assert code == 0, err.getvalue()
    offered = [tool["function"]["name"] for tool in endpoint.requests[0]["tools"]]
    assert offered and all(name.startswith("web_") for name in offered)
