"""Figure 12: the agent per tool-calling turn against a hand-written LangChain loop over the same model and server.

Both sides talk to one loopback OpenAI-compatible endpoint (``chat_endpoint.py``: ``turns`` turns of one ``echo``
call, then an answer) and to the demo server over Streamable HTTP. Ours is the run API as the Agent Prompter calls it
(:func:`~knime_mcp.agent.loop.run_agent` under :func:`~knime_mcp.mcp.sync.run_sync`, the tools from a tools table the
provider listed beforehand, the tool-change watch on, as always). The baseline is the loop people write by hand:
``ChatOpenAI.bind_tools`` with the listed tools, ``invoke``, each call through the raw ``mcp`` SDK session, a
``ToolMessage`` appended, repeated until the model answers. Each side opens its session and lists the tools inside
its run, and every run's answers are checked; per-turn time is a run's time over its turns. Figure 12b is the CPU
time of this process per turn (both sides' clients run here, the endpoint and the server in processes of their own):
the client's own work, which a busy machine moves less than the wall time.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple, TypeVar

import anyio
import mcp
import mcp_types
from _rounds import Rounds, interleave, same_gc_state
from _servers import served
from chat_endpoint import ANSWER
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_openai import ChatOpenAI
from openai import DefaultAsyncHttpxClient

from knime_mcp.agent.loop import run_agent
from knime_mcp.calls.listing import list_server_tools
from knime_mcp.config import ServerSpec
from knime_mcp.llm.chat_model import ChatModelConfig, build_chat_model
from knime_mcp.mcp.sync import run_sync

__all__ = ["AgentRounds", "agent_figures", "agent_rounds", "chat_endpoint", "langchain_loop", "measured", "our_run"]

F = TypeVar("F")
"""``run.py``'s figure type, which this module does not import (``run.py`` imports this one)."""

ENDPOINT = [sys.executable, str(Path(__file__).with_name("chat_endpoint.py"))]
PROMPT = "Echo each turn."
TURNS = 20
TURN_BAR = 1.05
"""The issue's goal: a turn of the agent costs at most 5 % more than the hand-written loop's."""


@contextmanager
def chat_endpoint(turns: int) -> Iterator[str]:
    """The loopback chat endpoint answering ``turns`` tool-calling turns; yields its base URL."""
    with served([*ENDPOINT, "--turns", str(turns)]) as base_url:
        yield base_url


def _model(base_url: str) -> ChatOpenAI:
    """The hand-written loop's model, with an HTTP client of its own, as ours has (each run has its own event loop,
    and a client the integration shares across the process stays bound to the loop that first used it)."""
    return ChatOpenAI(base_url=base_url, api_key="bench", model="bench", http_async_client=DefaultAsyncHttpxClient())  # type: ignore[arg-type]


def _offered(tool: mcp_types.Tool) -> bool:
    """Both sides offer the demo server's tools but the destructive one, which the agent's default policy blocks
    (and the person who chose the tools in the provider left out)."""
    return not (tool.annotations is not None and tool.annotations.destructive_hint)


def _checked(messages: list[BaseMessage], turns: int) -> None:
    """Every turn's echo came back, in order, and the run ended with the model's answer."""
    echoed = [message.content for message in messages if isinstance(message, ToolMessage)]
    assert len(echoed) == turns and all(f"turn {n}" in str(text) for n, text in enumerate(echoed, 1)), echoed
    assert isinstance(messages[-1], AIMessage) and messages[-1].content == ANSWER, messages[-1]


def our_run(url: str, base_url: str, turns: int) -> Callable[[], None]:
    """One agent run as the Agent Prompter makes it (its model built per run), from a tools table the provider
    listed once beforehand."""
    tools = [
        tool for tool in anyio.run(list_server_tools, ServerSpec(target=url)).tools if not tool.annotations.destructive
    ]

    def run() -> None:
        model = build_chat_model(ChatModelConfig(base_url=base_url, model="bench"), "bench")
        result = run_sync(run_agent, model, tools, PROMPT)
        assert result.failure is None, result.failure
        _checked(result.conversation.messages, turns)

    return run


async def langchain_loop(url: str, base_url: str, turns: int) -> None:
    """The hand-written loop: list the tools, bind them, invoke, call each tool through the raw SDK, repeat."""
    async with mcp.Client(url) as client:
        listed = [tool for tool in (await client.list_tools()).tools if _offered(tool)]
        specs = [
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description or "", "parameters": t.input_schema},
            }
            for t in listed
        ]
        model = _model(base_url).bind_tools(specs)
        messages: list[BaseMessage] = [HumanMessage(PROMPT)]
        while True:
            answer = await model.ainvoke(messages)
            messages.append(answer)
            if not answer.tool_calls:
                break
            for call in answer.tool_calls:
                result = await client.call_tool(call["name"], call["args"])
                text = "\n".join(getattr(part, "text", "") for part in result.content)
                messages.append(ToolMessage(text, tool_call_id=call["id"], name=call["name"]))
    _checked(messages, turns)


class AgentRounds(NamedTuple):
    """Per tool-calling turn, in seconds: wall time (the figure), and this process's CPU time (both sides' clients
    run here; the model endpoint and the MCP server run in processes of their own), which a busy machine moves less."""

    wall: Rounds
    cpu: Rounds


def agent_rounds(url: str, turns: int, rounds: int) -> AgentRounds:
    """Ours and the LangChain loop, per tool-calling turn over ``turns`` turns a run."""
    cpu: dict[str, list[float]] = {"ours": [], "base": []}

    def per_turn(side: str, run: Callable[[], None]) -> Callable[[], float]:
        def measure() -> float:
            with same_gc_state():
                cpu_started, started = time.process_time(), time.perf_counter()
                run()
                wall = time.perf_counter() - started
                cpu[side].append((time.process_time() - cpu_started) / turns)
            return wall / turns

        return measure

    with chat_endpoint(turns) as base_url:
        ours = our_run(url, base_url, turns)

        def base() -> None:
            anyio.run(langchain_loop, url, base_url, turns)

        ours(), base()  # warm: imports, the endpoint's and the server's first requests
        wall = interleave(per_turn("ours", ours), per_turn("base", base), rounds)
    return AgentRounds(wall, Rounds(cpu["ours"], cpu["base"]))


def measured(rounds: Rounds) -> str:
    ours, base = rounds.medians(1000)
    return f"{ours:.2f} vs {base:.2f} ms a turn"


def agent_figures(judged: Callable[[str, str, Rounds, str, float], F], url: str, rounds: int) -> Iterator[F]:
    """Figure 12 (wall time per turn) and 12b (this process's CPU time per turn), each judged at :data:`TURN_BAR`
    by ``judged`` (``run.py``'s ``_judged``)."""
    measured_rounds = agent_rounds(url, TURNS, rounds)
    what = f"agent per tool-calling turn ({TURNS} turns a run) vs a hand-written LangChain loop, Streamable HTTP"
    yield judged("12", what, measured_rounds.wall, measured(measured_rounds.wall), TURN_BAR)
    what = f"the same, CPU time of the client process per turn ({TURNS} turns a run)"
    yield judged("12b", what, measured_rounds.cpu, measured(measured_rounds.cpu), TURN_BAR)
