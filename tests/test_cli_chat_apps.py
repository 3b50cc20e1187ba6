"""`knime-mcp chat` says under a call whose tool has an MCP App that the terminal cannot show it, and where to see
it: the chat run as a fresh process against tests/servers/app_server.py over stdio and a scripted Ollama endpoint
(the model's side only), the person's lines on its standard input."""

from __future__ import annotations

import shlex
import subprocess
import sys

from fakes.scripted_providers import ScriptedEndpoint, answer, tool_calls
from fixtures.python_servers import SERVERS_DIR
from knime_mcp.config import ServerSpec

_PATIENCE = 120.0
"""Seconds the chat may take before the test fails (a guard against a hang, not a timing)."""


def test_a_call_of_a_tool_with_an_app_gets_one_line_naming_the_app_and_the_agent_chat() -> None:
    replies = [
        tool_calls(("c1", "show_chart", {"series": "sales"}), ("c2", "plain", {"text": "hi"})),
        answer("Shown."),
    ]
    server = shlex.join([sys.executable, str(SERVERS_DIR / "app_server.py")])
    with ScriptedEndpoint("ollama", replies) as endpoint:
        argv = [
            sys.executable, "-m", "knime_mcp", "chat", server, "--provider", "ollama", "--base-url", endpoint.base_url,
            "--model", "llama3.2",
        ]  # fmt: skip
        done = subprocess.run(
            argv, input="Show the sales chart.\n/exit\n", capture_output=True, text=True, timeout=_PATIENCE, check=False
        )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    where = ServerSpec(target=server).display_name  # a stdio server without a name: its command line
    expected = (
        f"[show_chart has an app (ui://charts/chart.html on {where}) that the terminal cannot show; run this chat in "
        "KNIME's Agent Chat to see it]"
    )
    assert lines.count(expected) == 1
    calling = next(i for i, line in enumerate(lines) if "[calling show_chart" in line)
    assert lines[calling + 1] == expected
    assert not [line for line in lines if "plain has an app" in line] and "Shown." in done.stdout
