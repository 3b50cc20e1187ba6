"""Agent Skills: a skills folder read as the open format says (tests/data/skills: two skills, one with a reference file
and a script), a hostile folder (tests/data/hostile-skills, plus links out and huge files made here), and agent runs
in which a scripted model loads a skill and reads its files through the agent's own skill tools."""

from __future__ import annotations

import json
import shlex
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, SystemMessage, ToolMessage

from cli_runs import run_cli
from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer, tool_calls
from knime_mcp.agent.chat_session import ChatSession
from knime_mcp.agent.config import AgentConfig, ToolBudget
from knime_mcp.agent.loop import AgentRun
from knime_mcp.agent.skill_tools import NOTHING_RUNS
from knime_mcp.agent.skills import MAX_FILE_BYTES, MAX_SKILL_MD_BYTES, load_skills
from knime_mcp.calls.listing import list_server_tools
from knime_mcp.config import ServerSpec
from knime_mcp.errors import ConfigError
from knime_mcp.mcp.sync import run_sync
from knime_mcp.tools.policy import ToolPolicy
from scripted_model import ScriptedChatModel, calls, offered, run_scripted, scripted

DATA = Path(__file__).parent / "data"
SKILLS = DATA / "skills"
FORMAT_LINE = "Every report starts with the line REPORT-HEADER-7"


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """A skills folder holding the two good skills, the badly formed ones of tests/data/hostile-skills, and links
    out of it and files over the size caps, made here (a repository should not hold them)."""
    folder = tmp_path / "skills"
    shutil.copytree(SKILLS, folder)
    shutil.copytree(DATA / "hostile-skills", folder, dirs_exist_ok=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "SKILL.md").write_text("---\nname: escape\ndescription: Lives outside.\n---\nOutside.\n")
    (outside / "secret.txt").write_text("SECRET-OUTSIDE")
    (folder / "escape").symlink_to(outside, target_is_directory=True)
    (folder / "linked-md").mkdir()
    (folder / "linked-md" / "SKILL.md").symlink_to(outside / "SKILL.md")
    (folder / "huge").mkdir()
    (folder / "huge" / "SKILL.md").write_text(
        "---\nname: huge\ndescription: Too big.\n---\n" + "x" * MAX_SKILL_MD_BYTES
    )
    report = folder / "csv-report"
    (report / "references" / "secret.txt").symlink_to(outside / "secret.txt")
    (report / "assets").mkdir()
    (report / "assets" / "big.txt").write_text("y" * (MAX_FILE_BYTES + 1))
    return folder


def _replies(run: AgentRun) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in run.conversation.new_messages if isinstance(m, ToolMessage)}


def _system(model: ScriptedChatModel) -> str:
    return str(next(m for m in model.requests[0][0] if isinstance(m, SystemMessage)).content)


def test_a_skills_folder_gives_each_skill_its_name_description_instructions_and_files() -> None:
    skills, warnings = load_skills(SKILLS)

    assert warnings == []
    report, greeting = skills
    assert (report.name, greeting.name) == ("csv-report", "polite-greeting")
    assert report.description.startswith("Writes a short report on a CSV file's columns.")
    assert report.instructions.startswith("# CSV report") and "---" not in report.instructions
    assert report.files() == (["references/FORMAT.md", "scripts/summarize.py"], False)
    assert greeting.files() == ([], False) and greeting.compatibility == "Any agent."


def test_every_hostile_subfolder_is_left_out_with_a_warning_naming_it_and_why(hostile: Path) -> None:
    skills, warnings = load_skills(hostile)

    assert [skill.name for skill in skills] == ["csv-report", "polite-greeting"]
    said = {line.split("'")[1]: line for line in warnings}
    assert "no front matter" in said["no-front-matter"]
    assert "not valid YAML (line 4 of SKILL.md)" in said["bad-yaml"]
    assert "'another-name' differs from its folder's name" in said["wrong-name"]
    assert "'Upper-Case' is not one the specification allows" in said["Upper-Case"]
    assert "has no description" in said["no-description"]
    assert "link that leads out of the skills folder" in said["escape"]
    assert "SKILL.md is a link that leads out of its folder" in said["linked-md"]
    assert f"over the {MAX_SKILL_MD_BYTES:,}-byte limit" in said["huge"]
    assert len(warnings) == 8


def test_a_missing_skills_folder_is_a_configuration_error_and_an_empty_one_a_warning(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="skills folder .* does not exist"):
        load_skills(tmp_path / "nowhere")
    (tmp_path / "empty" / "not-a-skill").mkdir(parents=True)
    assert load_skills(tmp_path / "empty") == (
        [],
        [
            "Skill folder 'not-a-skill' left out: it has no SKILL.md.",
            f"The skills folder {str(tmp_path / 'empty')!r} holds no valid skills (subfolders with a SKILL.md).",
        ],
    )


def test_the_model_sees_the_skills_up_front_then_loads_one_and_reads_its_reference_file() -> None:
    model = scripted(
        calls(("c1", "load_skill", {"name": "csv-report"})),
        calls(("c2", "read_skill_file", {"name": "csv-report", "path": "references/FORMAT.md"})),
        AIMessage("REPORT-HEADER-7"),
    )

    run = run_scripted(model, [], config=AgentConfig(skills=str(SKILLS)))

    system = _system(model)
    assert "- csv-report: Writes a short report on a CSV file's columns." in system
    assert "- polite-greeting: Greets the user formally." in system and NOTHING_RUNS in system
    assert "# CSV report" not in system  # instructions only when the model loads the skill
    assert offered(model, 0) == ["load_skill", "read_skill_file"]
    assert [(e.tool, e.kind, e.status) for e in run.log] == [("load_skill", "skill", "ok")] * 1 + [
        ("read_skill_file", "skill", "ok")
    ]
    replies = _replies(run)
    loaded = json.loads(replies["c1"].text.split("\n", 1)[1].rsplit("\n", 1)[0])
    assert loaded["instructions"].startswith("# CSV report") and "summarize.py data.csv" in loaded["instructions"]
    assert loaded["files"] == ["references/FORMAT.md", "scripts/summarize.py"]
    assert FORMAT_LINE in replies["c2"].text
    assert any(FORMAT_LINE in str(m.content) for m in model.requests[2][0] if isinstance(m, ToolMessage))


def test_a_skill_that_says_to_run_its_script_gets_no_tool_that_runs_it_and_the_script_never_runs(
    hostile: Path,
) -> None:
    # Given a skill whose instructions say to run scripts/summarize.py (which would leave a RAN file if run)
    model = scripted(
        calls(("c1", "load_skill", {"name": "csv-report"})),
        calls(
            ("c2", "run_script", {"path": "scripts/summarize.py"}),
            ("c3", "read_skill_file", {"name": "csv-report", "path": "scripts/summarize.py"}),
        ),
        AIMessage("The script was not run."),
    )
    # When the model follows them
    run = run_scripted(model, [], config=AgentConfig(skills=str(hostile)))
    # Then the skill's reply says nothing runs, there is no tool to run it, reading it only reads it
    replies = _replies(run)
    assert NOTHING_RUNS in json.loads(replies["c1"].text.split("\n", 1)[1].rsplit("\n", 1)[0])["scripts_note"]
    assert [e.status for e in run.log] == ["ok", "unknown_tool", "ok"]
    assert 'with_name("RAN")' in replies["c3"].text
    assert not (hostile / "csv-report" / "scripts" / "RAN").exists()


def test_reads_outside_the_skill_or_over_the_cap_go_back_to_the_model_as_tool_errors(hostile: Path) -> None:
    paths = ["../polite-greeting/SKILL.md", "/etc/passwd", "references/secret.txt", "assets/big.txt", "nope.md"]
    model = scripted(
        calls(*[(f"c{i}", "read_skill_file", {"name": "csv-report", "path": p}) for i, p in enumerate(paths)]),
        calls(("c9", "load_skill", {"name": "csv-report"})),
        AIMessage("Done."),
    )

    run = run_scripted(model, [], config=AgentConfig(skills=str(hostile)))

    replies = _replies(run)
    assert [replies[f"c{i}"].status for i in range(5)] == ["error"] * 5
    assert "is not a path inside the skill 'csv-report'" in replies["c0"].text
    assert "is not a path inside the skill" in replies["c1"].text
    assert "'references/secret.txt' leads out of the skill 'csv-report''s folder" in replies["c2"].text
    assert f"over the {MAX_FILE_BYTES:,}-byte limit" in replies["c3"].text
    assert "has no file 'nope.md'" in replies["c4"].text
    assert not any("SECRET-OUTSIDE" in m.text for m in replies.values())
    files = json.loads(replies["c9"].text.split("\n", 1)[1].rsplit("\n", 1)[0])["files"]
    assert "references/secret.txt" not in files and "assets/big.txt" in files
    assert run.conversation.new_messages[-1].text == "Done."
    assert sum("left out" in line for line in run.warnings) == 8  # the hostile folders, named in the warnings


def test_an_unknown_skill_name_is_refused_before_anything_is_read() -> None:
    model = scripted(calls(("c1", "load_skill", {"name": "../skills"})), AIMessage("ok"))
    run = run_scripted(model, [], config=AgentConfig(skills=str(SKILLS)))
    assert [e.status for e in run.log] == ["invalid_arguments"]
    assert "csv-report" in _replies(run)["c1"].text


def test_the_deny_list_removes_the_skill_tools_and_the_warning_says_so() -> None:
    model = scripted(AIMessage("nothing"))
    run = run_scripted(model, [], config=AgentConfig(skills=str(SKILLS), policy=ToolPolicy(deny="skill")))
    assert offered(model, 0) == []
    assert any("tool 'load_skill' matches the tool deny-list 'skill'" in line for line in run.warnings)


def test_without_a_skills_folder_there_are_no_skill_tools_and_no_skills_section(demo_stdio_command: list[str]) -> None:
    tools = run_sync(list_server_tools, ServerSpec(target=shlex.join(demo_stdio_command), name="demo")).tools
    model = scripted(AIMessage("ok"))
    run_scripted(model, tools)
    assert "load_skill" not in offered(model, 0) and "echo" in offered(model, 0)
    assert "available_skills" not in _system(model)


def test_the_skill_tools_stay_offered_when_the_model_searches_the_tools(demo_stdio_command: list[str]) -> None:
    tools = run_sync(list_server_tools, ServerSpec(target=shlex.join(demo_stdio_command), name="demo")).tools
    model = scripted(AIMessage("ok"))
    run_scripted(model, tools, config=AgentConfig(skills=str(SKILLS), tool_budget=ToolBudget(tools=3)))
    assert sorted(offered(model, 0)) == ["load_skill", "read_skill_file", "search_tools"]


def test_the_cli_agent_offers_the_skills_with_the_skills_flag(
    capsys: pytest.CaptureFixture[str], demo_stdio_command: list[str], tmp_path: Path
) -> None:
    script = [
        tool_calls(("c1", "read_skill_file", {"name": "csv-report", "path": "references/FORMAT.md"})),
        answer("REPORT-HEADER-7"),
    ]
    server = shlex.join(demo_stdio_command)
    with FakeOpenAIEndpoint(script) as endpoint:
        agent = ("agent", "--base-url", endpoint.base_url, "--model", "fake", server, "--prompt", "Report.")
        code, out, err = run_cli(capsys, *agent, "--skills", str(SKILLS))
        missing = run_cli(capsys, *agent, "--skills", str(tmp_path / "nowhere"))
    assert code == 0, err
    assert "read_skill_file" in out and "skill" in out and "[assistant] REPORT-HEADER-7" in out
    assert "csv-report: Writes a short report" in endpoint.requests[0]["messages"][0]["content"]
    assert FORMAT_LINE in endpoint.requests[1]["messages"][-1]["content"]
    assert missing[0] != 0 and "--skills" in missing[2] and "no such folder" in missing[2]
    assert len(endpoint.requests) == 2  # the missing folder stopped the command before the model was asked


def _turn_events(session: ChatSession, text: str) -> list[dict[str, Any]]:
    """Send ``text`` and return the chat's events once the turn ended (waiting for it, not timing it)."""
    session.send(text)
    deadline = time.monotonic() + 60
    while not any(event["type"] == "turn_end" for event in session.events()):
        assert time.monotonic() < deadline, "gave up waiting for the turn to end"
        time.sleep(0.01)
    return session.events()


def test_a_chat_with_a_skills_folder_loads_a_skill_and_shows_the_call_as_a_skill_call() -> None:
    model = scripted(calls(("c1", "load_skill", {"name": "polite-greeting"})), AIMessage("Good day to you."))
    with ChatSession(model, [], config=AgentConfig(skills=str(SKILLS))) as session:
        events = _turn_events(session, "Hello!")
    start = next(event for event in events if event["type"] == "tool_start")
    end = next(event for event in events if event["type"] == "tool_end")
    assert (start["tool"], start["kind"], end["status"]) == ("load_skill", "skill", "ok")
    assert "Good day to you." in end["text"] and "- polite-greeting: Greets the user formally." in _system(model)
