"""The agent's settings that the Agent Prompter and the Agent Chat share: factories, so that both nodes declare each
parameter once, with the same name, label, default and version (saved workflows load into either)."""

from __future__ import annotations

import knime.extension as knext

from knime_mcp.agent.loop import DEFAULT_ITERATION_LIMIT, DEFAULT_MAX_CONCURRENCY, DEFAULT_SYSTEM_MESSAGE
from knime_mcp.config import SamplingLimits
from knime_mcp.tools.truncate import DEFAULT_LIMIT_BYTES, MIN_LIMIT_BYTES
from nodes._agent_options import ErrorOptions, LimitOptions, ToolErrorOptions
from nodes._agent_tables import is_workflow_column
from nodes._tables import is_string_column

__all__ = [
    "allow_parameter", "call_timeout_parameter", "deny_parameter", "errors_parameter", "iteration_limit_parameter",
    "max_concurrency_parameter", "mcp_column_parameter", "on_limit_parameter", "output_cap_parameter",
    "resources_parameter", "sampling_max_prompt_bytes_parameter", "sampling_max_requests_parameter",
    "sampling_max_tokens_parameter", "sampling_parameter", "system_message_parameter", "tool_errors_parameter",
    "workflow_column_parameter",
]  # fmt: skip

DEFAULT_SAMPLING = SamplingLimits()


def system_message_parameter() -> knext.MultilineStringParameter:
    return knext.MultilineStringParameter(
        "System message",
        "Instructions for the model. A notice that tool output is untrusted data is always added.",
        DEFAULT_SYSTEM_MESSAGE,
        number_of_lines=4,
    )


def mcp_column_parameter() -> knext.ColumnParameter:
    return knext.ColumnParameter(
        "MCP tool column",
        "The column holding MCP tools; none chosen: the provider's 'MCP Tool' column, if there is one.",
        port_index=1,
        column_filter=is_string_column,
    )


def workflow_column_parameter() -> knext.ColumnParameter:
    return knext.ColumnParameter(
        "Workflow tool column",
        "The column holding KNIME tools: workflow tools (KNIME 5.5 and later) and, where KNIME has its Tool type, "
        "MCP tools of KNIME's own (called through this extension); none chosen: the first such column, if any.",
        port_index=1,
        column_filter=is_workflow_column,
    )


def iteration_limit_parameter() -> knext.IntParameter:
    return knext.IntParameter(
        "Iteration limit",
        "The most model calls that may ask for tools in one execution.",
        DEFAULT_ITERATION_LIMIT,
        min_value=1,
    )


def on_limit_parameter() -> knext.EnumParameter:
    return knext.EnumParameter(
        "When the limit is reached",
        "What happens when the model still calls tools at the limit.",
        LimitOptions.FAIL.name,
        LimitOptions,
    )


def errors_parameter() -> knext.EnumParameter:
    return knext.EnumParameter(
        "Error handling", "What happens when the run stops early.", ErrorOptions.FAIL.name, ErrorOptions
    )


def tool_errors_parameter() -> knext.EnumParameter:
    return knext.EnumParameter(
        "When a tool call fails",
        "Whether a failing tool call ends the run.",
        ToolErrorOptions.MODEL.name,
        ToolErrorOptions,
        is_advanced=True,
    )


def max_concurrency_parameter() -> knext.IntParameter:
    return knext.IntParameter(
        "Concurrent tool calls",
        "The most tool calls of one model message that run at the same time. Calls of a tool that is not annotated "
        "read-only (or idempotent and not destructive) run one at a time per server, as in the MCP Tool Caller: "
        "overlapping calls of a server that rewrites one store can lose each other's changes.",
        DEFAULT_MAX_CONCURRENCY,
        min_value=1,
        is_advanced=True,
    )


def call_timeout_parameter() -> knext.DoubleParameter:
    return knext.DoubleParameter(
        "Tool call timeout (s)",
        "Seconds to wait for one MCP tool call; 0 uses the timeout set in the MCP Tool Provider.",
        0.0,
        min_value=0.0,
        is_advanced=True,
    )


def output_cap_parameter() -> knext.IntParameter:
    return knext.IntParameter(
        "Tool output cap (bytes)",
        "The most UTF-8 bytes of one tool result that reach the model; the rest is cut, with a note saying so.",
        DEFAULT_LIMIT_BYTES,
        min_value=MIN_LIMIT_BYTES,
        is_advanced=True,
    )


def allow_parameter() -> knext.StringParameter:
    return knext.StringParameter(
        "Tool allow-list (regex)",
        "When set, only tools whose whole name matches may be called.",
        "",
        is_advanced=True,
    )


def deny_parameter() -> knext.StringParameter:
    return knext.StringParameter(
        "Tool deny-list (regex)", "Tools whose name matches anywhere are never called.", "", is_advanced=True
    )


def sampling_parameter() -> knext.BoolParameter:
    return knext.BoolParameter(
        "Answer sampling requests with the chat model",
        "An MCP tool may ask the client's model to write something for it while it runs (sampling). Switch this on "
        "to answer such requests with this node's chat model, within the limits below; each answered request is "
        "logged. Off, they are declined and the tool is told so. Every request costs tokens of your model.",
        False,
        since_version="0.3.0",
        is_advanced=True,
    )


def sampling_max_tokens_parameter(sampling: knext.BoolParameter) -> knext.IntParameter:
    """Shown when ``sampling``, the node's own sampling parameter, is on; so are the two below."""
    return knext.IntParameter(
        "Most tokens per sampling answer",
        "The longest answer one sampling request gets; a request asking for more gets this many.",
        DEFAULT_SAMPLING.max_tokens,
        min_value=1,
        since_version="0.3.0",
        is_advanced=True,
    ).rule(knext.OneOf(sampling, [True]), knext.Effect.SHOW)


def sampling_max_prompt_bytes_parameter(sampling: knext.BoolParameter) -> knext.IntParameter:
    return knext.IntParameter(
        "Largest sampling prompt (bytes)",
        "The most a sampling request's prompt (its system prompt and messages, as UTF-8 bytes; about 4 bytes a "
        "token) may have; a larger request is declined, the tool is told why, and the KNIME log says so.",
        DEFAULT_SAMPLING.max_prompt_bytes,
        min_value=1,
        since_version="0.4.0",
        is_advanced=True,
    ).rule(knext.OneOf(sampling, [True]), knext.Effect.SHOW)


def sampling_max_requests_parameter(sampling: knext.BoolParameter) -> knext.IntParameter:
    return knext.IntParameter(
        "Most sampling requests per execution",
        "Sampling requests answered per execution, across all servers; later ones are declined.",
        DEFAULT_SAMPLING.max_requests,
        min_value=1,
        since_version="0.3.0",
        is_advanced=True,
    ).rule(knext.OneOf(sampling, [True]), knext.Effect.SHOW)


def resources_parameter() -> knext.BoolParameter:
    return knext.BoolParameter(
        "Offer the servers' resources",
        "Offer the model two more tools, list_resources and read_resource, to list and read the resources (files, "
        "documents, images) of the MCP servers in the tools table. Text reaches the model as text, images as images, "
        "within the tool output cap; calls are logged with the kind 'resource'. The allow-list and the deny-list "
        "apply to these two names; they only read.",
        False,
        since_version="0.3.0",
        is_advanced=True,
    )
