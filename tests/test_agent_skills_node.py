"""The Agent Prompter's *Skills folder* setting, run as KNIME runs the node (Given/When/Then), on both hosts, with the
demo server's tools listed by the real MCP Tool Provider node, a scripted model endpoint and tests/data's skills."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path
from typing import Any

import knime.extension as knext
import pytest

from agent_runs import API_KEY, agent_node, chat_model_port, offered_tools, provider_tools_table, run_agent_node
from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer, tool_calls
from node_contexts import ExecuteContext

pytestmark = pytest.mark.knime_node

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def demo_tools(demo_stdio_command: list[str]) -> Any:
    return provider_tools_table((shlex.join(demo_stdio_command), "", {}))


def test_the_model_loads_a_skill_reads_its_file_and_the_log_shows_skill_calls(demo_tools: Any, tmp_path: Path) -> None:
    # Given a skills folder with two skills and one whose front matter is broken
    folder = tmp_path / "skills"
    shutil.copytree(DATA / "skills", folder)
    shutil.copytree(DATA / "hostile-skills" / "bad-yaml", folder / "bad-yaml")
    script = [
        tool_calls(("c1", "load_skill", {"name": "csv-report"})),
        tool_calls(
            ("c2", "read_skill_file", {"name": "csv-report", "path": "references/FORMAT.md"}),
            ("c3", "read_skill_file", {"name": "csv-report", "path": "../polite-greeting/SKILL.md"}),
        ),
        answer("REPORT-HEADER-7"),
    ]
    ctx = ExecuteContext({"llm": ("", API_KEY)})
    with FakeOpenAIEndpoint(script) as endpoint:
        # When the Agent Prompter runs with the folder as its Skills folder
        conversation, log = run_agent_node(
            agent_node("Report on my CSV.", skills=str(folder)), ctx, chat_model_port(endpoint.base_url), demo_tools
        )
    # Then the model was told the skills up front and offered the skill tools beside the demo server's
    system = endpoint.requests[0]["messages"][0]["content"]
    assert "- csv-report: Writes a short report" in system and "- polite-greeting: Greets" in system
    assert {"load_skill", "read_skill_file", "echo"} <= set(offered_tools(endpoint.requests[0]))
    # And every call is logged with the kind 'skill'; the path out of the skill is a tool error
    assert list(log["Tool"]) == ["load_skill", "read_skill_file", "read_skill_file"]
    assert list(log["Kind"]) == ["skill"] * 3
    assert list(log["Status"]) == ["ok", "ok", "tool_error"]
    loaded = next(m for m in endpoint.requests[1]["messages"] if m.get("tool_call_id") == "c1")
    assert "summarize.py data.csv" in loaded["content"] and "scripts/summarize.py" in loaded["content"]
    read = next(m for m in endpoint.requests[2]["messages"] if m.get("tool_call_id") == "c2")
    assert "REPORT-HEADER-7, then one line per column" in read["content"]
    assert conversation["Content"].iloc[-1] == "REPORT-HEADER-7"
    # And the broken skill is named in the node warning
    assert any("'bad-yaml' left out" in warning and "not valid YAML" in warning for warning in ctx.warnings)


def test_by_default_no_skill_tools_are_offered(demo_tools: Any) -> None:
    with FakeOpenAIEndpoint([answer("No skills.")]) as endpoint:
        run_agent_node(
            agent_node("Hi."), ExecuteContext({"llm": ("", API_KEY)}), chat_model_port(endpoint.base_url), demo_tools
        )
    offered = offered_tools(endpoint.requests[0])
    assert "echo" in offered and "load_skill" not in offered
    assert "available_skills" not in endpoint.requests[0]["messages"][0]["content"]


def test_a_skills_folder_that_does_not_exist_fails_the_node_naming_it(demo_tools: Any, tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with (
        FakeOpenAIEndpoint([answer("never")]) as endpoint,
        pytest.raises(knext.InvalidParametersError, match="skills folder .* does not exist"),
    ):
        run_agent_node(
            agent_node("Hi.", skills=str(missing)),
            ExecuteContext({"llm": ("", API_KEY)}),
            chat_model_port(endpoint.base_url),
            demo_tools,
        )
    assert endpoint.requests == []
