"""What the Agent Prompter and the Agent Chat build alike from their settings and inputs: the core's AgentConfig,
the tool columns, and the tools of the tools table (MCP tools, workflow tools) with the data repository.

Both nodes declare the same parameters (``nodes._agent_settings``), so these functions read them off the node."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import knime.extension as knext

from knime_mcp.agent.config import ToolBudget
from knime_mcp.agent.loop import AgentConfig
from knime_mcp.config import SamplingLimits, ServerRequestPolicy
from knime_mcp.errors import ConfigError
from nodes._agent_options import ErrorOptions, LimitOptions, ToolErrorOptions
from nodes._agent_tables import KnimeTables, has_ports, is_workflow_column, tool_frame
from nodes._approval_settings import approval_policy
from nodes._credentials import check_credentials
from nodes._knime_tools import split_tool_cells, valid_cells
from nodes._tables import read_pyarrow
from nodes._tool_settings import elicitation_mode, tool_policy

if TYPE_CHECKING:
    from knime_mcp.agent.data import DataRepository
    from knime_mcp.calls.dispatch import LocalTool
    from knime_mcp.mcp.sync import CallerThread
    from knime_mcp.tools.tool import MCPTool

__all__ = ["AgentTools", "agent_config", "agent_tools", "tool_columns"]


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
        approval=approval_policy(
            destructive=node.ask_destructive,
            unannotated=node.ask_unannotated,
            pattern=node.ask_pattern,
            everything=node.ask_all,
        ),
    )


def check_history(history: knext.Schema | None) -> None:
    """A conversation input must hold the columns the agent nodes write (both nodes read it the same way)."""
    from knime_mcp.conversation import CONTENT, ROLE

    if history is not None and not {ROLE, CONTENT} <= set(history.column_names):
        raise ConfigError(
            f"The conversation table needs the columns {ROLE!r} and {CONTENT!r}.",
            hint="Connect a conversation table as this node outputs it.",
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


@dataclass
class AgentTools:
    """The tools of the tools table as the core calls them, and the data repository they share."""

    tools: list[MCPTool | LocalTool]
    notes: list[str]
    repository: DataRepository
    uses_data: bool
    """Whether the model is told about the repository: data inputs, data outputs or workflow tools with ports."""


def agent_tools(
    ctx: Any, node: Any, tools: knext.Table, data: list[knext.Table], caller: CallerThread, outputs: int
) -> AgentTools:
    """Reads the tools table as ``node``'s tool columns say, checks the servers' credentials exist, and puts the
    data inputs into a new repository (named input_table_1, ...); ``outputs`` is the number of data outputs."""
    from knime_mcp.agent.data import DataRepository
    from knime_mcp.agent.workflow import workflow_tools
    from knime_mcp.tools.arrow import tools_from_frame

    mcp_column, workflow_column = tool_columns(node, tools.schema)
    arrow = read_pyarrow(tools)
    mcp_tools = tools_from_frame(tool_frame(arrow, mcp_column), mcp_column) if mcp_column else []
    cells, knime_mcp_tools = split_tool_cells(_cells(arrow, workflow_column), mcp_tools)
    mcp_tools += knime_mcp_tools
    check_credentials(ctx, {tool.server.auth.credential for tool in mcp_tools} - {None})
    repository = DataRepository(KnimeTables())
    for number, table in enumerate(data, start=1):
        repository.add(table, name=f"input_table_{number}", description=f"Data input {number} of the node")
    local, notes = workflow_tools(cells, ctx, caller, repository)
    uses_data = bool(data) or outputs > 0 or any(has_ports(cell) for cell in cells)
    return AgentTools([*mcp_tools, *local], notes, repository, uses_data)


def _cells(arrow: Any, column: str | None) -> list[Any]:
    """The tools of the KNIME tool column ``column`` (``valid_cells``), none without one."""
    return [] if column is None else valid_cells(arrow, column)
