"""knime-mcp: Model Context Protocol tools for KNIME, as a pure-Python core usable without KNIME.

The public API lives here; modules behind it are free to move. Importing the package is cheap: names whose modules
pull in pyarrow, pandas, jsonschema or langchain load on first use (PEP 562).

    from knime_mcp import McpClient, ServerSpec
    async with McpClient(ServerSpec(target="http://127.0.0.1:8000/mcp")) as client:
        print(await client.list_tools())
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__all__ = [
    "AgentConfig",
    "AgentRun",
    "ApprovalPolicy",
    "ApprovalRequest",
    "Approver",
    "AuthRef",
    "CallOutcome",
    "CallRecord",
    "CallSummary",
    "CallerOptions",
    "ChatModelConfig",
    "ChatSession",
    "CircuitBreaker",
    "ClientPool",
    "ConfigError",
    "DataRepository",
    "Decision",
    "Dispatcher",
    "LocalTool",
    "MCPPrompt",
    "MCPResource",
    "MCPResourceTemplate",
    "MCPTool",
    "McpClient",
    "McpToolError",
    "ProgramSpec",
    "PromptError",
    "RegistryEntry",
    "RenderedPrompt",
    "ResourceContent",
    "ResourceError",
    "RetryPolicy",
    "SamplingLimits",
    "ServerAuthError",
    "ServerConnectError",
    "ServerRequestPolicy",
    "ServerRequests",
    "ServerSetup",
    "ServerSpec",
    "SessionApprover",
    "SyncMcpClient",
    "Timeouts",
    "TlsSettings",
    "ToolAnnotations",
    "ToolBudget",
    "ToolCallError",
    "ToolError",
    "ToolListing",
    "ToolPolicy",
    "ToolResult",
    "ToolStats",
    "ToolTimeoutError",
    "build_chat_model",
    "call_table",
    "call_table_sync",
    "fill_template",
    "find_server",
    "is_sealed_here",
    "list_http_tools",
    "list_program_tools",
    "list_server_tools",
    "needed_permissions",
    "parse_pasted",
    "resolve_server",
    "run_agent",
    "run_sync",
    "seal_spec",
    "search_servers",
    "server_setup",
    "statistics_table",
    "team_seal_key",
    "tool_statistics",
    "tools_from_arrow",
    "tools_to_arrow",
]

_LOCATIONS = {
    "CallSummary": "caller.table",
    "CallerOptions": "caller.table",
    "call_table": "caller.table",
    "call_table_sync": "caller.table",
    "AgentConfig": "agent.loop",
    "AgentRun": "agent.loop",
    "ToolBudget": "agent.config",
    "ToolStats": "agent.tool_stats",
    "statistics_table": "agent.tool_stats",
    "tool_statistics": "agent.tool_stats",
    "run_agent": "agent.loop",
    "ApprovalPolicy": "agent.approval",
    "ApprovalRequest": "agent.approval",
    "Approver": "agent.approval",
    "Decision": "agent.approval",
    "SessionApprover": "agent.approval",
    "ChatSession": "agent.chat_session",
    "ChatModelConfig": "llm.chat_model",
    "build_chat_model": "llm.chat_model",
    "CircuitBreaker": "net.breaker",
    "AuthRef": "config",
    "ServerSpec": "config",
    "Timeouts": "config",
    "TlsSettings": "config",
    "SamplingLimits": "config",
    "ServerRequestPolicy": "config",
    "parse_pasted": "config",
    "ServerRequests": "mcp.server_requests",
    "ConfigError": "errors",
    "DataRepository": "agent.data",
    "McpToolError": "errors",
    "PromptError": "errors",
    "ResourceError": "errors",
    "ServerAuthError": "errors",
    "ServerConnectError": "errors",
    "ToolCallError": "errors",
    "ToolError": "errors",
    "ToolTimeoutError": "errors",
    "ClientPool": "calls.pool",
    "McpClient": "mcp.client",
    "SyncMcpClient": "mcp.sync",
    "run_sync": "mcp.sync",
    "MCPTool": "tools.tool",
    "MCPResource": "mcp.resources",
    "MCPResourceTemplate": "mcp.resources",
    "ResourceContent": "mcp.resources",
    "fill_template": "mcp.resources",
    "MCPPrompt": "mcp.prompts",
    "RenderedPrompt": "mcp.prompts",
    "ToolAnnotations": "tools.tool",
    "ToolPolicy": "tools.policy",
    "needed_permissions": "tools.permissions",
    "ToolResult": "tools.results",
    "CallOutcome": "calls.dispatch",
    "CallRecord": "calls.dispatch",
    "Dispatcher": "calls.dispatch",
    "LocalTool": "calls.dispatch",
    "RetryPolicy": "calls.dispatch",
    "ToolListing": "calls.listing",
    "list_server_tools": "calls.listing",
    "list_http_tools": "calls.listing",
    "list_program_tools": "calls.listing",
    "ProgramSpec": "config.program",
    "RegistryEntry": "registry.entries",
    "ServerSetup": "registry.setup",
    "find_server": "registry.catalog",
    "resolve_server": "registry.catalog",
    "search_servers": "registry.catalog",
    "server_setup": "registry.setup",
    "tools_from_arrow": "tools.arrow",
    "tools_to_arrow": "tools.arrow",
    "is_sealed_here": "seal",
    "seal_spec": "seal",
    "team_seal_key": "seal",
}

if TYPE_CHECKING:
    from knime_mcp.agent.approval import ApprovalPolicy, ApprovalRequest, Approver, Decision, SessionApprover
    from knime_mcp.agent.chat_session import ChatSession
    from knime_mcp.agent.config import ToolBudget
    from knime_mcp.agent.data import DataRepository
    from knime_mcp.agent.loop import AgentConfig, AgentRun, run_agent
    from knime_mcp.agent.tool_stats import ToolStats, statistics_table, tool_statistics
    from knime_mcp.caller.table import CallerOptions, CallSummary, call_table, call_table_sync
    from knime_mcp.calls.dispatch import CallOutcome, CallRecord, Dispatcher, LocalTool, RetryPolicy
    from knime_mcp.calls.listing import ToolListing, list_http_tools, list_program_tools, list_server_tools
    from knime_mcp.calls.pool import ClientPool
    from knime_mcp.config import (
        AuthRef,
        SamplingLimits,
        ServerRequestPolicy,
        ServerSpec,
        Timeouts,
        TlsSettings,
        parse_pasted,
    )
    from knime_mcp.config.program import ProgramSpec
    from knime_mcp.errors import (
        ConfigError,
        McpToolError,
        PromptError,
        ResourceError,
        ServerAuthError,
        ServerConnectError,
        ToolCallError,
        ToolError,
        ToolTimeoutError,
    )
    from knime_mcp.llm.chat_model import ChatModelConfig, build_chat_model
    from knime_mcp.mcp.client import McpClient
    from knime_mcp.mcp.prompts import MCPPrompt, RenderedPrompt
    from knime_mcp.mcp.resources import MCPResource, MCPResourceTemplate, ResourceContent, fill_template
    from knime_mcp.mcp.server_requests import ServerRequests
    from knime_mcp.mcp.sync import SyncMcpClient, run_sync
    from knime_mcp.net.breaker import CircuitBreaker
    from knime_mcp.registry.catalog import find_server, resolve_server, search_servers
    from knime_mcp.registry.entries import RegistryEntry
    from knime_mcp.registry.setup import ServerSetup, server_setup
    from knime_mcp.seal import is_sealed_here, seal_spec, team_seal_key
    from knime_mcp.tools.arrow import tools_from_arrow, tools_to_arrow
    from knime_mcp.tools.permissions import needed_permissions
    from knime_mcp.tools.policy import ToolPolicy
    from knime_mcp.tools.results import ToolResult
    from knime_mcp.tools.tool import MCPTool, ToolAnnotations


def __getattr__(name: str) -> Any:
    if name not in _LOCATIONS:
        raise AttributeError(f"module 'knime_mcp' has no attribute {name!r}")
    value = getattr(import_module(f"knime_mcp.{_LOCATIONS[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
