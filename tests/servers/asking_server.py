"""Test server: tools that ask things of the client while they run, as the MCP specification lets a server do.

- `unlock` adds the tool `unlocked` and tells the client with `notifications/tools/list_changed`, so an agent run
  sees the tool set change mid-run (server-everything sends that notification only right after the handshake);
- `confirm` asks for a form (elicitation) whose every field has a default, and says what came back;
- `ask_name` asks for a form with a field without a default (a person would have to type it);
- `summarize` asks the client's model (sampling) and returns its answer;
- `slow` reports progress three times and logs a message at each step.

Runs over stdio with the SDK's `MCPServer`, which speaks the 2026-07-28 protocol: a tool asks the client by returning
an input-required result, and the client calls it again with the answers (server-everything, on the older protocol,
sends requests to the client instead).
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import (
    CreateMessageRequest,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequest,
    InputRequiredResult,
    SamplingMessage,
    TextContent,
)

_CONFIRMATION = {
    "type": "object",
    "properties": {
        "proceed": {"type": "boolean", "default": True},
        "copies": {"type": "integer", "default": 2},
    },
}
_PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "greeting": {"type": "string", "default": "Hello"}},
    "required": ["name"],
}


def _ask(request: InputRequest) -> InputRequiredResult:
    return InputRequiredResult(input_requests={"answer": request})


def _form(message: str, schema: dict[str, Any]) -> InputRequiredResult:
    return _ask(ElicitRequest(params=ElicitRequestFormParams(message=message, requested_schema=schema)))


def _answer(ctx: Context) -> Any:
    return (ctx.input_responses or {}).get("answer")


def main() -> None:
    server = MCPServer("knime-mcp-asking-test")

    def unlocked() -> str:
        """A tool that exists only after `unlock` ran."""
        return "unlocked tool ran"

    @server.tool()
    async def unlock(ctx: Context) -> str:
        """Add the tool `unlocked` and tell the client that the tool list changed."""
        server.add_tool(unlocked)
        await ctx.notify_tools_changed()
        return "added the tool 'unlocked'"

    @server.tool()
    async def confirm(ctx: Context) -> str | InputRequiredResult:
        """Ask whether to proceed, with defaults for every field."""
        answer = _answer(ctx)
        if not isinstance(answer, ElicitResult):
            return _form("Proceed with the copies?", _CONFIRMATION)
        if answer.action != "accept" or answer.content is None:
            return f"Not confirmed ({answer.action})."
        return f"Confirmed: proceed={answer.content['proceed']}, copies={answer.content['copies']}."

    @server.tool()
    async def ask_name(ctx: Context) -> str | InputRequiredResult:
        """Ask for a name, which has no default."""
        answer = _answer(ctx)
        if not isinstance(answer, ElicitResult):
            return _form("What is your name?", _PERSON)
        return f"Hello, {answer.content['name']}!" if answer.action == "accept" and answer.content else "No name."

    @server.tool()
    async def summarize(text: str, ctx: Context) -> str | InputRequiredResult:
        """Ask the client's model to summarize the text."""
        answer = _answer(ctx)
        if not isinstance(answer, CreateMessageResult):
            message = SamplingMessage(role="user", content=TextContent(type="text", text=f"Summarize: {text}"))
            params = CreateMessageRequestParams(messages=[message], max_tokens=5000, system_prompt="You summarize.")
            return _ask(CreateMessageRequest(params=params))
        content = answer.content
        cut = " (cut off)" if answer.stop_reason == "maxTokens" else ""
        return f"Summary: {content.text}{cut}" if isinstance(content, TextContent) else "Summary: (no text)"

    @server.tool()
    async def slow(ctx: Context) -> str:
        """Report progress three times, logging each step."""
        for step in range(1, 4):
            await ctx.info(f"step {step} of 3")
            await ctx.report_progress(step, 3, f"step {step}")
        return "slow work done"

    server.run("stdio")


if __name__ == "__main__":
    main()
