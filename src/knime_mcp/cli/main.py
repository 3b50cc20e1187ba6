"""The ``knime-mcp`` command line: the core's features outside KNIME.

Only :func:`main` turns exceptions into exit codes (0 success, 2 usage, 3 config/connection/auth/chat model, 4 tool
error, including an unknown tool or arguments that do not fit its schema, 130 interrupted, 1 anything else), and only
:func:`run` calls ``sys.exit``. Arguments are parsed and checked before anything heavy is imported and before any
connection, so ``--help`` loads neither the SDK nor pyarrow, and a usage error never waits for a server.

    knime-mcp tools                                   # the bundled demo server's tools
    knime-mcp tools http://127.0.0.1:8000/mcp --format json
    knime-mcp call -- npx -y @modelcontextprotocol/server-everything stdio -- echo --args '{"message": "hi"}'
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, redirect_stdout
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from knime_mcp.cli.agent import add_agent_command, run_agent_command
from knime_mcp.cli.call import parse_arguments, run_call
from knime_mcp.cli.call_table import add_call_table_options, run_call_table
from knime_mcp.cli.catalog import COMMANDS as CATALOG_COMMANDS
from knime_mcp.cli.catalog import add_catalog_commands, run_catalog_command
from knime_mcp.cli.chat import add_chat_command, run_chat_command
from knime_mcp.cli.http_tools import API_AUTH, HTTP_COMMAND, add_http_command, http_listing
from knime_mcp.cli.policy_options import add_permit_option, add_policy_options, check_patterns, tool_policy
from knime_mcp.cli.program_tools import PROGRAM_COMMAND, add_program_command
from knime_mcp.cli.registry_commands import COMMANDS as REGISTRY_COMMANDS
from knime_mcp.cli.registry_commands import add_registry_commands, run_registry_command
from knime_mcp.cli.render import json_tools, one_line, terminal_safe
from knime_mcp.cli.servers import (
    HOST_PORT,
    SignInPrompt,
    add_task_option,
    check_server_word,
    check_tool_word,
    common_options,
    options_after_command,
    server_options,
    server_spec,
    split_command,
)
from knime_mcp.cli.sign_in_commands import command_login, command_logout
from knime_mcp.cli.tool_sources import ToolSource, add_tool_source_options, check_tool_sources
from knime_mcp.cli.tools_listing import add_strict_option, list_tools
from knime_mcp.cli.wording import cli_words, print_notes
from knime_mcp.errors import ConfigError, McpToolError, UsageError

if TYPE_CHECKING:
    from knime_mcp.calls.listing import ToolListing

__all__ = ["main", "run"]


class _Parser(argparse.ArgumentParser):
    """An argparse parser that raises :class:`UsageError` instead of exiting, so ``main`` owns the exit code."""

    commands: dict[str, argparse.ArgumentParser]
    """The parser of each command, by name (on the top-level parser)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message, hint=f"Try '{self.prog} --help' for help.")


class _Version(argparse.Action):
    """``--version``: reads the installed distribution's version only when asked, and prints ``knime-mcp X.Y.Z``."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> NoReturn:
        from importlib.metadata import version

        print(f"knime-mcp {version('knime-mcp')}")
        parser.exit()


def _sign_in_prompt(err: TextIO, *, person: bool | None = None) -> SignInPrompt:
    """How the CLI tells a person where to sign in to an OAuth server: on ``err``, when someone is at the terminal
    (``person``: whether someone is, when the command itself says so); None in a batch run."""
    if not (sys.stdin.isatty() if person is None else person):
        return None

    def show(url: str) -> None:
        print(f"Sign in in your browser. If none opened, visit:\n  {one_line(url)}", file=err, flush=True)

    return show


def _table_options() -> argparse.ArgumentParser:
    """What shapes and writes a tools table: ``tools`` and ``http-tools``."""
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument("--include", help="keep only tools whose name contains a match of this regex")
    options.add_argument("--exclude", help="drop tools whose name contains a match of this regex")
    options.add_argument("--prefix", default="", help="prefix for every tool name")
    options.add_argument("--schema-mode", choices=["full", "simple"], default="full")
    options.add_argument("--format", choices=["text", "json", "arrow", "parquet"], default="text")
    options.add_argument("--output", help="file for --format arrow|parquet (json: default stdout)")
    return options


def _parser() -> _Parser:
    parser = _Parser(prog="knime-mcp", description="MCP tools for KNIME agent workflows, from the command line.")
    parser.add_argument("--version", action=_Version)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    parser.commands = commands.choices
    server = server_options()
    callers = add_permit_option(server_options(api_auth=API_AUTH))  # --auth: also what the tools of --openapi send

    table_options = _table_options()
    tools = commands.add_parser("tools", parents=[server, table_options], help="list a server's tools as a table")
    tools.add_argument("server", nargs="?", help="an http(s) URL; or '--' and a command line; none: the demo server")
    add_policy_options(tools, "allow")
    add_strict_option(tools)

    call = commands.add_parser("call", parents=[callers], help="call one tool and print its result as JSON")
    call.add_argument("server", nargs="?", help="an http(s) URL; or '--' and a command line, then '--' before TOOL")
    call.add_argument("tool", help="the tool's name on the server, or in the --tools file or --openapi document")
    call.add_argument(
        "--args",
        default="{}",
        metavar="JSON|@FILE|-",
        help="the arguments as a JSON object, '@FILE' to read it from a file, '-' from stdin (default: {})",
    )

    add_tool_source_options(call, base_url="--base-url", pick_by_tag=True)
    add_task_option(call)

    table = commands.add_parser(
        "call-table", parents=[callers], help="call one tool for every row of a CSV or Parquet file"
    )
    table.add_argument("server", nargs="?", help="an http(s) URL; or '--' and a command line, then '--' before TOOL")
    table.add_argument("tool", help="the tool's name on the server, or in the --tools file or --openapi document")
    table.add_argument("--input", required=True, metavar="FILE", help="a .csv or .parquet file: one call per row")
    table.add_argument("--output", required=True, metavar="FILE", help="the .parquet file: input and result columns")
    table.add_argument("--mapping", help='JSON template of the arguments, e.g. \'{"text": "{comment}"}\'')
    table.add_argument(
        "--concurrency",
        type=int,
        metavar="N",
        help="calls in flight at once, over one session, for any tool (default: 4 for a tool annotated read-only, "
        "or idempotent and not destructive; 1 for others, whose overlapping calls can lose each other's writes)",
    )
    add_call_table_options(table)

    add_tool_source_options(table, base_url="--base-url", pick_by_tag=True)
    add_task_option(table)

    add_agent_command(commands, callers)
    add_chat_command(commands, callers)

    login = commands.add_parser(
        "login", parents=[server], help="sign in to an OAuth server in a browser; later commands use the sign-in"
    )
    login.add_argument("server", help="the server's http(s) URL")
    logout = commands.add_parser("logout", parents=[server], help="forget the stored sign-ins for an OAuth server")
    logout.add_argument("server", help="the server's http(s) URL")
    add_catalog_commands(commands, server)
    add_registry_commands(commands)
    http = add_http_command(commands, [common_options(), table_options])
    add_program_command(commands, [common_options(), table_options])
    add_policy_options(http, "allow")

    demo = commands.add_parser(
        "demo-server", parents=[common_options()], help="run the bundled demo MCP server (loopback only)"
    )
    demo.add_argument("--transport", choices=["stdio", "sse", "streamable-http"], default="stdio")
    demo.add_argument("--port", type=int, default=0)
    return parser


def _parse(argv: list[str], err: TextIO) -> tuple[argparse.Namespace, list[str]]:
    """Parse and check the words: the usage errors the words alone show surface here, before any connection; a
    warning for options that went to a stdio server's command line goes to ``err``."""
    options, command = split_command(argv)
    name = next((word for word in options if not word.startswith("-")), None)
    after = {"call": "TOOL", "call-table": "TOOL", **CATALOG_COMMANDS}.get(name or "")
    if after and command and argv.count("--") < 2:
        raise UsageError(
            f"{name} needs a second '--' after the server's command line, before {after}.",
            hint=f"knime-mcp {name} -- COMMAND WORDS -- {after} …",
        )
    parser = _parser()
    args = parser.parse_args(options)
    server = getattr(args, "server", None)
    tool = getattr(args, "tool", None)
    if command and server:
        raise UsageError("Give either a server URL or '--' and a command line, not both.")
    if tool is not None and server is None and not command and ("://" in tool or HOST_PORT.match(tool)):
        raise UsageError(
            f"{args.command} needs the name of the tool to call after the server {tool!r}.",
            hint=f"'knime-mcp tools {tool}' lists the server's tools.",
        )
    if server is not None and not server.startswith(("http://", "https://")):
        check_server_word(server)
        raise UsageError(
            f"SERVER {server!r} is not an http(s) URL.",
            hint=f"Write '--' before a stdio server's command line: knime-mcp {args.command} -- {server} …",
        )
    if tool is not None and server is None and not command:
        check_tool_word(tool, args.command)
    for text in getattr(args, "servers", None) or []:
        check_server_word(text)
    if hasattr(args, "openapi"):
        check_tool_sources(args, server=bool(server or command or getattr(args, "servers", None)))
    if args.command in ("tools", HTTP_COMMAND, PROGRAM_COMMAND):
        _check_table_output(args)
    check_patterns(args)
    if command and (warning := options_after_command(command, parser.commands[args.command])):
        print(f"Warning: {warning}", file=err)
    return args, command or ([server] if server else [])


def _check_table_output(args: argparse.Namespace) -> None:
    if args.format in ("arrow", "parquet") and not args.output:
        raise UsageError(f"--format {args.format} needs --output FILE.")
    if args.format == "text" and args.output:
        raise UsageError("--output is for --format json, arrow or parquet; the text table goes to stdout.")


def _write_listing(listing: ToolListing, args: argparse.Namespace, out: TextIO) -> int:
    """A tools table as ``--format`` and ``--output`` say, and the listing's notes on stderr (``tools`` and
    ``http-tools``)."""
    if args.format == "text":
        from knime_mcp.cli.render import render_tools

        out.write(render_tools(listing.tools))
    elif args.format == "json":
        _write_text(json.dumps(json_tools(listing.tools), indent=2), args.output, out)
    else:
        from knime_mcp.tools.arrow import write_tools

        write_tools(listing.tools, args.output, args.format)
    print_notes(listing.notes, sys.stderr)
    return 0


def _write_text(text: str, path: str | None, out: TextIO) -> None:
    if path:
        with open(path, "w", encoding="utf-8") as file:
            file.write(text + "\n")
    else:
        out.write(text + "\n")


def _command_demo_server(args: argparse.Namespace) -> int:
    import errno

    from knime_mcp.demo_server import main as demo_main

    argv = ["--transport", args.transport, "--port", str(args.port)]
    try:
        if args.transport == "stdio":
            print("knime-mcp demo server: speaking MCP over stdin and stdout until stdin closes", file=sys.stderr)
            return demo_main(argv)
        with redirect_stdout(sys.stderr):  # its "listening on URL" line: stdout stays free for whatever runs next
            return demo_main(argv)
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            raise
        raise ConfigError(
            f"Port {args.port} on 127.0.0.1 is already in use.",
            hint="Choose another --port, or --port 0 for a free one.",
        ) from exc


class _OneLine(logging.Formatter):
    """One line per log record, whatever line feeds a server's log message holds, in the command line's words; the
    traceback only with ``--verbose``."""

    def __init__(self, verbose: bool) -> None:
        super().__init__("%(levelname)s %(name)s: %(message)s")
        self._verbose = verbose

    def formatMessage(self, record: logging.LogRecord) -> str:
        return one_line(cli_words(super().formatMessage(record)))

    def formatException(self, ei: Any) -> str:  # noqa: N802 (logging's name)
        """The traceback, every line indented: an exception's text may hold a server's line feeds, and no line of
        it may stand at the start of a line as the command's own would."""
        return "\n".join(f"  {line}" for line in terminal_safe(super().formatException(ei)).splitlines())

    def format(self, record: logging.LogRecord) -> str:
        if self._verbose:
            return super().format(record)
        cause = f"{type(record.exc_info[1]).__name__}; " if record.exc_info and record.exc_info[1] else ""
        said = cli_words(record.getMessage())
        return one_line(f"Warning: {said} ({record.name}: {cause}--verbose shows the details)")


@contextmanager
def _logging_to(err: TextIO, verbose: bool) -> Iterator[None]:
    """Route the SDK's log records (warnings and up) to ``err``, for the length of one command."""
    handler = logging.StreamHandler(err)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(_OneLine(verbose))
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)


def _run_command(args: argparse.Namespace, target: list[str], out: TextIO, err: TextIO) -> int:
    if args.command == "demo-server":
        return _command_demo_server(args)
    if args.command in (HTTP_COMMAND, PROGRAM_COMMAND):  # program-tools sets its own listing
        return _write_listing(getattr(args, "listing", http_listing)(args, tool_policy(args)), args, out)
    show = _sign_in_prompt(err)
    match args.command:
        case "agent":
            return run_agent_command(args, target, out, err, show)
        case command if command in REGISTRY_COMMANDS:
            return run_registry_command(args, out, err, show)
        case "chat":
            return run_chat_command(args, target, out, err, show)
        case "call":
            return run_call(args, ToolSource(args, target, err), out, err, show)
        case "call-table":
            return run_call_table(args, ToolSource(args, target, err), out, err, show)
        case "tools":
            return _write_listing(list_tools(args, target, show), args, out)
    spec = server_spec(target, args)
    match args.command:
        case "login":
            return command_login(spec, out, _sign_in_prompt(err, person=True))
        case "logout":
            return command_logout(spec, out)
        case command if command in CATALOG_COMMANDS:
            return run_catalog_command(args, spec, out, show, lambda text: parse_arguments(text, sys.stdin))
    raise AssertionError(f"no command {args.command!r}")


def _take_ctrl_c_back() -> None:
    """For ``chat`` on a terminal, whose Ctrl-C stops an answer: a chat started with SIGINT ignored or blocked, as
    every child of a script's background job is, would otherwise lose the person's Ctrl-C, and nothing else stops an
    answer (its call runs on to the call timeout)."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if hasattr(signal, "pthread_sigmask"):  # not on Windows, which has neither
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run one command and return its exit code; errors go to ``err`` as ``Error: …``."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        try:
            args, target = _parse(list(sys.argv[1:] if argv is None else argv), err)
        except SystemExit as exc:  # --help and --version
            return exc.code if isinstance(exc.code, int) else 0
        if args.command == "chat" and sys.stdin.isatty():
            _take_ctrl_c_back()
        with _logging_to(err, args.verbose):
            return _run_command(args, target, out, err)
    except McpToolError as exc:
        print(f"Error: {one_line(cli_words(str(exc)))}", file=err)
        return exc.exit_code
    except KeyboardInterrupt:
        print("Error: interrupted.", file=err)
        return 130
    except Exception as exc:  # the CLI's one boundary: anything unexpected still gets a message and exit code 1
        print(f"Error: {type(exc).__name__}: {one_line(str(exc))}", file=err)
        return 1


def run() -> NoReturn:
    """The console-script entry point."""
    sys.exit(main())
