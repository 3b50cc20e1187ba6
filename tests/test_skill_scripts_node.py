"""The agent nodes' *Run skill scripts* setting, run as KNIME runs the Agent Prompter (Given/When/Then), on both hosts:
a skill whose instructions tell the model to run its script, with a scripted model endpoint on 127.0.0.1 and the
demo server's tools listed by the real MCP Tool Provider node. Off (the default): no tool runs the script, and a call
by name is refused naming the setting; on: the script runs and what it prints reaches the model."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest

from agent_runs import API_KEY, agent_node, chat_model_port, offered_tools, provider_tools_table, run_agent_node
from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer, tool_calls
from node_contexts import ExecuteContext
from skill_folders import write_skill

pytestmark = pytest.mark.knime_node

SCRIPT = "import sys\nprint('SUMMARY: ' + ' | '.join(sys.argv[1:]))\n"


@pytest.fixture(scope="module")
def demo_tools(demo_stdio_command: list[str]) -> Any:
    return provider_tools_table((shlex.join(demo_stdio_command), "", {}))


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    """A skills folder whose one skill says to run its script."""
    description = "Summarizes a CSV file. Use when asked to summarize one."
    instructions = "Run `scripts/summarize.py FILE` and answer with what it prints."
    write_skill(tmp_path / "skills", "csv-summary", description, instructions, {"scripts/summarize.py": SCRIPT})
    return tmp_path / "skills"


def _run(skills: Path, tools: Any, **settings: Any) -> tuple[FakeOpenAIEndpoint, Any]:
    call = ("c1", "run_skill_script", {"name": "csv-summary", "path": "scripts/summarize.py", "arguments": ["a b.csv"]})
    with FakeOpenAIEndpoint([tool_calls(call), answer("Done.")]) as endpoint:
        node = agent_node("Summarize a b.csv.", skills=str(skills), **settings)
        _, log = run_agent_node(node, ExecuteContext({"llm": ("", API_KEY)}), chat_model_port(endpoint.base_url), tools)
    return endpoint, log


def _reply(endpoint: FakeOpenAIEndpoint) -> str:
    return next(m["content"] for m in endpoint.requests[1]["messages"] if m.get("tool_call_id") == "c1")


def test_by_default_no_skill_script_runs_and_a_call_by_name_names_the_setting(skills: Path, demo_tools: Any) -> None:
    # Given the Agent Prompter with a skills folder and 'Run skill scripts' off (the default)
    # When the model calls run_skill_script anyway
    endpoint, log = _run(skills, demo_tools, skill_scripts=False)
    # Then it was not offered, the call was refused naming the setting, and the script never ran
    assert "run_skill_script" not in offered_tools(endpoint.requests[0])
    assert "Nothing can be run here" in endpoint.requests[0]["messages"][0]["content"]
    assert list(log["Status"]) == ["blocked"]
    assert "'Run skill scripts'" in _reply(endpoint) and "SUMMARY" not in _reply(endpoint)


def test_with_run_skill_scripts_the_script_runs_and_what_it_prints_reaches_the_model(
    skills: Path, demo_tools: Any
) -> None:
    # Given 'Run skill scripts' on
    # When the model runs the script its skill names
    endpoint, log = _run(skills, demo_tools, skill_scripts=True)
    # Then it was offered beside the demo server's tools, ran, and the model got its output
    assert {"run_skill_script", "load_skill", "echo"} <= set(offered_tools(endpoint.requests[0]))
    assert (list(log["Tool"]), list(log["Kind"]), list(log["Status"])) == (["run_skill_script"], ["skill"], ["ok"])
    assert "SUMMARY: a b.csv" in _reply(endpoint)


def test_without_granted_processes_and_files_no_script_runs_and_the_call_names_the_missing_grants(
    skills: Path, demo_tools: Any
) -> None:
    # Given 'Run skill scripts' on, but 'Granted permissions' holding only Network
    # When the model calls run_skill_script
    endpoint, log = _run(skills, demo_tools, skill_scripts=True, granted_permissions=["NETWORK"])
    # Then it was not offered, the call was refused naming both missing permissions and the setting, nothing ran
    assert "run_skill_script" not in offered_tools(endpoint.requests[0])
    assert "Nothing can be run here" in endpoint.requests[0]["messages"][0]["content"]
    assert list(log["Status"]) == ["blocked"]
    reply = _reply(endpoint)
    assert "needs the files and processes permissions" in reply and "'Granted permissions'" in reply
    assert "SUMMARY" not in reply


def test_the_agent_chat_gives_its_agent_the_setting() -> None:
    from nodes.agent_chat import AgentChat

    chat = AgentChat()
    assert chat._config().skill_scripts is False
    chat.skill_scripts = True
    assert chat._config().skill_scripts is True
