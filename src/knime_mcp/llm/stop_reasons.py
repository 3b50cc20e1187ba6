"""Why a model stopped, in one word whatever its provider says: each LangChain integration keeps its provider's own
stop reason in the answer's ``response_metadata``, so the agent (an empty reply cut off at the token limit) and a
server's sampling request (``stopReason: maxTokens``) tell a cut-off reply from a finished one on every provider.

Layer: wire, beside :mod:`knime_mcp.llm.providers`.

    stop_reason(answer)   # "length", "content_filter" or None
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from langchain_core.messages import AIMessage

__all__ = ["StopReason", "stop_reason"]

StopReason = Literal["length", "content_filter"]

_REASONS: dict[tuple[str, str], StopReason] = {
    ("finish_reason", "length"): "length",  # OpenAI, Azure OpenAI
    ("stop_reason", "max_tokens"): "length",  # Anthropic
    ("finish_reason", "MAX_TOKENS"): "length",  # Gemini
    ("done_reason", "length"): "length",  # Ollama
    ("finish_reason", "content_filter"): "content_filter",  # OpenAI, Azure OpenAI
    ("stop_reason", "refusal"): "content_filter",  # Anthropic
    ("finish_reason", "SAFETY"): "content_filter",  # Gemini
}
"""``(metadata key, the provider's word)`` of the reasons knime-mcp acts on."""


def stop_reason(answer: AIMessage) -> StopReason | None:
    """Whether the reply was cut off at the token limit (``length``) or withheld by a filter, on any provider."""
    metadata = answer.response_metadata or {}
    for key in ("finish_reason", "stop_reason", "done_reason"):
        word = metadata.get(key)
        if isinstance(word, str) and (reason := _REASONS.get((key, word))) is not None:
            return reason
    return None
