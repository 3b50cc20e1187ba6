"""A model's answer as it is generated: its text in pieces for a person watching, then the whole message for the loop.

Layer: core (agent), used by :class:`~knime_mcp.agent.loop.Agent` when it is given a listener (the chat session).
LangChain's providers stream tool calls as chunks too; adding the chunks up and converting the sum gives the same
``AIMessage`` (text, tool calls, invalid tool calls, metadata) that ``ainvoke`` returns, so the loop is unchanged.

    answer = await streamed_answer(model, messages, lambda text: print(text, end=""))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_core.messages import AIMessage, BaseMessage

__all__ = ["TextListener", "streamed_answer"]

TextListener = Callable[[str], None]
"""Hears each piece of an answer's text as it arrives."""


async def streamed_answer(model: Any, messages: Sequence[BaseMessage], listener: TextListener) -> AIMessage:
    """Stream ``model``'s answer to ``messages``, telling ``listener`` every non-empty piece of text."""
    from langchain_core.messages import AIMessage, AIMessageChunk
    from langchain_core.messages.utils import message_chunk_to_message

    whole: AIMessageChunk | None = None
    async for chunk in model.astream(list(messages)):
        if text := chunk.text:
            listener(text)
        whole = chunk if whole is None else whole + chunk
    if whole is None:
        return AIMessage("")
    answer = message_chunk_to_message(whole)
    assert isinstance(answer, AIMessage)
    return answer
