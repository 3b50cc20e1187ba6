"""knime-mcp's KNIME extension module: the category and the nodes, nothing else.

KNIME imports this file by name (knime.yml: extension_module) with its folder on sys.path.
"""

import knime.extension as knext

from nodes import CATEGORY

_PARENT, _, _LEVEL = CATEGORY.rpartition("/")
knext.category(
    path=_PARENT,
    level_id=_LEVEL,
    name="MCP",
    description="Model Context Protocol tools for KNIME workflows and agents.",
    icon="icons/category.png",
)

# Nodes are declared after their category.
from nodes.agent_chat import AgentChat  # noqa: E402
from nodes.agent_prompter import AgentPrompter  # noqa: E402
from nodes.chat_model_connector import ChatModelConnector  # noqa: E402
from nodes.http_tool_provider import HTTPToolProvider  # noqa: E402
from nodes.program_tool_provider import ProgramToolProvider  # noqa: E402
from nodes.prompt import MCPPrompt  # noqa: E402
from nodes.resource_reader import MCPResourceReader  # noqa: E402
from nodes.tool_caller import MCPToolCaller  # noqa: E402
from nodes.tool_provider import MCPToolProvider  # noqa: E402
from nodes.tool_statistics import ToolStatistics  # noqa: E402

__all__ = [
    "AgentChat", "AgentPrompter", "ChatModelConnector", "HTTPToolProvider", "MCPPrompt", "MCPResourceReader",
    "MCPToolCaller", "MCPToolProvider", "ProgramToolProvider", "ToolStatistics",
]  # fmt: skip
