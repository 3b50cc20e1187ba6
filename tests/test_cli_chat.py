"""``knime-mcp chat`` on a pseudo-terminal, as a person uses it: a streamed answer, tool calls shown as they start
and end, approval asked on the terminal, a server's form asked field by field, Ctrl-C stopping a turn (and the call
on the server) but not the chat, and ``/exit``. The chat model is the scripted Ollama endpoint (a fake: no model runs
here), which streams as Ollama does; the tools are this project's MCP servers over stdio."""

from __future__ import annotations

import os
import pty
import select
import shlex
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes.scripted_providers import ScriptedEndpoint, answer, tool_calls
from fixtures.python_servers import SERVERS_DIR

_PATIENCE = 60.0
"""Seconds to wait for expected text before the test fails (a wait for readiness, not a timing)."""


class _Terminal:
    """A child process on a pseudo-terminal: what it printed, read until the text a test expects appears."""

    def __init__(self, argv: list[str]) -> None:
        pid, fd = pty.fork()
        if pid == 0:  # the child: the terminal's session leader, so Ctrl-C reaches it as SIGINT
            os.execv(argv[0], argv)
        self.pid, self._fd = pid, fd
        self.seen = ""
        self._read_to = 0

    def expect(self, text: str) -> str:
        """Read until ``text`` appears after what earlier calls consumed; return everything up to its end."""
        deadline = time.monotonic() + _PATIENCE
        while (found := self.seen.find(text, self._read_to)) < 0:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"gave up waiting for {text!r}; the terminal shows:\n{self.seen}"
            ready, _, _ = select.select([self._fd], [], [], remaining)
            if ready:
                try:
                    chunk = os.read(self._fd, 65536)
                except OSError:  # the child ended: nothing more will come
                    chunk = b""
                assert chunk, f"the chat ended before {text!r}; the terminal shows:\n{self.seen}"
                self.seen += chunk.decode("utf-8", errors="replace").replace("\r\n", "\n")
        start, self._read_to = self._read_to, found + len(text)
        return self.seen[start : self._read_to]

    def type(self, text: str) -> None:
        os.write(self._fd, text.encode())

    def wait(self) -> int:
        """The child's exit code, once it ended."""
        deadline = time.monotonic() + _PATIENCE
        while True:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
            assert time.monotonic() < deadline, f"the chat did not end; the terminal shows:\n{self.seen}"
            select.select([self._fd], [], [], 0.05)  # drain nothing; just yield while the child exits

    def close(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(self._fd)


@pytest.fixture
def marks(tmp_path: Path) -> Path:
    return tmp_path / "marks.txt"


@pytest.fixture
def terminal(marks: Path) -> Iterator[tuple[_Terminal, ScriptedEndpoint]]:
    replies = [
        tool_calls(("c1", "whoami", {})),
        answer("You are the first caller."),
        tool_calls(("c2", "ask_name", {})),
        answer("Greeted you."),
        tool_calls(("c3", "wait", {})),
    ]
    chat_server = shlex.join([sys.executable, str(SERVERS_DIR / "chat_server.py"), str(marks)])
    asking_server = shlex.join([sys.executable, str(SERVERS_DIR / "asking_server.py")])
    with ScriptedEndpoint("ollama", replies) as endpoint:
        argv = [
            sys.executable, "-m", "knime_mcp", "chat", chat_server, asking_server, "--provider", "ollama",
            "--base-url", endpoint.base_url, "--model", "llama3.2", "--ask-pattern", "^whoami$",
        ]  # fmt: skip
        # The chat inherits SIGINT ignored, as every child of a script's background job does (the test command run
        # so: Ctrl-C was lost twice): on its terminal it takes Ctrl-C back, which stops its answers
        inherited = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            term = _Terminal(argv)
        finally:
            signal.signal(signal.SIGINT, inherited)
        try:
            yield term, endpoint
        finally:
            term.close()


def test_a_chat_on_the_terminal_streams_asks_and_stops_a_turn_with_ctrl_c(
    terminal: tuple[_Terminal, ScriptedEndpoint], marks: Path
) -> None:
    term, endpoint = terminal
    term.expect("Chatting with")
    # A call that needs approval is asked about on the terminal, then shown as it starts and ends
    term.expect("> ")
    term.type("Who am I?\n")
    term.expect("Approve the call of whoami")
    term.type("y\n")
    shown = term.expect("You are the first caller.")
    assert "[calling whoami on " in shown and "chat_server.py" in shown and "with {}]" in shown
    assert "[ok in " in shown and "] call 1 in process " in shown
    # A server's form is asked field by field; a field left empty takes its default
    term.expect("> ")
    term.type("Greet me.\n")
    assert "What is your name?" in term.expect("Fill it in?")
    term.type("y\n")
    term.expect("name (string; required): ")
    term.type("Ada\n")
    term.expect("(string; default Hello): ")
    term.type("\n")
    assert "Hello, Ada!" in term.expect("Greeted you.")
    # Ctrl-C stops the turn and the call on the server, and the chat goes on
    term.expect("> ")
    term.type("Wait for it.\n")
    term.expect("[calling wait on ")
    deadline = time.monotonic() + _PATIENCE
    while not (marks.exists() and "started" in marks.read_text()):
        assert time.monotonic() < deadline, "the server never started the call"
        select.select([], [], [], 0.01)
    term.type("\x03")
    assert "[cancelled in " in term.expect("> ")
    deadline = time.monotonic() + _PATIENCE
    while "cancelled" not in marks.read_text():
        assert time.monotonic() < deadline, "the server never saw the cancellation"
        select.select([], [], [], 0.01)
    # /exit ends the chat
    term.type("/exit\n")
    assert term.wait() == 0
    # The model heard the approved call's result, and the person's answers reached the server
    assert len(endpoint.received) == 5
    assert "Hello, Ada!" in endpoint.dialect.tool_results(endpoint.received[3].body)[-1][1]


def test_a_chat_on_the_terminal_shows_a_hostile_form_reduced_a_tasks_statuses_and_a_result_as_lines(
    everything_stdio_command: list[str],
) -> None:
    # Given a server whose form has titles, labels and defaults that are not text, and server-everything's research
    # tool, which runs only as an MCP task, says each stage as its status and answers a Markdown report
    replies = [
        tool_calls(("c1", "odd_form", {})), answer("Thanks."),
        tool_calls(("c2", "simulate-research-query", {"topic": "KNIME"})), answer("Researched."),
    ]  # fmt: skip
    forms = shlex.join([sys.executable, str(SERVERS_DIR / "hostile_form_server.py")])
    with ScriptedEndpoint("ollama", replies) as endpoint:
        argv = [
            sys.executable, "-m", "knime_mcp", "chat", forms, shlex.join(everything_stdio_command),
            "--provider", "ollama", "--base-url", endpoint.base_url, "--model", "llama3.2",
        ]  # fmt: skip
        term = _Terminal(argv)
        try:
            term.expect("> ")
            # When the model calls the form's tool, the form is asked field by field, without the odd parts
            term.type("Ask me.\n")
            assert "Tell me about you." in term.expect("Fill it in? [y = accept / n = decline / c = cancel] ")
            term.type("y\n")
            for prompt, typed in [
                ("name (string; required): ", "Ada"), ("Colour (string; one of red, green): ", "green"),
                ("size (string; one of s, l (Large)): ", "l"), ("count (integer): ", "2"),
                ("tags (array; one or more of a, b, separated by commas): ", "a, b"),
            ]:  # fmt: skip
                term.expect(prompt)
                term.type(f"{typed}\n")
            shown = term.expect("Thanks.")
            assert "accept: {'name': 'Ada', 'colour': 'green', 'size': 'l', 'count': 2, 'tags': ['a', 'b']}" in shown
            # And when it calls the task tool, each status it saw shows as a progress line, and the report as lines
            term.expect("> ")
            term.type("Research KNIME.\n")
            shown = term.expect("Researched.")
            statuses = [line for line in shown.splitlines() if line.startswith("[simulate-research-query: ")]
            assert statuses and all(line.endswith("...]") for line in statuses), shown
            assert "\n  # Research Report: KNIME\n" in shown and "\\u000a" not in shown
            term.expect("> ")
            term.type("/exit\n")
            assert term.wait() == 0
        finally:
            term.close()
