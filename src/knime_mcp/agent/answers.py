"""A model's answer checked before the loop acts on it: every tool call with an id, and an empty reply explained.

Layer: core (agent), below :mod:`knime_mcp.agent.loop`.
"""

from __future__ import annotations

from secrets import token_hex
from typing import TYPE_CHECKING

from knime_mcp.errors import ChatModelError

if TYPE_CHECKING:
    from langchain_core.messages import AIMessage

__all__ = ["check_answer", "with_call_ids"]


def with_call_ids(answer: AIMessage) -> AIMessage:
    """Every tool call with an id: some servers leave it out, but each tool message must name its call."""
    if all(call.get("id") for call in [*answer.tool_calls, *answer.invalid_tool_calls]):
        return answer
    return answer.model_copy(
        update={
            "tool_calls": [{**call, "id": call.get("id") or _call_id()} for call in answer.tool_calls],
            "invalid_tool_calls": [{**call, "id": call.get("id") or _call_id()} for call in answer.invalid_tool_calls],
        }
    )


def _call_id() -> str:
    return f"call_{token_hex(6)}"


def check_answer(answer: AIMessage) -> None:
    """An empty answer without tool calls usually means the reply was cut off; say how to fix it."""
    if answer.tool_calls or answer.invalid_tool_calls or answer.text.strip():
        return
    from knime_mcp.llm.stop_reasons import stop_reason

    reason = stop_reason(answer)
    if reason == "length":
        raise ChatModelError(
            "The model's reply was cut off at the token limit before it said anything.",
            hint="Raise the maximum number of tokens of the chat model.",
        )
    if reason == "content_filter":
        raise ChatModelError("The model's reply was withheld by the server's content filter.")
