"""The tool budget: how many tools, and bytes of their specs, the model is offered at once before it searches.

Its own light module (no SDK, no anyio) so that the command line can name the defaults in ``--help`` without loading
the agent; :mod:`knime_mcp.agent.config` re-exports it.
"""

from __future__ import annotations

from dataclasses import dataclass

from knime_mcp.errors import ConfigError

__all__ = ["MAX_OFFERED_SPEC_BYTES", "MAX_OFFERED_TOOLS", "ToolBudget"]

MAX_OFFERED_TOOLS = 128
"""The default tool budget's tools: OpenAI's chat API refuses more per request, and models choose worse among many."""

MAX_OFFERED_SPEC_BYTES = 200_000
"""The default tool budget's UTF-8 bytes of specs (name, fenced description, schema as JSON), about 50,000 tokens:
every model request carries them, so a large tool set would crowd out the conversation and cost on every turn."""


@dataclass(frozen=True, kw_only=True)
class ToolBudget:
    """How many tools the model is offered at once (:mod:`knime_mcp.agent.tool_offer`). Tools that fit are all
    offered, as they are; more are searched: the model is offered the pinned tools, the agent's own resource tools,
    a search tool, and the tools it found."""

    tools: int = MAX_OFFERED_TOOLS
    """The most tools offered per model request."""

    spec_bytes: int = MAX_OFFERED_SPEC_BYTES
    """The most UTF-8 bytes of tool specs per model request."""

    pinned: str | None = None
    """A regular expression: the tools whose model-facing name it finds (anywhere, like the deny-list) are always
    offered when the model searches, as many as fit the budget; empty or None pins none."""

    def __post_init__(self) -> None:
        if self.tools < 2:
            raise ConfigError("The tool budget must be at least 2 tools: the search tool and one found tool.")
        if self.spec_bytes < 1_000:
            raise ConfigError("The tool budget must be at least 1,000 bytes of tool specs.")
        from knime_mcp.tools.names import compile_name_pattern

        compile_name_pattern(self.pinned, "pattern of the tools always offered")
