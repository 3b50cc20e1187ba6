"""Test server: forms (elicitation) whose schemas are not what the protocol allows, on the SDK's `MCPServer`.

- `odd_form` asks for a form whose shown parts are not text: a title, a description, labels and defaults that are
  objects, lists or numbers (an object with `toString` breaks a page that shows it as text); the form's fields and
  choices themselves are right, so a client can show it without those parts. It says what came back;
- `nested_form` asks for a form with a nested object field, which no client can show as a flat form; it says what
  came back.

Runs over stdio. A tool asks by returning an input-required result (the 2026-07-28 protocol), which the SDK checks
only as far as the protocol's own types do (a form's fields are any JSON there); on the older protocol the SDK's
client refuses such a request itself, so this server speaks only the new one.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult

_NOT_TEXT = {"toString": 1, "valueOf": 1}
ODD_FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": _NOT_TEXT, "description": ["Who", "you", "are"], "default": _NOT_TEXT},
        "colour": {
            "type": "string", "title": "Colour", "enum": ["red", "green"], "enumNames": [_NOT_TEXT, "Green"],
            "default": _NOT_TEXT,
        },
        "size": {"type": "string", "oneOf": [{"const": "s", "title": _NOT_TEXT}, {"const": "l", "title": "Large"}]},
        "count": {"type": "integer", "title": 7, "default": "two", "minimum": {"n": 1}},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "default": [_NOT_TEXT]},
    },
    "required": ["name", "missing"],
}  # fmt: skip
NESTED_FORM = {
    "type": "object",
    "properties": {"address": {"type": "object", "properties": {"street": {"type": "string"}}}},
}


def _ask(ctx: Context, message: str, schema: dict[str, Any]) -> str | InputRequiredResult:
    """The form's answer as text, asking first."""
    if (answer := (ctx.input_responses or {}).get("answer")) is None:
        request = ElicitRequest(params=ElicitRequestFormParams(message=message, requested_schema=schema))
        return InputRequiredResult(input_requests={"answer": request})
    if not isinstance(answer, ElicitResult):
        return "No answer."
    return f"{answer.action}: {answer.content}"


def main() -> None:
    server = MCPServer("knime-mcp-hostile-form-test")

    @server.tool()
    async def odd_form(ctx: Context) -> str | InputRequiredResult:
        """Ask for a form whose titles, labels and defaults are not text."""
        return _ask(ctx, "Tell me about you.", ODD_FORM)

    @server.tool()
    async def nested_form(ctx: Context) -> str | InputRequiredResult:
        """Ask for a form with a nested object field."""
        return _ask(ctx, "Where do you live?", NESTED_FORM)

    server.run("stdio")


if __name__ == "__main__":
    main()
