"""A chat model for agent tests: langchain-core's ``GenericFakeChatModel`` replaying scripted AIMessages, recording
what it was sent, so a test shows exactly what the model was told and what it answered."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from pydantic import Field


class ScriptedChatModel(GenericFakeChatModel):
    """Replays scripted AIMessages; records the messages and the bound tools of every call."""

    requests: list[tuple[list[BaseMessage], list[dict[str, Any]] | None]] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self.bind(tools=list(tools), **kwargs)

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        self.requests.append((list(messages), kwargs.get("tools")))
        return super()._generate(messages, stop, run_manager, **kwargs)


def scripted(*replies: AIMessage) -> ScriptedChatModel:
    return ScriptedChatModel(messages=iter(replies))


def calls(*items: tuple[str, str, dict[str, Any]]) -> AIMessage:
    """An AIMessage asking for the tool calls ``(id, name, arguments)``."""
    return AIMessage("", tool_calls=[{"id": i, "name": n, "args": a, "type": "tool_call"} for i, n, a in items])
