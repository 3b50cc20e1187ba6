"""The ``knime-mcp`` command line: the core's features outside KNIME.

Only :func:`main` turns exceptions into exit codes (0 success, 2 usage, 3 config/connection/auth, 4 tool error,
1 anything else), and only :func:`run` calls ``sys.exit``. Arguments are parsed before anything heavy is imported,
so ``--help`` and the text table never load pyarrow.

    knime-mcp tools                                   # the bundled demo server's tools
    knime-mcp tools http://127.0.0.1:8000/mcp --format json
    knime-mcp call -- npx -y @modelcontextprotocol/server-everything stdio -- echo --args '{"message": "hi"}'
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Sequence
from typing import Any, NoReturn, TextIO

from knime_mcp.config import AuthRef, ServerSpec, Timeouts
from knime_mcp.errors import McpToolError, ToolCallError, UsageError

__all__ = ["main", "run"]

DEMO_SERVER_NAME = "demo"


class _Parser(argparse.ArgumentParser):
    """An argparse parser that raises :class:`UsageError` instead of exiting, so ``main`` owns the exit code."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message, hint=f"Try '{self.prog} --help' for help.")


def demo_server_spec() -> ServerSpec:
    """The bundled demo server, started over stdio with this interpreter."""
    command = shlex.join([sys.executable, "-m", "knime_mcp.demo_server", "--transport", "stdio"])
    return ServerSpec(target=command, transport="stdio", name=DEMO_SERVER_NAME)


def _server_options() -> argparse.ArgumentParser:
    options = argparse.ArgumentParser(add_help=False)
    group = options.add_argument_group("server")
    group.add_argument("--transport", choices=["auto", "streamable-http", "sse", "stdio"], default="auto")
    group.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="extra HTTP header; write secrets as ${VAR} environment references",
    )
    group.add_argument("--env", action="append", default=[], metavar="NAME=VALUE", help="environment of a stdio server")
    group.add_argument("--connect-timeout", type=float, default=Timeouts().connect, metavar="SECONDS")
    group.add_argument("--call-timeout", type=float, default=Timeouts().call, metavar="SECONDS")
    group.add_argument("--name", help="display name of the server")
    return options


def _pairs(values: Sequence[str], separator: str, what: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for value in values:
        name, found, rest = value.partition(separator)
        if not found or not name.strip():
            raise UsageError(f"{what} {value!r} is not of the form NAME{separator.strip() or separator}VALUE.")
        pairs[name.strip()] = rest.strip() if separator == ":" else rest
    return pairs


def server_spec(target: Sequence[str], args: argparse.Namespace) -> ServerSpec:
    """The ServerSpec the command line describes; no target means the bundled demo server."""
    if not target:
        return demo_server_spec()
    text = target[0] if len(target) == 1 and target[0].startswith(("http://", "https://")) else shlex.join(target)
    return ServerSpec(
        target=text,
        transport=args.transport,
        name=args.name,
        headers=_pairs(args.header, ":", "Header"),
        env=_pairs(args.env, "=", "Environment entry"),
        auth=AuthRef(),
        timeouts=Timeouts(connect=args.connect_timeout, call=args.call_timeout),
    )


def _split_command(argv: list[str]) -> tuple[list[str], list[str]]:
    """Split ``[options] -- command words [-- more options]`` into options and the stdio command."""
    if "--" not in argv:
        return argv, []
    start = argv.index("--")
    rest = argv[start + 1 :]
    if "--" in rest:
        end = rest.index("--")
        return argv[:start] + rest[end + 1 :], rest[:end]
    return argv[:start], rest


def _parser() -> _Parser:
    parser = _Parser(prog="knime-mcp", description="MCP tools for KNIME agent workflows, from the command line.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    server = _server_options()

    tools = commands.add_parser("tools", parents=[server], help="list a server's tools as a table")
    tools.add_argument("server", nargs="?", help="an http(s) URL; or '--' and a command line; none: the demo server")
    tools.add_argument("--include", help="keep only tools whose name matches this regex")
    tools.add_argument("--exclude", help="drop tools whose name matches this regex")
    tools.add_argument("--prefix", default="", help="prefix for every tool name")
    tools.add_argument("--schema-mode", choices=["full", "simple"], default="full")
    tools.add_argument("--format", choices=["text", "json", "arrow", "parquet"], default="text")
    tools.add_argument("--output", help="file for --format arrow|parquet (json: default stdout)")

    call = commands.add_parser("call", parents=[server], help="call one tool and print its result as JSON")
    call.add_argument("server", nargs="?", help="an http(s) URL; or '--' and a command line, then '--' before TOOL")
    call.add_argument("tool", help="the tool's name on the server")
    call.add_argument("--args", default="{}", help="the arguments as a JSON object")

    demo = commands.add_parser("demo-server", help="run the bundled demo MCP server (loopback only)")
    demo.add_argument("--transport", choices=["stdio", "sse", "streamable-http"], default="stdio")
    demo.add_argument("--port", type=int, default=0)
    return parser


def _parse(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    options, command = _split_command(argv)
    args = _parser().parse_args(options)
    server = getattr(args, "server", None)
    if command and server:
        raise UsageError("Give either a server URL or '--' and a command line, not both.")
    return args, command or ([server] if server else [])


def _parse_arguments(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--args is not valid JSON: {exc.msg} at position {exc.pos}.") from exc
    if not isinstance(value, dict):
        raise UsageError("--args must be a JSON object, e.g. '{\"text\": \"hi\"}'.")
    return value


def _command_tools(args: argparse.Namespace, spec: ServerSpec, out: TextIO) -> int:
    from knime_mcp.provider import list_server_tools
    from knime_mcp.sync import run_sync

    listing = run_sync(
        list_server_tools,
        spec,
        include=args.include,
        exclude=args.exclude,
        prefix=args.prefix,
        schema_mode=args.schema_mode,
    )
    if args.format == "text":
        from knime_mcp.render import render_tools

        out.write(render_tools(listing.tools))
    elif args.format == "json":
        text = json.dumps([tool.to_dict() for tool in listing.tools], indent=2)
        _write_text(text, args.output, out)
    else:
        if not args.output:
            raise UsageError(f"--format {args.format} needs --output FILE.")
        from knime_mcp.arrow import write_tools

        write_tools(listing.tools, args.output, args.format)
    for note in listing.notes:
        print(f"Note: {note}", file=sys.stderr)
    return 0


def _write_text(text: str, path: str | None, out: TextIO) -> None:
    if path:
        with open(path, "w", encoding="utf-8") as file:
            file.write(text + "\n")
    else:
        out.write(text + "\n")


def _command_call(args: argparse.Namespace, spec: ServerSpec, out: TextIO) -> int:
    from knime_mcp.client import McpClient
    from knime_mcp.results import ToolResult
    from knime_mcp.sync import run_sync

    arguments = _parse_arguments(args.args)

    async def call() -> ToolResult:
        async with McpClient(spec) as client:
            return await client.call_tool(args.tool, arguments)

    result = run_sync(call)
    out.write(json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n")
    if result.is_error:
        raise ToolCallError(f"Tool {args.tool!r} reported an error: {result.text}", server=spec.display_name)
    return 0


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run one command and return its exit code; errors go to ``err`` as ``Error: …``."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        args, target = _parse(list(sys.argv[1:] if argv is None else argv))
        if args.command == "demo-server":
            from knime_mcp.demo_server import main as demo_main

            return demo_main(["--transport", args.transport, "--port", str(args.port)])
        spec = server_spec(target, args)
        if args.command == "tools":
            return _command_tools(args, spec, out)
        return _command_call(args, spec, out)
    except McpToolError as exc:
        print(f"Error: {exc}", file=err)
        return exc.exit_code
    except KeyboardInterrupt:
        print("Error: interrupted.", file=err)
        return 130
    except Exception as exc:  # the CLI's one boundary: anything unexpected still gets a message and exit code 1
        print(f"Error: {type(exc).__name__}: {exc}", file=err)
        return 1


def run() -> NoReturn:
    """The console-script entry point."""
    sys.exit(main())
