"""KNIME I/O: what the Agent Prompter and the Agent Chat build alike from their inputs before the core's agent runs:
the chat model of the model port with its API key, the tools of the tools table (MCP tools, workflow tools), the data
repository of the data inputs, and the earlier conversation. One piece, so both nodes read their inputs the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import knime.extension as knext

from nodes.knime_io.credentials import check_credentials, credential_lookup
from nodes.knime_io.repository import KnimeTables, has_ports
from nodes.knime_io.tools_table import table_tools

if TYPE_CHECKING:
    import pyarrow as pa
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage

    from knime_mcp.agent.data import DataRepository
    from knime_mcp.calls.dispatch import LocalTool
    from knime_mcp.config import CredentialLookup
    from knime_mcp.llm.chat_model import ChatModelConfig
    from knime_mcp.tools.tool import MCPTool

__all__ = ["AgentRun", "agent_run"]


@dataclass
class AgentRun:
    """The agent's inputs as the core takes them."""

    chat_model: BaseChatModel
    tools: list[MCPTool | LocalTool]
    notes: list[str]
    """What the workflow tools' reading noted, for the node warning."""
    repository: DataRepository
    uses_data: bool
    """Whether the model is told about the repository: data inputs, data outputs or workflow tools with ports."""
    history: list[BaseMessage]
    credentials: CredentialLookup
    api_key: str | None
    """The chat model's key, for the core to keep out of every output (``secrets``)."""


def agent_run(
    ctx: Any,
    model: ChatModelConfig,
    tools: knext.Table,
    columns: tuple[str | None, str | None],
    data: list[knext.Table],
    history: pa.Table | None,
    caller: Any,
    outputs: int,
) -> AgentRun:
    """Reads the tools table's MCP and workflow tool ``columns``, checks the servers' credentials exist, puts the data
    inputs into a new repository (named input_table_1, ...), reads the API key of ``model`` and the ``history``
    conversation; ``caller`` runs the workflow tools (a ``CallerThread``, or the chat view's worker thread),
    ``outputs`` is the number of data outputs."""
    from knime_mcp.agent.data import DataRepository
    from knime_mcp.agent.workflow import workflow_tools
    from knime_mcp.conversation import messages_from_arrow
    from knime_mcp.llm.chat_model import build_chat_model, resolve_api_key

    found = table_tools(tools, *columns)
    check_credentials(ctx, {tool.server.auth.credential for tool in found.mcp} - {None})
    repository = DataRepository(KnimeTables())
    for number, table in enumerate(data, start=1):
        repository.add(table, name=f"input_table_{number}", description=f"Data input {number} of the node")
    local, notes = workflow_tools(found.workflows, ctx, caller, repository)
    uses_data = bool(data) or outputs > 0 or any(has_ports(cell) for cell in found.workflows)
    credentials = credential_lookup(ctx)
    api_key = resolve_api_key(model, credentials)
    messages = messages_from_arrow(history) if history is not None else []
    return AgentRun(
        build_chat_model(model, api_key), [*found.mcp, *local], notes, repository, uses_data, messages, credentials,
        api_key,
    )  # fmt: skip
