"""What servers say about themselves, through the agent nodes as KNIME runs them, on both hosts: the Agent Prompter
and the Agent Chat give the model a server's instructions (their advanced setting leaves them out), the chat view's
data service lists them on request, and a result's parts for the person only never reach the model while the
tool-call log keeps them.

The model is the scripted OpenAI-compatible endpoint on 127.0.0.1; the tools are this project's guidance server's
(tests/servers/guidance_server.py) over stdio, listed by the real MCP Tool Provider node.
"""

from __future__ import annotations

import json
import shlex
import sys
from typing import Any

import pytest

from agent_runs import API_KEY, agent_node, chat_model_port, provider_tools_table, run_agent_node
from chat_views import until, view_service
from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer, tool_calls
from fixtures.python_servers import SERVERS_DIR
from node_contexts import ExecuteContext
from nodes.agent_chat import AgentChat
from nodes.agent_chat.sessions import CHAT_SESSIONS

pytestmark = pytest.mark.knime_node

CREDENTIALS = {"llm": ("", API_KEY)}
INSTRUCTIONS = "Ask weather for a city's weather; it answers in degrees Celsius."


@pytest.fixture(scope="module")
def guidance_tools() -> Any:
    return provider_tools_table((shlex.join([sys.executable, str(SERVERS_DIR / "guidance_server.py")]), "", {}))


def _system(request: dict[str, Any]) -> str:
    first = request["messages"][0]
    assert first["role"] == "system"
    return str(first["content"])


@pytest.mark.parametrize("given", [True, False], ids=["given", "left-out"])
def test_the_agent_prompter_gives_the_model_the_servers_instructions_unless_told_not_to(
    guidance_tools: Any, given: bool
) -> None:
    with FakeOpenAIEndpoint([answer("Noted.")]) as endpoint:
        node = agent_node("Hi", server_instructions=given)
        run_agent_node(node, ExecuteContext(CREDENTIALS), chat_model_port(endpoint.base_url), guidance_tools)
        system = _system(endpoint.requests[0])
    assert (INSTRUCTIONS in system) is given
    assert ("<server-instructions server=" in system) is given


def test_the_agent_prompter_keeps_the_persons_part_from_the_model_and_in_the_log(guidance_tools: Any) -> None:
    script = [tool_calls(("c1", "weather", {"city": "Bern"})), answer("Sunny.")]
    with FakeOpenAIEndpoint(script) as endpoint:
        node = agent_node("Weather in Bern?")
        _, log = run_agent_node(node, ExecuteContext(CREDENTIALS), chat_model_port(endpoint.base_url), guidance_tools)
        [reply] = [m for m in endpoint.requests[1]["messages"] if m["role"] == "tool"]
    assert "(for the model)" in reply["content"] and "(for the person)" not in reply["content"]
    parts = json.loads(log["Result"].iloc[0])["content"]
    assert [part.get("audience") for part in parts] == [["user"], ["assistant"], None]


@pytest.mark.parametrize("given", [True, False], ids=["given", "left-out"])
def test_the_agent_chats_view_lists_the_instructions_and_gives_them_to_the_model_unless_told_not_to(
    guidance_tools: Any, given: bool
) -> None:
    node = AgentChat()
    node.server_instructions = given
    with FakeOpenAIEndpoint([answer("Hello.")]) as endpoint:
        service = view_service(node, chat_model_port(endpoint.base_url), guidance_tools, CREDENTIALS)
        try:
            # The view lists what the servers said: all of them when the model is given it, none before their first
            # call when it is not
            listed = service.request("instructions")
            assert [item["text"] for item in listed] == ([INSTRUCTIONS] if given else [])
            service.request("send", "Hi")
            until(service, lambda event: event["type"] == "turn_end")
            assert (INSTRUCTIONS in _system(endpoint.requests[0])) is given
        finally:
            CHAT_SESSIONS.close_all()
