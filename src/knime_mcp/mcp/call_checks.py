"""What decides about one tool call besides sending it: whether it runs as an MCP task, and whether its answer can
be used after the client declined a form the tool asked for.

Layer: wire, beside :class:`~knime_mcp.mcp.client.McpClient`, whose ``call_tool`` asks these before and after
sending; kept apart so that the client stays one module's worth.
"""

from __future__ import annotations

from mcp.client.session import ClientSession

from knime_mcp.errors import ToolCallError
from knime_mcp.mcp.tasks import runs_as_task, task_calls_offered
from knime_mcp.tools.tool import TaskSupport

__all__ = ["declined_error", "runs_as_task_here"]


def runs_as_task_here(session: ClientSession, tool_name: str, support: TaskSupport, tasks: bool, server: str) -> bool:
    """Whether this call runs as a task on ``session``; a tool that requires one on a server that offers none is
    refused."""
    if not runs_as_task(support, tasks):
        return False
    if task_calls_offered(session):
        return True
    if support == "optional":
        return False
    raise ToolCallError(
        f"Tool {tool_name!r} runs only as an MCP task, but the server does not offer task calls "
        "(capability tasks.requests.tools.call).",
        server=server,
        hint="Leave this tool out, or ask the server's maintainers why it lists a task tool without tasks.",
    )


def declined_error(tool_name: str, reasons: list[str], server: str) -> ToolCallError:
    """The error of a call during which the client declined a form: the server's answer after a decline reads like
    a success."""
    return ToolCallError(
        f"Tool {tool_name!r} asked for input, which knime-mcp declined ({'; '.join(reasons)}), so its answer is "
        "not used.",
        server=server,
        hint="Give the tool what it asks for as arguments if it takes them; for a form whose fields all have "
        "defaults, let the node (or --elicitation defaults) answer with the defaults.",
    )
