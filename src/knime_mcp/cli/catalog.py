"""The command line's resource and prompt commands: ``resources``, ``read``, ``prompts`` and ``prompt``.

Layer: beside :mod:`knime_mcp.cli.main`, which parses the words, builds the server and turns errors into exit codes;
this module adds the four commands' arguments to its parser and runs them. Like the rest of the CLI it imports the SDK
only when a command runs.

    knime-mcp resources http://127.0.0.1:8000/mcp
    knime-mcp read http://127.0.0.1:8000/mcp 'demo://items/{id}' --args '{"id": 7}' --output item.bin
    knime-mcp prompt -- npx -y @modelcontextprotocol/server-everything -- args-prompt --args '{"city": "Bern"}'
"""

from __future__ import annotations

import argparse
import base64
import json
import shutil
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TextIO, TypeVar

from knime_mcp.cli.render import terminal_safe
from knime_mcp.config import ServerSpec
from knime_mcp.errors import McpToolError, PromptError, ToolCallError, UsageError

if TYPE_CHECKING:
    from knime_mcp.mcp.prompts import MCPPrompt, RenderedPrompt
    from knime_mcp.mcp.resources import ResourceContent

__all__ = ["COMMANDS", "add_catalog_commands", "find_named", "print_json", "run_catalog_command"]

COMMANDS = {"resources": None, "read": "URI", "prompts": None, "prompt": "NAME"}
"""The commands, and what follows a stdio server's command line after a second ``--``, if anything."""

_SERVER_HELP = "an http(s) URL; or '--' and a command line; none: the demo server"
_ARGS_HELP = "a JSON object, '@FILE' to read it from a file, '-' from stdin; numbers and booleans become text"


def add_catalog_commands(commands: Any, server: argparse.ArgumentParser) -> None:
    """Add the four commands to the CLI's subparsers; ``server`` holds the server options all commands share."""
    resources = commands.add_parser("resources", parents=[server], help="list a server's resources and templates")
    resources.add_argument("server", nargs="?", help=_SERVER_HELP)
    resources.add_argument("--format", choices=["text", "json"], default="text")

    read = commands.add_parser("read", parents=[server], help="read one resource; text is printed")
    read.add_argument("server", nargs="?", help=f"{_SERVER_HELP}, then '--' before URI")
    read.add_argument("uri", help="the resource's URI, or a resource template to fill with --args")
    read.add_argument("--args", metavar="JSON|@FILE|-", help=f"fill URI as a template: {_ARGS_HELP}")
    read.add_argument("--format", choices=["text", "json"], default="text", help="json: binary contents as base64")
    read.add_argument("--output", metavar="FILE", help="write the contents (text as UTF-8, binary as is) to FILE")
    read.add_argument("--max-bytes", type=int, metavar="N", help="fail on binary contents larger than N bytes")

    prompts = commands.add_parser("prompts", parents=[server], help="list a server's prompts and their arguments")
    prompts.add_argument("server", nargs="?", help=_SERVER_HELP)
    prompts.add_argument("--format", choices=["text", "json"], default="text")

    prompt = commands.add_parser("prompt", parents=[server], help="get one prompt's messages")
    prompt.add_argument("server", nargs="?", help=f"{_SERVER_HELP}, then '--' before NAME")
    prompt.add_argument("prompt", metavar="NAME", help="the prompt's name on the server")
    prompt.add_argument("--args", default="{}", metavar="JSON|@FILE|-", help=f"the arguments: {_ARGS_HELP}")
    prompt.add_argument("--format", choices=["text", "json"], default="text")


def run_catalog_command(
    args: argparse.Namespace,
    spec: ServerSpec,
    out: TextIO,
    show: Callable[[str], None] | None,
    arguments: Callable[[str], dict[str, Any]],
) -> int:
    """Run one of the four commands; ``arguments`` reads and parses an ``--args`` value as ``call`` does."""
    from knime_mcp.mcp.client import McpClient
    from knime_mcp.mcp.sync import run_sync

    match args.command:
        case "resources":

            async def listed() -> tuple[list[Any], list[Any]]:
                async with McpClient(spec, show_sign_in=show) as client:
                    return await client.list_resources(), await client.list_resource_templates()

            resources, templates = run_sync(listed)
            if args.format == "json":
                rows = {"resources": [r.to_dict() for r in resources], "templates": [t.to_dict() for t in templates]}
                print_json(rows, out)
            else:
                table = [(r.uri, r.mime_type or "-", r.description or r.title or r.name) for r in resources]
                table += [(t.uri_template, t.mime_type or "-", t.description or t.title or t.name) for t in templates]
                out.write(_table(("URI", "MIME TYPE", "DESCRIPTION"), table))
                out.write(f"{len(resources)} resources, {len(templates)} templates\n")
        case "read":
            _check_read(args)
            from mcp.shared.uri_template import UriTemplate

            from knime_mcp.mcp.resources import fill_template

            uri = args.uri
            if args.args is not None or UriTemplate.is_template(uri):
                uri = fill_template(uri, _as_text(arguments(args.args or "{}")))

            async def read() -> list[ResourceContent]:
                async with McpClient(spec, show_sign_in=show) as client:
                    return await client.read_resource(uri, max_bytes=args.max_bytes)

            _print_contents(run_sync(read), args, out)
        case "prompts":

            async def listed_prompts() -> list[MCPPrompt]:
                async with McpClient(spec, show_sign_in=show) as client:
                    return await client.list_prompts()

            found = run_sync(listed_prompts)
            if args.format == "json":
                print_json([prompt.to_dict() for prompt in found], out)
            else:
                table = [(p.name, _signature(p), p.description or p.title or "") for p in found]
                out.write(_table(("NAME", "ARGUMENTS", "DESCRIPTION"), table))
                out.write(f"{len(found)} prompts\n")
        case _:
            values = _as_text(arguments(args.args))

            async def got() -> RenderedPrompt:
                async with McpClient(spec, show_sign_in=show) as client:
                    prompts = await client.list_prompts()
                    prompt = find_named(prompts, args.prompt, spec.display_name, kind="prompt", error=PromptError)
                    return await client.get_prompt(prompt, values)

            _print_prompt(run_sync(got), args.format, out)
    return 0


def _check_read(args: argparse.Namespace) -> None:
    if args.output and args.format == "json":
        raise UsageError("--output writes the contents themselves; leave out --format json.")
    if args.max_bytes is not None and args.max_bytes < 0:
        raise UsageError("--max-bytes must be 0 or more.")


def _as_text(values: dict[str, Any]) -> dict[str, str]:
    """Prompt and template arguments are text: JSON numbers and booleans are written as JSON writes them."""
    text: dict[str, str] = {}
    for name, value in values.items():
        if isinstance(value, dict | list) or value is None:
            raise UsageError(f"--args value {name!r} must be text, a number or a boolean.")
        text[name] = value if isinstance(value, str) else json.dumps(value)
    return text


class _Named(Protocol):
    name: str


_NamedT = TypeVar("_NamedT", bound=_Named)


def find_named(
    items: Sequence[_NamedT],
    name: str,
    server: str | None,
    *,
    kind: str,
    owner: str = "The server",
    error: type[McpToolError] = ToolCallError,
) -> _NamedT:
    """A tool (``call``, ``call-table``) or prompt (``prompt``) by name; an unknown one is an error listing the
    others of its ``owner`` (a server, or a tools file), exit code 4, before any call."""
    for item in items:
        if item.name == name:
            return item
    listed = ", ".join(item.name for item in items) or "none"
    raise error(f"{owner} has no {kind} {name!r}.", server=server, hint=f"Its {kind}s: {listed}.")


def _signature(prompt: MCPPrompt) -> str:
    """The arguments, a required one marked with ``*``."""
    return ", ".join(f"{a.name}{'*' if a.required else ''}" for a in prompt.arguments) or "-"


def _print_contents(contents: list[ResourceContent], args: argparse.Namespace, out: TextIO) -> None:
    if args.output:
        if len(contents) != 1:
            raise UsageError(f"The resource has {len(contents)} content items; --output writes exactly one.")
        content = contents[0]
        data = content.data if content.data is not None else (content.text or "").encode("utf-8")
        with open(args.output, "wb") as file:
            file.write(data)
        out.write(f"Wrote {len(data):,} bytes ({content.mime_type or 'no MIME type'}) to {args.output}\n")
    elif args.format == "json":
        print_json([content.to_dict() for content in contents], out)
    else:
        for content in contents:
            if content.data is None:
                out.write(terminal_safe(content.text or "") + "\n")
            else:
                out.write(
                    f"[{terminal_safe(content.uri)}: {len(content.data):,} bytes of {content.mime_type or 'binary'}; "
                    "--output FILE writes them, --format json shows them as base64]\n"
                )


def _print_prompt(prompt: RenderedPrompt, fmt: str, out: TextIO) -> None:
    if fmt == "json":
        print_json(prompt.to_dict(), out)
        return
    from knime_mcp.tools.results import ImagePart, ResourcePart, TextPart

    if prompt.description:
        out.write(terminal_safe(prompt.description) + "\n\n")
    for message in prompt.messages:
        part = message.content
        match part:
            case TextPart():
                shown = part.text
            case ResourcePart(text=str(text)):
                shown = f"[resource {part.uri}]\n{text}"
            case ResourcePart(blob=str(blob)):
                shown = f"[resource {part.uri}: {len(base64.b64decode(blob)):,} bytes of {part.mime_type or 'binary'}]"
            case ImagePart():
                shown = f"[image: {part.mime_type}, {len(part.bytes):,} bytes]"
            case _:
                details = {key: value for key, value in vars(part).items() if key != "data"}
                shown = f"[{part.type}: {json.dumps(details)}]"
        out.write(terminal_safe(f"{message.role}: {shown}") + "\n")


def print_json(value: Any, out: TextIO) -> None:
    """``value`` as indented JSON on ``out``, server text made safe for the terminal (every command's ``json``)."""
    out.write(terminal_safe(json.dumps(value, indent=2, ensure_ascii=False)) + "\n")


def _table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> str:
    """Columns as wide as their widest cell, the last clipped to the terminal width; server text made safe."""
    width = shutil.get_terminal_size((120, 24)).columns
    lines = [header, *(tuple(" ".join(cell.split()) for cell in row) for row in rows)]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header) - 1)]
    room = max(width - sum(w + 2 for w in widths), 20)
    text = ""
    for line in lines:
        *first, last = line
        last = last if len(last) <= room else last[: room - 1] + "…"
        text += "".join(f"{cell:<{w}}  " for cell, w in zip(first, widths, strict=True)) + last + "\n"
    return terminal_safe(text)
