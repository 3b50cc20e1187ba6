"""A model's answer checked before the loop acts on it: every tool call with an id, and an empty reply explained.

Layer: core (agent), below :mod:`knime_mcp.agent.loop`.
"""

from __future__ import annotations

import logging
from secrets import token_hex
from typing import TYPE_CHECKING, Any

from knime_mcp.errors import ChatModelError

if TYPE_CHECKING:
    from langchain_core.messages import AIMessage

__all__ = ["check_answer", "with_call_ids"]

logger = logging.getLogger(__name__)


def with_call_ids(answer: AIMessage) -> AIMessage:
    """Every tool call with an id of its own: some servers leave it out, and a reply may repeat one, but each tool
    message must name its call, and a person's approval or denial must hold for that call alone. A repeated id gets
    a suffix (``c1`` and ``c1_1a2b3c``), so the tool-call log shows which calls shared it."""
    ids = [call.get("id") for call in [*answer.tool_calls, *answer.invalid_tool_calls]]
    if all(ids) and len(set(ids)) == len(ids):
        return answer
    seen: set[str] = set()

    def own(call: Any) -> Any:
        given = call.get("id")
        new = _call_id(given) if not given or given in seen else given
        seen.add(new)
        return {**call, "id": new}

    if repeated := sorted({str(i) for i in ids if i and ids.count(i) > 1}):
        logger.warning("The model's reply gave several tool calls the id %s; each got an id of its own.", repeated)
    return answer.model_copy(
        update={
            "tool_calls": [own(call) for call in answer.tool_calls],
            "invalid_tool_calls": [own(call) for call in answer.invalid_tool_calls],
        }
    )


def _call_id(repeated: str | None = None) -> str:
    return f"{repeated}_{token_hex(3)}" if repeated else f"call_{token_hex(6)}"


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
