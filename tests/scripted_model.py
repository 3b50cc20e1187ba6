"""A chat model for agent tests: langchain-core's ``GenericFakeChatModel`` replaying scripted AIMessages, recording
what it was sent, so a test shows exactly what the model was told and what it answered."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGenerationChunk
from pydantic import Field


class ScriptedChatModel(GenericFakeChatModel):
    """Replays scripted AIMessages; records the messages and the bound tools of every call."""

    requests: list[tuple[list[BaseMessage], list[dict[str, Any]] | None]] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self.bind(tools=list(tools), **kwargs)

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        self.requests.append((list(messages), kwargs.get("tools")))
        return super()._generate(messages, stop, run_manager, **kwargs)

    def _stream(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        """The reply word by word, then its tool calls as the chunks a provider streams them in (the parent class
        streams text only, so a streamed tool call would be lost)."""
        message = self._generate(messages, stop, run_manager, **kwargs).generations[0].message
        for word in re.split(r"(\s)", message.text) if message.text else []:
            yield ChatGenerationChunk(message=AIMessageChunk(content=word, id=message.id))
        pieces = [
            {"id": c["id"], "name": c["name"], "args": json.dumps(c["args"]), "index": i, "type": "tool_call_chunk"}
            for i, c in enumerate(message.tool_calls)
        ]
        if pieces:
            yield ChatGenerationChunk(message=AIMessageChunk(content="", id=message.id, tool_call_chunks=pieces))


def scripted(*replies: AIMessage) -> ScriptedChatModel:
    return ScriptedChatModel(messages=iter(replies))


def calls(*items: tuple[str, str, dict[str, Any]]) -> AIMessage:
    """An AIMessage asking for the tool calls ``(id, name, arguments)``."""
    return AIMessage("", tool_calls=[{"id": i, "name": n, "args": a, "type": "tool_call"} for i, n, a in items])


def offered(model: ScriptedChatModel, request: int) -> list[str]:
    """The names of the tools the model was offered in its ``request``-th call."""
    return [spec["function"]["name"] for spec in model.requests[request][1] or []]


def run_scripted(model: ScriptedChatModel, tools: Sequence[Any], **kwargs: Any) -> Any:
    """``run_agent`` with the user message "Go.", from synchronous test code; the :class:`AgentRun`."""
    import anyio

    from knime_mcp.agent.loop import run_agent

    async def run() -> Any:
        return await run_agent(model, list(tools), "Go.", **kwargs)

    return anyio.run(run)


def tool_texts(run: Any) -> list[str]:
    """The text of every tool message the run added to the conversation."""
    from langchain_core.messages import ToolMessage

    return [str(m.content) for m in run.conversation.new_messages if isinstance(m, ToolMessage)]
