"""Test layer: the Agent Prompter node and what feeds it (provider tools tables, a chat model port), run the way
KNIME runs them, for the agent's node tests."""

from __future__ import annotations

from typing import Any

import pandas as pd

import node_host
from node_contexts import ExecuteContext
from nodes.agent_prompter import AgentPrompter
from nodes.chat_model_connector import ChatModelConnector
from nodes.tool_provider import MCPToolProvider

API_KEY = "sk-node-canary-5b2e"
"""The chat model's API key, a canary that no output, log or error may hold."""


def provider_tools_table(
    *providers: tuple[str, str, dict[str, Any]], credentials: dict[str, tuple[str, str]] | None = None
) -> Any:
    """The MCP Tool Provider's tables for ``(server, prefix, auth settings)``, concatenated as a workflow would."""
    frames = []
    for server, prefix, auth in providers:
        node = MCPToolProvider()
        node.server.server = server
        node.selection.prefix = prefix
        for name, value in auth.items():
            setattr(node.auth, name, value)
        (table,) = node_host.execute_node(node, ExecuteContext(credentials))
        frames.append(table.to_pandas().reset_index(drop=True))
    return node_host.source_table(pd.concat(frames, ignore_index=True))


def chat_model_port(
    base_url: str, credential: str = "llm", credentials: dict[str, tuple[str, str]] | None = None
) -> Any:
    connector = ChatModelConnector()
    connector.base_url = base_url
    connector.model = "fake-gpt"
    connector.credential = credential
    (port,) = node_host.execute_node(connector, ExecuteContext(credentials or {"llm": ("", API_KEY)}))
    return port


def agent_node(prompt: str, **settings: Any) -> Any:
    node = AgentPrompter()
    node.user_message = prompt
    for name, value in settings.items():
        setattr(node, name, value)
    return node


def run_agent_node(
    node: Any, ctx: ExecuteContext, model: Any, tools: Any, history: Any = None
) -> tuple[pd.DataFrame, ...]:
    conversation, log, _ = node_host.execute_node(node, ctx, model, tools, history, [])
    return conversation.to_pandas(), log.to_pandas()


def offered_tools(request: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in request.get("tools", [])]
