"""The command line's documentation is true: docs/command-line.md's synopsis matches the parser and mentions every
flag, and every example line of that page and of README.md's "Command line" section runs.

The examples run in a temporary folder, in order, against servers this test starts on 127.0.0.1: the line that
backgrounds `demo-server` runs with `--port 0`, and the port it prints replaces 8000 in the later lines; `npx`
server-everything becomes the pinned npm peer; the agent's model server becomes a scripted OpenAI-compatible fake.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer, tool_calls
from knime_mcp.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "docs" / "command-line.md"
"""The command line's reference page: the synopsis, every flag, the examples."""
README = ROOT / "README.md"

_DEMO_URL = "http://127.0.0.1:8000"
_MODEL_URL = "http://localhost:11434/v1"
_EVERYTHING = ["npx", "-y", "@modelcontextprotocol/server-everything", "stdio"]
_COMMANDS = (
    "tools",
    "call",
    "call-table",
    "agent",
    "chat",
    "resources",
    "read",
    "prompts",
    "prompt",
    "login",
    "logout",
    "demo-server",
    "http-tools",
    "program-tools",
    "servers search",
    "servers show",
    "connect",
)


def _section() -> str:
    """The whole reference page."""
    return REFERENCE.read_text(encoding="utf-8")


def _readme_section() -> str:
    """README.md's short "Command line" section."""
    text = README.read_text(encoding="utf-8")
    return text.split("\n## Command line\n", 1)[1].split("\n## ", 1)[0]


_TEXTS = {"docs/command-line.md": _section, "README.md": _readme_section}
"""Each text that shows the command line, by where it is."""


def _fences(language: str, text: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, re.DOTALL)


def _example_lines(text: str) -> list[str]:
    """The lines of the text's bash blocks, with `\\` continuations joined."""
    lines: list[str] = []
    for block in _fences("bash", text):
        for line in block.replace("\\\n", " ").splitlines():
            if line.strip():
                lines.append(line.strip())
    return lines


def _synopsis() -> dict[str, str]:
    """Each command's synopsis, continuation lines included."""
    synopsis: dict[str, str] = {}
    command = ""
    for line in _fences("text", _section())[0].splitlines():
        words = line.split()
        if words[:1] == ["knime-mcp"]:
            command = " ".join(words[1:3] if words[1] == "servers" else words[1:2])  # servers has sub-commands
            synopsis[command] = ""
        synopsis[command] += " " + line
    return synopsis


def _help_flags(capsys: pytest.CaptureFixture[str], *argv: str) -> set[str]:
    assert main([*argv, "--help"]) == 0
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", capsys.readouterr().out)) - {"--help"}


def test_every_flag_of_every_command_is_documented_and_the_synopsis_names_only_real_flags(
    capsys: pytest.CaptureFixture[str],
) -> None:
    synopsis = _synopsis()
    section = _section()
    assert set(_COMMANDS) | {"--version"} == set(synopsis)
    for command in _COMMANDS:
        accepted = _help_flags(capsys, *command.split())
        shown = set(re.findall(r"--[a-z][a-z-]*", synopsis[command]))
        assert shown <= accepted, f"{command}: the synopsis shows flags the parser does not know: {shown - accepted}"
        undocumented = {flag for flag in accepted if f"`{flag}" not in section and flag not in shown}
        assert not undocumented, f"{command}: flags docs/command-line.md does not mention: {undocumented}"
    assert "--version" in _help_flags(capsys)


def test_the_synopsis_marks_as_required_only_what_the_parser_requires(capsys: pytest.CaptureFixture[str]) -> None:
    for command in _COMMANDS:
        outside_brackets = re.sub(r"\[[^\]]*\]", "", _synopsis()[command])
        required = set(re.findall(r"--[a-z][a-z-]*", outside_brackets))
        assert main([*command.split(), "--help"]) == 0
        usage = capsys.readouterr().out.split("\n\n", 1)[0]
        parser_required = set(re.findall(r"--[a-z][a-z-]*", re.sub(r"\[[^\]]*\]", "", usage)))
        assert required == parser_required, command


@pytest.fixture
def demo_server_from_readme() -> Iterator[list[str]]:
    """Holds the processes that backgrounded lines start; stops them at the end."""
    started: list[subprocess.Popen[str]] = []
    yield started  # type: ignore[misc]
    for process in started:
        process.terminate()
        process.communicate(timeout=30)


def _start_in_background(words: list[str], started: list[subprocess.Popen[str]]) -> str:
    """Run a backgrounded `knime-mcp demo-server … --port 8000` on a free port; the URL root it listens on."""
    assert words[:2] == ["knime-mcp", "demo-server"] and "8000" in words, words
    argv = ["0" if word == "8000" else word for word in words[1:]]
    process = subprocess.Popen(
        [sys.executable, "-m", "knime_mcp", *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    started.append(process)  # type: ignore[arg-type]
    assert process.stderr is not None
    line = process.stderr.readline()
    found = re.search(r"listening on (http://127\.0\.0\.1:\d+)/", line)
    assert found, f"demo-server printed {line!r}"
    return found.group(1)


@pytest.mark.parametrize(("where", "least_lines"), [("docs/command-line.md", 6), ("README.md", 3)])
def test_every_example_line_of_the_command_line_documentation_runs(
    where: str,
    least_lines: int,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    demo_server_from_readme: list[subprocess.Popen[str]],
) -> None:
    monkeypatch.chdir(tmp_path)
    lines = _example_lines(_TEXTS[where]())
    assert len(lines) >= least_lines and all(line.split()[0] in ("knime-mcp", "printf") for line in lines)
    demo_url = None
    for line in lines:
        words = shlex.split(line, comments=True)
        if words[0] != "knime-mcp":
            subprocess.run(line, shell=True, check=True, cwd=tmp_path)
            continue
        if words[-1] == "&":
            demo_url = _start_in_background(words[:-1], demo_server_from_readme)
            continue
        if demo_url is not None:
            words = [word.replace(_DEMO_URL, demo_url) for word in words]
        start = words.index("--") + 1 if "--" in words else len(words)
        if words[start : start + len(_EVERYTHING)] == _EVERYTHING:
            words[start : start + len(_EVERYTHING)] = request.getfixturevalue("everything_stdio_command")
        if words[1] == "agent":
            script = [tool_calls(("c1", "add", {"a": 2, "b": 3})), answer("2 + 3 is 5.")]
            with FakeOpenAIEndpoint(script) as endpoint:
                code = main([endpoint.base_url if word == _MODEL_URL else word for word in words[1:]])
        else:
            code = main(words[1:])
        out, err = capsys.readouterr()
        assert code == 0, f"{where} line failed with exit code {code}: {line}\n{err}"
        assert out.strip(), f"{where} line printed nothing: {line}"
        if "--output" in words:
            written = words[words.index("--output") + 1]
            assert (tmp_path / written).is_file(), f"{where} line wrote no {written}: {line}"
    assert demo_url is not None


def test_no_option_that_takes_a_value_is_said_to_stand_alone(capsys: pytest.CaptureFixture[str]) -> None:
    """`--approve` takes all, none or ask: neither the documentation nor a command's help may offer it alone."""
    for command in _COMMANDS:
        assert main([*command.split(), "--help"]) == 0
        help_text = capsys.readouterr().out
        for flag in set(re.findall(r"(--[a-z][a-z-]*)[ =](?:\{|[A-Z])", help_text)):
            for said in (f"`{flag}` alone", f"{flag} alone"):
                for where, text in _TEXTS.items():
                    assert said not in text(), f"{where} says {said}, but {command} {flag} takes a value"
                assert said not in help_text, f"`{command} --help` says {said}, but {flag} takes a value"
