"""Parameters: the settings of the nodes whose agent asks a person before a call (*Ask before calling*): the Agent
Prompter, which stops with the call awaiting approval, and the Agent Chat, which asks in its view.

The parameters come from factories, so that every node declares them with the same names, texts and version
(0.5.0); ``approval_policy`` translates them for the core's :class:`~knime_mcp.agent.approval.ApprovalPolicy`.
"""

from __future__ import annotations

import knime.extension as knext

from knime_mcp.agent.approval import ApprovalPolicy
from knime_mcp.agent.config import AgentConfig

__all__ = [
    "approval_policy", "ask_all_parameter", "ask_destructive_parameter", "ask_pattern_parameter",
    "ask_unannotated_parameter", "unasked_warning",
]  # fmt: skip

_SINCE = "0.5.0"


def ask_destructive_parameter() -> knext.BoolParameter:
    return knext.BoolParameter(
        "Ask before calling destructive tools",
        "Wait for a person's approval before each call of a tool annotated destructive. Such tools are called only "
        "when 'Destructive tools' allows them.",
        False,
        since_version=_SINCE,
    )


def ask_unannotated_parameter() -> knext.BoolParameter:
    return knext.BoolParameter(
        "Ask before calling tools without annotations",
        "Wait for a person's approval before each call of a tool whose server sent no MCP annotations, so that "
        "nothing says what it does.",
        False,
        since_version=_SINCE,
        is_advanced=True,
    )


def ask_pattern_parameter() -> knext.StringParameter:
    return knext.StringParameter(
        "Ask before calling tools matching (regex)",
        "Wait for a person's approval before each call of a tool whose name this regular expression matches "
        "anywhere, ignoring case (workflow tools too), also where the name only looks like a match (a Cyrillic е "
        "for e, fullwidth letters: Unicode's confusables folding); empty: no tool by name.",
        "",
        since_version=_SINCE,
        is_advanced=True,
    )


def ask_all_parameter() -> knext.BoolParameter:
    return knext.BoolParameter(
        "Ask before every tool call",
        "Wait for a person's approval before every tool call, workflow tools included.",
        False,
        since_version=_SINCE,
    )


def approval_policy(*, destructive: bool, unannotated: bool, pattern: str, everything: bool) -> ApprovalPolicy:
    """The core's approval policy from node settings; a bad pattern is a ConfigError naming the setting."""
    return ApprovalPolicy(
        destructive=destructive, unannotated=unannotated, pattern=pattern or None, everything=everything
    )


def unasked_warning(ctx: knext.ConfigurationContext, config: AgentConfig) -> None:
    """Warn at configure when *Ask before calling destructive tools* can ask nothing, because the policy never offers
    destructive tools; the policy stays as saved, so the warning names the setting to change."""
    if config.asks_about_blocked_destructive:
        ctx.set_warning(
            "'Ask before calling destructive tools' is on, but 'Destructive tools' blocks destructive tools, so they "
            "are never offered and nobody is asked: set 'Destructive tools' to 'Allow all' to offer them with a "
            "question first, or switch 'Ask before calling destructive tools' off"
        )
