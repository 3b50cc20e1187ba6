"""Test server: thousands of tools, for the agent's tool search, on the SDK's low-level `Server`.

- `--count N` (default 3000) generated tools, `<service>_<verb>_<thing>` (e.g. `crm_archive_invoices`), each with a
  one-sentence description and one or two parameters, annotated read-only; a call returns the tool's name and its
  arguments;
- `convert_temperature` converts a temperature between Celsius and Fahrenheit (a call answers e.g. `86.0 °F`);
- `purge_archive` is annotated destructive (the default policy blocks it, so no search may find it);
- `reshape` removes `convert_temperature`, adds `translate_morse` (which spells a text in Morse code) and tells the
  client its tools changed.

Runs over stdio. Listing is fast: the tools are built once, as the protocol's values.
"""

from __future__ import annotations

import argparse
import itertools

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.stdio import stdio_server
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)

_READS = ToolAnnotations(read_only_hint=True)
_DESTROYS = ToolAnnotations(read_only_hint=False, destructive_hint=True)
_WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True)

_SERVICES = [
    "crm", "billing", "warehouse", "hr", "ledger", "fleet", "helpdesk", "wiki", "survey", "payroll", "shop",
    "clinic", "school", "library", "garage", "hotel", "airline", "farm", "studio", "newsroom",
]  # fmt: skip
_VERBS = ["list", "get", "create", "update", "archive", "export", "count", "tag", "assign", "review"]
_THINGS = [
    "invoices", "contacts", "orders", "shipments", "employees", "tickets", "pages", "answers", "payslips",
    "products", "patients", "courses", "books", "repairs", "bookings", "flights", "harvests", "recordings",
    "articles", "vendors",
]  # fmt: skip

_CONVERT = Tool(
    name="convert_temperature",
    description="Convert a temperature between degrees Celsius and degrees Fahrenheit.",
    input_schema={
        "type": "object",
        "properties": {
            "value": {"type": "number", "description": "The temperature to convert."},
            "unit": {"type": "string", "enum": ["C", "F"], "description": "The unit the value is in."},
        },
        "required": ["value", "unit"],
    },
    annotations=_READS,
)
_MORSE = Tool(
    name="translate_morse",
    description="Spell a text in Morse code, as dots and dashes.",
    input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    annotations=_READS,
)
_PURGE = Tool(
    name="purge_archive",
    description="Purge the archive: delete every archived record for good.",
    input_schema={"type": "object", "properties": {}},
    annotations=_DESTROYS,
)
_RESHAPE = Tool(
    name="reshape",
    description="Replace the temperature tool by a Morse code tool, and tell the client.",
    input_schema={"type": "object", "properties": {}},
    annotations=_WRITES,
)


def _generated(count: int) -> list[Tool]:
    tools = []
    for service, verb, thing in itertools.islice(itertools.product(_SERVICES, _VERBS, _THINGS), count):
        tools.append(
            Tool(
                name=f"{service}_{verb}_{thing}",
                description=f"{verb.capitalize()} the {thing} kept in the {service} system.",
                input_schema={
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": f"Which {thing} to {verb}."},
                        "limit": {"type": "integer", "description": "The most records to return."},
                    },
                },
                annotations=_READS,
            )
        )
    return tools


def _morse(text: str) -> str:
    codes = {"s": "...", "o": "---", "e": ".", "t": "-", "a": ".-", "n": "-."}
    return " ".join(codes.get(char, "?") for char in text.lower() if not char.isspace())


async def _serve(count: int) -> None:
    tools = [*_generated(count), _CONVERT, _PURGE, _RESHAPE]

    async def list_tools(ctx: ServerRequestContext, params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=tools)

    async def call_tool(ctx: ServerRequestContext, params: CallToolRequestParams) -> CallToolResult:
        arguments = params.arguments or {}
        if params.name == "convert_temperature":
            value = float(arguments["value"])
            text = f"{value * 9 / 5 + 32:.1f} °F" if arguments["unit"] == "C" else f"{(value - 32) * 5 / 9:.1f} °C"
        elif params.name == "translate_morse":
            text = _morse(str(arguments["text"]))
        elif params.name == "reshape":
            tools[:] = [tool for tool in tools if tool is not _CONVERT] + [_MORSE]
            await ctx.session.send_tool_list_changed()
            text = "reshaped"
        else:
            text = f"{params.name} ran with {arguments}"
        return CallToolResult(content=[TextContent(type="text", text=text)])

    server = Server("knime-mcp-many-tools-test", on_list_tools=list_tools, on_call_tool=call_tool)
    options = server.create_initialization_options(NotificationOptions(tools_changed=True))
    async with stdio_server() as (read, write):
        await server.run(read, write, options)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=3000)
    anyio.run(_serve, parser.parse_args().count)


if __name__ == "__main__":
    main()
