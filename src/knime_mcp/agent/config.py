"""How far an agent run may go and what stops it: :class:`AgentConfig`, shared by the nodes, the CLI and the tests.

Its own module so that the loop (:mod:`knime_mcp.agent.loop`) holds the run and this the settings a run is given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from os import PathLike
from typing import Literal, get_args

from knime_mcp.agent.approval import NO_APPROVAL, ApprovalPolicy
from knime_mcp.agent.tool_budget import MAX_OFFERED_SPEC_BYTES, MAX_OFFERED_TOOLS, ToolBudget
from knime_mcp.calls.dispatch import RetryPolicy
from knime_mcp.config import DEFAULT_SERVER_REQUESTS, ServerRequestPolicy
from knime_mcp.errors import ConfigError
from knime_mcp.tools.policy import ToolPolicy
from knime_mcp.tools.truncate import DEFAULT_LIMIT_BYTES, MIN_LIMIT_BYTES

__all__ = [
    "DEFAULT_AGENT_RETRY", "DEFAULT_ITERATION_LIMIT", "DEFAULT_MAX_CONCURRENCY", "MAX_OFFERED_SPEC_BYTES",
    "MAX_OFFERED_TOOLS", "AgentConfig", "ErrorMode", "LimitMode", "ToolBudget", "ToolErrorMode",
]  # fmt: skip

DEFAULT_ITERATION_LIMIT = 25
DEFAULT_MAX_CONCURRENCY = 4
DEFAULT_AGENT_RETRY = RetryPolicy(attempts=3)

LimitMode = Literal["fail", "final_answer"]
ErrorMode = Literal["fail", "column"]
ToolErrorMode = Literal["model", "fail"]


@dataclass(frozen=True, kw_only=True)
class AgentConfig:
    """How far the agent may go and what stops it; shared by the node, the CLI and the tests."""

    iteration_limit: int = DEFAULT_ITERATION_LIMIT
    """Model calls per run that may ask for tools."""

    on_limit: LimitMode = "fail"
    """At the limit: fail, or ask the model once more, without tools, for a final answer."""

    errors: ErrorMode = "fail"
    """When the run stops early: raise, or end the conversation with an error row."""

    tool_errors: ToolErrorMode = "model"
    """A failed tool call: give the error to the model to recover from, or stop the run."""

    max_concurrency: int = DEFAULT_MAX_CONCURRENCY
    """Tool calls of one model message that run at once (also the limit per MCP server); calls of a tool that may
    write (not :attr:`~knime_mcp.tools.tool.ToolAnnotations.concurrency_safe`) run one at a time per server."""

    call_timeout: float | None = None
    """Seconds per MCP tool call; None uses each server's own call timeout."""

    output_cap: int = DEFAULT_LIMIT_BYTES
    """UTF-8 bytes of one tool result's text that reach the model; the rest is cut, with a note saying so."""

    policy: ToolPolicy = field(default_factory=ToolPolicy)
    """Which tools the model is offered and may call; by default none annotated destructive (tools without
    annotations are offered, and named in :attr:`AgentRun.warnings`)."""

    retry: RetryPolicy = DEFAULT_AGENT_RETRY
    """Retries of read-only and idempotent tool calls after timeouts, lost connections, 429 and 5xx."""

    trust_all_servers: bool = False
    """Connect to every server of the tools as it is. By default a server without this machine's seal (tools not
    listed by a provider here) is data: checked before it is connected, as :class:`~knime_mcp.calls.pool.ClientPool`
    does with ``check_unsealed``."""

    server_requests: ServerRequestPolicy = DEFAULT_SERVER_REQUESTS
    """How the run answers what servers ask while a tool runs: forms (elicitation), and sampling requests, which
    the run's chat model answers when this allows it."""

    resources: bool = False
    """Offer the model two tools of the agent's own that list and read the resources of the tools' MCP servers
    (:mod:`knime_mcp.agent.resource_tools`); the policy's allow-list and deny-list apply to their names."""

    skills: str | PathLike[str] | None = None
    """A skills folder (Agent Skills: subfolders each holding a ``SKILL.md``): the model is told each skill's name and
    description and loads and reads a skill through two tools of the agent's own (:mod:`knime_mcp.agent.skill_tools`);
    nothing in a skill is run unless ``skill_scripts`` allows it. None or empty: no skills."""

    skill_scripts: bool = False
    """Let the model run the skills' scripts (``run_skill_script``: a file inside a skill's folder, run as a program
    tool is, :mod:`knime_mcp.agent.skill_scripts`). Off: the tool is not offered, and a call of it is refused."""

    approval: ApprovalPolicy = NO_APPROVAL
    """Which calls wait for a person's approval (:mod:`knime_mcp.agent.approval`); by default none."""

    tool_budget: ToolBudget = ToolBudget()
    """How many tools the model is offered at once; more tools than that are searched (:class:`ToolBudget`)."""

    tasks: bool = False
    """Run tools that may run as MCP tasks (``execution.taskSupport`` "optional") as tasks; tools that must
    (``"required"``) always do (:mod:`knime_mcp.mcp.tasks`)."""

    server_instructions: bool = True
    """Give the model what each server of the offered tools says about itself (its ``instructions``), fenced as the
    server's words in the system message (:mod:`knime_mcp.agent.server_guidance`); their sessions then open as the
    run starts rather than on their first call."""

    tool_hints: bool = False
    """Tell the model each tool's hints, a person's *Expected time (s)* and *Cost* from the tools table
    (:class:`~knime_mcp.tools.tool_columns.ToolHints`), at the end of the tool's description."""

    @property
    def asks_about_blocked_destructive(self) -> bool:
        """Whether approval is asked for destructive tools that the policy never offers, so nobody is ever asked:
        each face warns, naming its setting, rather than changing the policy (saved workflows keep their meaning)."""
        return self.approval.destructive and self.policy.destructive != "allow"

    def __post_init__(self) -> None:
        if self.iteration_limit < 1:
            raise ConfigError("The iteration limit must be at least 1.")
        if self.max_concurrency < 1:
            raise ConfigError("The maximum number of concurrent tool calls must be at least 1.")
        if self.call_timeout is not None and self.call_timeout <= 0:
            raise ConfigError("The tool call timeout must be a positive number of seconds.")
        if self.output_cap < MIN_LIMIT_BYTES:
            raise ConfigError(f"The tool output cap must be at least {MIN_LIMIT_BYTES:,} bytes.")
        for value, kind in ((self.on_limit, LimitMode), (self.errors, ErrorMode), (self.tool_errors, ToolErrorMode)):
            if value not in get_args(kind):
                raise ConfigError(f"Unknown agent setting {value!r}; use one of {', '.join(get_args(kind))}.")
