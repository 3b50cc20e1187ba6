"""Skill scripts (issue 37 §6): a skill whose instructions tell the model to run its script. Not allowed, no tool runs
it and a call by name is refused naming the setting that allows it; allowed (``AgentConfig(skill_scripts=True)``,
``--allow-skill-scripts``), the script runs as a program tool does and its output reaches the model; a path out of the
skill is refused and nothing runs. The scripted model and real scripts, run by this Python, bash and the OS."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, SystemMessage, ToolMessage

from cli_runs import run_cli
from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer, tool_calls
from knime_mcp.agent.approval import ApprovalPolicy, ApprovalRequest, Decision
from knime_mcp.agent.config import AgentConfig
from knime_mcp.agent.loop import AgentRun
from knime_mcp.agent.skill_tools import NOTHING_RUNS, SCRIPTS_RUN
from knime_mcp.tools.policy import ToolPolicy
from scripted_model import ScriptedChatModel, calls, offered, run_scripted, scripted
from skill_folders import write_skill

COUNT = """import json, os, sys
print(json.dumps({"argv": sys.argv[1:], "cwd": os.getcwd(), "canary": os.environ.get("SKILL_CANARY")}))
"""
"""The skill's script: what it was given, where it ran, and whether a variable of this process reached it."""


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    """A skills folder with one skill, word-tools, whose instructions say to run its scripts; beside it, a script
    outside the skill that leaves a marker if anything ever runs it, and a link to it from inside the skill."""
    scripts = {
        "scripts/count.py": COUNT,
        "scripts/fail.sh": "echo 'broken on purpose' >&2\nexit 4\n",
        "scripts/notes.txt": "not a script, not executable",
    }
    folder = write_skill(
        tmp_path / "skills",
        "word-tools",
        "Counts words. Use when the user asks how many words a text has.",
        "Run `scripts/count.py TEXT` with the text as its argument, and report what it prints.",
        scripts,
    )
    tool = folder / "scripts" / "tool"
    tool.write_text('#!/bin/sh\necho "executable ran in $(pwd) with $1"\n')
    tool.chmod(0o755)
    outside = tmp_path / "outside.py"
    outside.write_text("from pathlib import Path\nPath(__file__).with_name('ESCAPED').write_text('ran')\n")
    (folder / "scripts" / "link.py").symlink_to(outside)
    return tmp_path / "skills"


def _replies(run: AgentRun) -> dict[str, str]:
    """Each tool message's content by its call id, without the fence around tool output."""
    return {
        m.tool_call_id: str(m.content).split("\n", 1)[1].rsplit("\n", 1)[0]
        for m in run.conversation.new_messages
        if isinstance(m, ToolMessage)
    }


def _system(model: ScriptedChatModel) -> str:
    return str(next(m for m in model.requests[0][0] if isinstance(m, SystemMessage)).content)


def _run_count(approver: Any = None, **config: Any) -> tuple[ScriptedChatModel, AgentRun]:
    model = scripted(
        calls(("c1", "load_skill", {"name": "word-tools"})),
        calls(("c2", "run_skill_script", {"name": "word-tools", "path": "scripts/count.py", "arguments": ARGUMENTS})),
        AIMessage("Done."),
    )
    return model, run_scripted(model, [], config=AgentConfig(**config), approver=approver)


ARGUMENTS = ["two words", "$(touch pwned); *", "{x} {{y}}", "line\nbreak"]


def test_not_allowed_no_tool_runs_scripts_and_a_call_by_name_says_which_setting_allows_it(skills: Path) -> None:
    # Given a skill whose instructions say to run its script, and scripts not allowed (the default)
    # When the model loads the skill and calls run_skill_script by its name anyway
    model, run = _run_count(skills=str(skills))
    # Then it was never offered, the model was told nothing runs, and the call was refused naming the settings
    assert "run_skill_script" not in offered(model, 0) and NOTHING_RUNS in _system(model)
    replies = _replies(run)
    assert json.loads(replies["c1"])["scripts_note"] == NOTHING_RUNS
    assert [(entry.tool, entry.status) for entry in run.log] == [("load_skill", "ok"), ("run_skill_script", "blocked")]
    assert "'Run skill scripts'" in replies["c2"] and "--allow-skill-scripts" in replies["c2"]
    assert not (skills / "word-tools" / "pwned").exists()


def test_allowed_the_script_runs_in_its_folder_with_each_argument_intact_and_its_output_reaches_the_model(
    skills: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given scripts allowed, and a variable of this process that a script must not see
    monkeypatch.setenv("SKILL_CANARY", "canary-4f1e")
    # When the model runs the script its skill names
    model, run = _run_count(skills=str(skills), skill_scripts=True)
    # Then the tool was offered and the model told how to use it
    assert "run_skill_script" in offered(model, 0) and SCRIPTS_RUN in _system(model)
    assert json.loads(_replies(run)["c1"])["scripts_note"] == SCRIPTS_RUN
    # And the script ran in the skill's folder, without a shell, each argument one, none of this process's variables
    assert [(entry.tool, entry.kind, entry.status) for entry in run.log][1] == ("run_skill_script", "skill", "ok")
    printed = json.loads(_replies(run)["c2"])
    assert printed == {"argv": ARGUMENTS, "cwd": str((skills / "word-tools").resolve()), "canary": None}
    assert not (skills / "word-tools" / "pwned").exists()
    # And what it printed reached the model
    assert any("two words" in str(m.content) for m in model.requests[2][0] if isinstance(m, ToolMessage))


def test_a_failing_script_is_a_tool_error_with_its_stderr_and_an_executable_file_runs_itself(skills: Path) -> None:
    model = scripted(
        calls(
            ("c1", "run_skill_script", {"name": "word-tools", "path": "scripts/fail.sh"}),
            ("c2", "run_skill_script", {"name": "word-tools", "path": "scripts/tool", "arguments": ["it"]}),
        ),
        AIMessage("Done."),
    )
    run = run_scripted(model, [], config=AgentConfig(skills=str(skills), skill_scripts=True))
    replies = _replies(run)
    assert [entry.status for entry in run.log] == ["tool_error", "ok"]
    assert "'run_skill_script' exited with status 4" in replies["c1"] and "broken on purpose" in replies["c1"]
    assert replies["c2"].strip() == f"executable ran in {(skills / 'word-tools').resolve()} with it"


def test_a_path_out_of_the_skill_or_a_file_that_is_no_script_is_refused_and_nothing_runs(skills: Path) -> None:
    paths = ["../../outside.py", str(skills.parent / "outside.py"), "scripts/link.py", "scripts/notes.txt", "no.py"]
    model = scripted(
        calls(*[(f"c{i}", "run_skill_script", {"name": "word-tools", "path": p}) for i, p in enumerate(paths)]),
        AIMessage("Done."),
    )
    run = run_scripted(model, [], config=AgentConfig(skills=str(skills), skill_scripts=True))
    replies = _replies(run)
    assert [entry.status for entry in run.log] == ["tool_error"] * 5
    assert "is not a path inside the skill 'word-tools'" in replies["c0"] and "is not a path" in replies["c1"]
    assert "'scripts/link.py' leads out of the skill 'word-tools''s folder: refused" in replies["c2"]
    assert "'scripts/notes.txt' of the skill 'word-tools' is not a script that can be run" in replies["c3"]
    assert "has no file 'no.py'" in replies["c4"]
    assert not (skills.parent / "ESCAPED").exists()


class _Person:
    """An approver that denies every call, recording what it was asked."""

    def __init__(self) -> None:
        self.asked: list[ApprovalRequest] = []

    async def decide(self, request: ApprovalRequest) -> Decision:
        self.asked.append(request)
        return Decision("deny", reason="not now")


def test_the_deny_list_and_approval_apply_to_running_scripts_as_to_any_tool(skills: Path) -> None:
    # Given scripts allowed but denied by the tool policy: the tool is not offered, and the warning says so
    model = scripted(AIMessage("nothing"))
    policy = ToolPolicy(deny="^run_skill_script$")
    run = run_scripted(model, [], config=AgentConfig(skills=str(skills), skill_scripts=True, policy=policy))
    assert "run_skill_script" not in offered(model, 0) and "load_skill" in offered(model, 0)
    assert any("'run_skill_script' matches the tool deny-list" in line for line in run.warnings)
    # And with approval asked for its calls, a person who denies one keeps the script from running
    person = _Person()
    model = scripted(
        calls(("c1", "run_skill_script", {"name": "word-tools", "path": "scripts/tool", "arguments": ["x"]})),
        AIMessage("Done."),
    )
    approval = ApprovalPolicy(pattern="^run_skill")
    asked = run_scripted(
        model, [], config=AgentConfig(skills=str(skills), skill_scripts=True, approval=approval), approver=person
    )
    assert [request.tool for request in person.asked] == ["run_skill_script"]
    assert "executable ran" not in _replies(asked)["c1"] and asked.log[0].status != "ok"
    # And with nobody to ask (a batch run), the call waits for approval instead of running
    _, waiting = _run_count(skills=str(skills), skill_scripts=True, approval=ApprovalPolicy(everything=True))
    assert [request.tool for request in waiting.awaiting] == ["load_skill"]


def test_without_the_files_and_processes_permissions_no_script_runs_and_a_call_names_each_missing_grant(
    skills: Path,
) -> None:
    # Given scripts allowed, but Granted permissions without files and processes (a script needs both, as a program)
    model, run = _run_count(skills=str(skills), skill_scripts=True, policy=ToolPolicy(granted=("network",)))
    # Then the tool was not offered, the model was told nothing runs, and the warning names what is missing
    assert "run_skill_script" not in offered(model, 0) and NOTHING_RUNS in _system(model)
    assert json.loads(_replies(run)["c1"])["scripts_note"] == NOTHING_RUNS
    missing = "tool 'run_skill_script' needs the files and processes permissions, which are not granted"
    assert f"Not offered to the model: {missing}" in "\n".join(run.warnings)
    # And the call by its name was refused naming both grants and where to give them, and nothing ran
    assert [(entry.tool, entry.status) for entry in run.log] == [("load_skill", "ok"), ("run_skill_script", "blocked")]
    reply = _replies(run)["c2"]
    assert missing in reply and "'Granted permissions'" in reply and "--permit files --permit processes" in reply
    assert "two words" not in reply
    # And with files and processes granted (no network), the script runs
    _, granted = _run_count(skills=str(skills), skill_scripts=True, policy=ToolPolicy(granted=("files", "processes")))
    assert [entry.status for entry in granted.log] == ["ok", "ok"]


def test_the_approval_rules_judge_a_script_as_a_tool_without_annotations(skills: Path) -> None:
    # Given scripts allowed, and 'Ask before calling tools without annotations'
    person = _Person()
    model, run = _run_count(
        skills=str(skills), skill_scripts=True, approval=ApprovalPolicy(unannotated=True), approver=person
    )
    # Then the person was asked about the script, not about loading the skill, shown the hints of an unannotated tool
    assert [request.tool for request in person.asked] == ["run_skill_script"]
    hints = person.asked[0].hints
    assert hints["annotated"] is False and hints["destructive"] and not hints["read_only"]
    # And their denial kept the script from running
    assert [(entry.tool, entry.status) for entry in run.log] == [("load_skill", "ok"), ("run_skill_script", "denied")]
    assert "two words" not in _replies(run)["c2"]
    # And 'Ask before calling destructive tools' alone does not ask, as for an MCP tool without annotations
    nobody = _Person()
    _, ran = _run_count(
        skills=str(skills), skill_scripts=True, approval=ApprovalPolicy(destructive=True), approver=nobody
    )
    assert nobody.asked == [] and [entry.status for entry in ran.log] == ["ok", "ok"]


def test_the_cli_runs_skill_scripts_only_with_allow_skill_scripts(
    capsys: pytest.CaptureFixture[str], skills: Path, demo_stdio_command: list[str]
) -> None:
    call = ("c1", "run_skill_script", {"name": "word-tools", "path": "scripts/tool", "arguments": ["cli"]})
    script = [tool_calls(call), answer("Refused."), tool_calls(call), answer("Ran.")]
    with FakeOpenAIEndpoint(script) as endpoint:
        agent = ("agent", "--base-url", endpoint.base_url, "--model", "fake", shlex.join(demo_stdio_command))
        agent += ("--prompt", "Count.", "--skills", str(skills))
        refused = run_cli(capsys, *agent)
        allowed = run_cli(capsys, *agent, "--allow-skill-scripts")
    assert refused[0] == 0 and allowed[0] == 0, (refused[2], allowed[2])
    told = [m["content"] for m in endpoint.requests[1]["messages"] if m.get("tool_call_id") == "c1"]
    assert "--allow-skill-scripts" in told[0] and "executable ran" not in told[0]
    ran = [m["content"] for m in endpoint.requests[3]["messages"] if m.get("tool_call_id") == "c1"]
    assert f"executable ran in {(skills / 'word-tools').resolve()} with cli" in ran[0]
