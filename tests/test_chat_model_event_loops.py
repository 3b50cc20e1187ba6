"""A chat model's HTTP connections and the event loops knime-mcp runs on: each node execution and command runs on a
loop of its own (:func:`run_sync`), and a connection kept alive belongs to the loop that opened it. The LangChain
integrations of OpenAI and Anthropic share one HTTP client per endpoint across the process, so the next run with the
same endpoint reused the last run's connection and failed with "Event loop is closed"; and a shared client dropped
later closed itself on whatever loop ran then, failing an unrelated run (seen as a flaky OAuth test). The endpoints
are the scripted fakes, speaking each provider's wire format (no provider's server runs here)."""

from __future__ import annotations

from typing import get_args

import pytest
from langchain_core.language_models import BaseChatModel

from fakes.scripted_providers import ScriptedEndpoint, answer
from knime_mcp.llm.chat_model import ChatModelConfig, Provider, build_chat_model
from knime_mcp.mcp.sync import run_sync


async def _ask(model: BaseChatModel) -> str:
    return str((await model.ainvoke("Hello?")).content)


@pytest.mark.parametrize("provider", get_args(Provider))
def test_a_model_built_for_each_run_answers_each_run_on_the_runs_own_event_loop(provider: Provider) -> None:
    # Given two runs one after the other with the same endpoint, each on an event loop of its own with a model built
    # for it, as two executions of a node are
    version = {"api_version": "2024-10-21"} if provider == "azure" else {}
    with ScriptedEndpoint(provider, [answer("first"), answer("second")]) as endpoint:
        config = ChatModelConfig(provider=provider, base_url=endpoint.base_url, model="m", **version)  # type: ignore[arg-type]
        answers = [run_sync(_ask, build_chat_model(config, "key")) for _ in range(2)]
    # Then both runs got their answer: the second did not reuse a connection of the first run's closed loop
    assert answers == ["first", "second"]
