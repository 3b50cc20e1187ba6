"""What servers say about themselves, through the command line: ``agent`` sends a server's instructions to the model
(``--no-server-instructions`` leaves them out), and ``chat`` shows them on ``/instructions`` and shows a result's
parts for the person, not those for the model only. The chat model is the scripted Ollama endpoint (a fake: no model
runs here); the server is this project's guidance server over stdio (tests/servers/guidance_server.py)."""

from __future__ import annotations

import io
import shlex
import sys

import pytest

from cli_runs import run_cli
from fakes.scripted_providers import ScriptedEndpoint, answer, tool_calls
from fixtures.python_servers import SERVERS_DIR

GUIDANCE = shlex.join([sys.executable, str(SERVERS_DIR / "guidance_server.py")])
INSTRUCTIONS = "Ask weather for a city's weather; it answers in degrees Celsius."


def _system_sent(endpoint: ScriptedEndpoint) -> str:
    first = endpoint.received[0].body["messages"][0]
    assert first["role"] == "system"
    return str(first["content"])


@pytest.mark.parametrize("flags", [(), ("--no-server-instructions",)], ids=["given", "left-out"])
def test_agent_sends_the_servers_instructions_unless_told_not_to(
    capsys: pytest.CaptureFixture[str], flags: tuple[str, ...]
) -> None:
    with ScriptedEndpoint("ollama", [answer("Noted.")]) as endpoint:
        code, out, err = run_cli(
            capsys, "agent", "--provider", "ollama", "--base-url", endpoint.base_url, "--model", "llama3.2", *flags,
            GUIDANCE, "--name", "guidance", "--prompt", "Hi",
        )  # fmt: skip
        system = _system_sent(endpoint)
    assert code == 0, err
    if flags:
        assert INSTRUCTIONS not in system
    else:
        assert '<server-instructions server="guidance" fence="' in system and INSTRUCTIONS in system


def test_chat_shows_the_instructions_and_the_persons_part_of_a_result(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a chat whose person asks for the instructions, then for the weather, then leaves
    monkeypatch.setattr(sys, "stdin", io.StringIO("/instructions\nWeather in Bern?\n/exit\n"))
    replies = [tool_calls(("c1", "weather", {"city": "Bern"})), answer("Sunny.")]
    with ScriptedEndpoint("ollama", replies) as endpoint:
        code, out, err = run_cli(
            capsys, "chat", "--provider", "ollama", "--base-url", endpoint.base_url, "--model", "llama3.2",
            GUIDANCE, "--name", "guidance",
        )  # fmt: skip
        tool_result = endpoint.dialect.tool_results(endpoint.received[1].body)
    assert code == 0, err
    # Then /instructions printed the server's instructions under its name
    assert f"[instructions of guidance]\n  {INSTRUCTIONS}\n" in out
    # And the result shows the person's part and the part for both, and says a part for the model is not shown
    assert "Sunny in Bern (for the person)" in out and "21 degrees (for both)" in out
    assert "(for the model)" not in out and "1 part(s) for the assistant only are not shown here" in out
    # While the model got its own part and not the person's
    [(_, text)] = tool_result
    assert "(for the model)" in text and "(for the person)" not in text
