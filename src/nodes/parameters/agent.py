"""Parameters: the agent's settings that the Agent Prompter and the Agent Chat share, and the core's AgentConfig of
them. Factories, not a group: both nodes declare each parameter once, with the same name, label, default and version
(saved workflows load into either), at the top level of their settings where every earlier version saved it."""

from __future__ import annotations

from typing import Any

import knime.extension as knext

from knime_mcp.agent.config import MAX_OFFERED_SPEC_BYTES, MAX_OFFERED_TOOLS, ToolBudget
from knime_mcp.agent.loop import DEFAULT_ITERATION_LIMIT, DEFAULT_MAX_CONCURRENCY, DEFAULT_SYSTEM_MESSAGE, AgentConfig
from knime_mcp.agent.server_guidance import MAX_INSTRUCTION_BYTES
from knime_mcp.config import SamplingLimits, ServerRequestPolicy
from knime_mcp.errors import ConfigError
from knime_mcp.tools.tool_hints import MAX_COST_CHARS
from knime_mcp.tools.truncate import DEFAULT_LIMIT_BYTES, MIN_LIMIT_BYTES
from nodes.parameters.agent_options import ErrorOptions, LimitOptions, ToolErrorOptions
from nodes.parameters.approval import approval_policy
from nodes.parameters.column_types import is_string_column, is_workflow_column
from nodes.parameters.tool_policy import elicitation_mode, tool_policy

__all__ = [
    "agent_config", "tool_columns",
    "allow_parameter", "call_timeout_parameter", "deny_parameter", "errors_parameter", "iteration_limit_parameter",
    "max_concurrency_parameter", "mcp_column_parameter", "on_limit_parameter", "only_tagged_parameter",
    "output_cap_parameter",
    "resources_parameter", "sampling_max_prompt_bytes_parameter", "sampling_max_requests_parameter",
    "pinned_tools_parameter", "sampling_max_tokens_parameter", "sampling_parameter", "system_message_parameter",
    "server_instructions_parameter", "skill_scripts_parameter", "skills_parameter",
    "tool_budget_bytes_parameter", "tool_budget_parameter", "tool_errors_parameter", "tool_hints_parameter",
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
        "Seconds to wait for one MCP tool call; 0 uses the timeout set in the MCP Tool Provider. A tool whose row of "
        "the tools table has a number in a *Timeout (s)* column (one you add) waits that long instead.",
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


def only_tagged_parameter() -> knext.StringParameter:
    """Added in 0.5.0: tools selected by the tags of the tools table (its Tags column)."""
    return knext.StringParameter(
        "Only tools tagged",
        "Tags separated by commas (e.g. github, read-only): when set, only the MCP and HTTP tools of the tools table "
        "that carry any of them (its Tags column, ignoring case) are offered and may be called; the others are left "
        "out without a warning each. Empty: every tool. The allow-list, the deny-list and the destructive-tool "
        "setting apply as well.",
        "",
        since_version="0.5.0",
        is_advanced=True,
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


def server_instructions_parameter() -> knext.BoolParameter:
    return knext.BoolParameter(
        "Give the model the servers' instructions",
        "Add what each MCP server of the offered tools says about itself and how to use it (its instructions) to "
        "the system message, each fenced as that server's words (the model is told they are not the user's) and "
        f"cut at {MAX_INSTRUCTION_BYTES:,} bytes a server. The servers then connect as the run starts rather than "
        "on their first call. Off: the model is not given them.",
        True,
        since_version="0.5.0",
        is_advanced=True,
    )


def skills_parameter() -> knext.StringParameter:
    return knext.StringParameter(
        "Skills folder",
        "A folder of Agent Skills, the open format: each subfolder holds a SKILL.md with a name and a description in "
        "its front matter and instructions below, and may hold other files. The model is told each skill's name and "
        "description, and when it chooses a skill it reads its instructions and files with two tools of the agent's "
        "own, load_skill and read_skill_file (logged with the kind 'skill'; the allow-list and the deny-list apply "
        "to these names). They only read text files inside the skill's own folder; nothing in a skill is run unless "
        "'Run skill scripts' is on, and the model is told so. Subfolders that break the format are left out with a "
        "warning. Empty: no skills.",
        "",
        since_version="0.5.0",
        is_advanced=True,
    )


def skill_scripts_parameter() -> knext.BoolParameter:
    return knext.BoolParameter(
        "Run skill scripts",
        "Let the model run the scripts of the skills in the Skills folder, through a third tool, run_skill_script "
        "(logged with the kind 'skill'; the allow-list, the deny-list and the approval settings apply to it as to a "
        "tool without annotations, and it needs the Files and Processes permissions of 'Granted permissions'): a "
        "file inside a skill's own folder (never one a link or .. leads out of it to), run in that folder without a "
        "shell, with the arguments the model gives, one "
        "each: .py files with KNIME's Python, .sh with bash, .js with node, any other file only if it is "
        "executable. It gets only PATH, HOME, LANG, LC_ALL and TMPDIR of KNIME's environment, and is stopped with "
        "every process it started after 60 s or when the node is cancelled; what it writes is the tool's result, "
        "and a failing script is a tool error. A skills folder's scripts run with your rights on this machine: "
        "switch this on only for skills you trust. Off: no script runs, and the model is told so.",
        False,
        since_version="0.5.0",
        is_advanced=True,
    )


_SEARCH = (
    " Up to this many, every tool is offered to the model as it is. With more, the model is offered a tool search "
    "instead (search_tools: it describes what it wants to do and gets the best matching tools), the tools found "
    "from its next step on, and the tools pinned below; searches are logged with the kind 'tool search'."
)


def tool_budget_parameter() -> knext.IntParameter:
    return knext.IntParameter(
        "Tool search above (tools)",
        f"The most tools offered to the model at once (OpenAI's models take at most {MAX_OFFERED_TOOLS})." + _SEARCH,
        MAX_OFFERED_TOOLS,
        min_value=2,
        since_version="0.5.0",
        is_advanced=True,
    )


def tool_budget_bytes_parameter() -> knext.IntParameter:
    return knext.IntParameter(
        "Tool search above (bytes of tool specs)",
        "The most UTF-8 bytes of tool specs (names, descriptions and input schemas, about 4 bytes a token) offered "
        "to the model at once: every model call carries them." + _SEARCH,
        MAX_OFFERED_SPEC_BYTES,
        min_value=1_000,
        since_version="0.5.0",
        is_advanced=True,
    )


def pinned_tools_parameter() -> knext.StringParameter:
    return knext.StringParameter(
        "Always offer tools (regex)",
        "When the model searches the tools (more than the tool search settings above): the tools whose name this "
        "finds anywhere are always offered too, as many as fit; empty pins none.",
        "",
        since_version="0.5.0",
        is_advanced=True,
    )


def tool_hints_parameter() -> knext.BoolParameter:
    return knext.BoolParameter(
        "Tell the model each tool's hints",
        "End each tool's description with the hints set in the tools table: its 'Expected time (s)' (a number of "
        "seconds) and its 'Cost' (a number or a short text such as '0.02 USD per call'), columns added beside the "
        "MCP Tool column (e.g. with a Table Creator joined on the tool names, or a Column Expressions node), in one "
        "short sentence, so the model can prefer the faster or cheaper tool. A cost is cut to "
        f"{MAX_COST_CHARS} characters on one line. Off: the model is not told them.",
        False,
        since_version="0.5.0",
        is_advanced=True,
    )


def agent_config(node: Any, *, errors: str | None = None, elicitation: str | None = None) -> AgentConfig:
    """The core's configuration from ``node``'s agent settings; ``errors`` and ``elicitation`` (option names)
    stand in for settings a node does not have."""
    errors = errors or node.errors
    return AgentConfig(
        iteration_limit=node.iteration_limit,
        on_limit="final_answer" if node.on_limit == LimitOptions.FINAL_ANSWER.name else "fail",
        errors="column" if errors == ErrorOptions.COLUMN.name else "fail",
        tool_errors="fail" if node.tool_errors == ToolErrorOptions.FAIL.name else "model",
        max_concurrency=node.max_concurrency,
        call_timeout=node.call_timeout or None,
        output_cap=node.output_cap,
        policy=tool_policy(
            node.allow,
            node.deny,
            node.destructive,
            unannotated_destructive=node.unannotated_destructive,
            tags=node.only_tagged,
            granted=node.granted_permissions,
        ),
        trust_all_servers=node.trust_all_servers,
        server_requests=ServerRequestPolicy(
            elicitation=elicitation_mode(elicitation or node.elicitation),
            sampling=SamplingLimits(
                max_tokens=node.sampling_max_tokens,
                max_requests=node.sampling_max_requests,
                max_prompt_bytes=node.sampling_max_prompt_bytes,
            )
            if node.sampling
            else None,
        ),
        resources=node.resources,
        tool_budget=ToolBudget(
            tools=node.tool_budget, spec_bytes=node.tool_budget_bytes, pinned=node.pinned_tools or None
        ),
        tasks=node.tasks,
        server_instructions=node.server_instructions,
        tool_hints=node.tool_hints,
        skills=node.skills or None,
        skill_scripts=node.skill_scripts,
        approval=approval_policy(
            destructive=node.ask_destructive,
            unannotated=node.ask_unannotated,
            pattern=node.ask_pattern,
            everything=node.ask_all,
        ),
    )


def tool_columns(node: Any, schema: knext.Schema) -> tuple[str | None, str | None]:
    """The MCP and workflow tool columns: the chosen ones, else found by name and type; at least one."""
    from knime_mcp.tools.arrow import TOOL_COLUMN

    names = schema.column_names
    for chosen in (node.mcp_column, node.workflow_column):
        if chosen and chosen not in names:
            raise ConfigError(f"The tools table has no column {chosen!r}.", hint="Choose a tool column again.")
    mcp = node.mcp_column or (TOOL_COLUMN if TOOL_COLUMN in names else None)
    workflow = node.workflow_column or next((c.name for c in schema if is_workflow_column(c)), None)
    if mcp is None and workflow is None:
        raise ConfigError(
            "The tools table has no MCP tool column and no workflow tool column.",
            hint="Connect the MCP Tool Provider's output, or a table of KNIME workflow tools.",
        )
    return mcp, workflow
