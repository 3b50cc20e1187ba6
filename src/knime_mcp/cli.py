"""The ``knime-mcp`` command line: the core's features outside KNIME.

Only :func:`main` turns exceptions into exit codes (0 success, 2 usage, 3 config/connection/auth/chat model, 4 tool
error, 130 interrupted, 1 anything else), and only :func:`run` calls ``sys.exit``. Arguments are parsed before
anything heavy is imported, so ``--help`` and the text table never load pyarrow.

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

from knime_mcp.agent import DEFAULT_ITERATION_LIMIT, DEFAULT_MAX_CONCURRENCY, AgentRun
from knime_mcp.chat_model import DEFAULT_BASE_URL, DEFAULT_REQUEST_TIMEOUT
from knime_mcp.config import AuthRef, ServerSpec, Timeouts, demo_server_spec
from knime_mcp.errors import McpToolError, ToolCallError, UsageError
from knime_mcp.policy import ToolPolicy

__all__ = ["main", "run"]


class _Parser(argparse.ArgumentParser):
    """An argparse parser that raises :class:`UsageError` instead of exiting, so ``main`` owns the exit code."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message, hint=f"Try '{self.prog} --help' for help.")


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


def _add_policy_options(parser: argparse.ArgumentParser, destructive: str) -> None:
    group = parser.add_argument_group("tool policy")
    group.add_argument("--allow", help="only tools whose whole name matches this regex")
    group.add_argument("--deny", help="never tools whose name matches this regex")
    group.add_argument(
        "--destructive",
        choices=["allow", "block", "read-only"],
        default=destructive,
        help=f"tools annotated destructive: allowed, blocked, or only read-only tools (default: {destructive})",
    )


def _tool_policy(args: argparse.Namespace) -> ToolPolicy:
    return ToolPolicy(allow=args.allow, deny=args.deny, destructive=args.destructive.replace("-", "_"))


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
    _add_policy_options(tools, "allow")

    call = commands.add_parser("call", parents=[server], help="call one tool and print its result as JSON")
    call.add_argument("server", nargs="?", help="an http(s) URL; or '--' and a command line, then '--' before TOOL")
    call.add_argument("tool", help="the tool's name on the server")
    call.add_argument("--args", default="{}", help="the arguments as a JSON object")

    table = commands.add_parser(
        "call-table", parents=[server], help="call one tool for every row of a CSV or Parquet file"
    )
    table.add_argument("server", nargs="?", help="an http(s) URL; or '--' and a command line, then '--' before TOOL")
    table.add_argument("tool", help="the tool's name on the server")
    table.add_argument("--input", required=True, metavar="FILE", help="a .csv or .parquet file: one call per row")
    table.add_argument("--output", required=True, metavar="FILE", help="the .parquet file: input and result columns")
    table.add_argument("--mapping", help='JSON template of the arguments, e.g. \'{"text": "{comment}"}\'')
    table.add_argument("--concurrency", type=int, default=4, help="calls in flight at once, over one session")
    table.add_argument("--retries", type=int, default=2, help="retries for read-only or idempotent tools")
    table.add_argument("--on-error", choices=["fail", "column"], default="fail", help="stop, or record and go on")

    agent = commands.add_parser(
        "agent", parents=[server], help="let an LLM answer a prompt with the servers' tools; print the conversation"
    )
    agent.add_argument(
        "servers", nargs="*", metavar="SERVER", help="an http(s) URL or a quoted command line; none: the demo server"
    )
    agent.add_argument("--prompt", required=True, help="the user message")
    agent.add_argument("--base-url", default=DEFAULT_BASE_URL, help="the OpenAI-compatible API root")
    agent.add_argument("--model", required=True, help="the model's name on that server")
    agent.add_argument("--api-key-env", metavar="VAR", help="environment variable holding the API key")
    agent.add_argument("--system", help="the system message (default: a short helpful-assistant one)")
    agent.add_argument("--temperature", type=float, help="sampling temperature (default: the server's)")
    agent.add_argument("--max-tokens", type=int, help="most tokens per reply (default: the server's)")
    agent.add_argument("--request-timeout", type=float, default=DEFAULT_REQUEST_TIMEOUT, metavar="SECONDS")
    agent.add_argument("--iteration-limit", type=int, default=DEFAULT_ITERATION_LIMIT, help="model calls per run")
    agent.add_argument("--on-limit", choices=["fail", "final-answer"], default="fail", help="at the limit")
    agent.add_argument("--concurrency", type=int, default=DEFAULT_MAX_CONCURRENCY, help="tool calls at once")
    agent.add_argument("--format", choices=["text", "json"], default="text")
    _add_policy_options(agent, "block")

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
        policy=_tool_policy(args),
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


def _command_call_table(args: argparse.Namespace, spec: ServerSpec, out: TextIO) -> int:
    """Batches stream from the input file to a Parquet file beside the output, renamed only on success."""
    import os

    import pyarrow.csv
    import pyarrow.parquet

    from knime_mcp.caller import CallerOptions, CallSummary, call_table, select_tool
    from knime_mcp.dispatch import RetryPolicy
    from knime_mcp.pool import ClientPool
    from knime_mcp.sync import run_sync

    if args.retries < 0:
        raise UsageError("--retries must be 0 or more.")
    options = CallerOptions(
        mapping=args.mapping,
        concurrency=args.concurrency,
        retry=RetryPolicy(attempts=args.retries + 1),
        on_error=args.on_error,
    )
    suffix = os.path.splitext(args.input)[1].lower()
    if suffix not in (".csv", ".parquet"):
        raise UsageError(f"--input must be a .csv or .parquet file, not {args.input!r}.")
    try:
        if suffix == ".csv":
            reader, total = pyarrow.csv.open_csv(args.input), None
        else:
            parquet = pyarrow.parquet.ParquetFile(args.input)
            reader, total = parquet.iter_batches(), parquet.metadata.num_rows
    except (OSError, pyarrow.ArrowInvalid) as exc:
        raise UsageError(f"Cannot read {args.input}: {exc}") from exc
    partial_path = f"{args.output}.partial"
    writers: list[pyarrow.parquet.ParquetWriter] = []

    async def write(batch: pyarrow.RecordBatch) -> None:
        if not writers:
            writers.append(pyarrow.parquet.ParquetWriter(partial_path, batch.schema))
        writers[0].write_batch(batch)

    async def call_file() -> CallSummary:
        async with ClientPool(max_concurrency=options.concurrency) as pool:
            tool = select_tool(await (await pool.client(spec)).list_tools(), args.tool)
            return await call_table(tool, reader, write, options=options, pool=pool, total_rows=total)

    try:
        try:
            summary = run_sync(call_file)
        finally:
            for writer in writers:
                writer.close()
    except BaseException:
        if writers:
            os.remove(partial_path)
        raise
    if not writers:
        raise UsageError(f"{args.input} has no rows.")
    os.replace(partial_path, args.output)
    failed = f", {summary.errors:,} failed (see the Error column)" if summary.errors else ""
    out.write(f"{summary.rows:,} rows called{failed}; wrote {args.output}\n")
    return 0


def _command_agent(args: argparse.Namespace, command: list[str], out: TextIO) -> int:
    from knime_mcp.agent import AgentConfig, run_agent
    from knime_mcp.chat_model import ChatModelConfig, build_chat_model, resolve_api_key
    from knime_mcp.provider import list_server_tools
    from knime_mcp.sync import run_sync
    from knime_mcp.tool import MCPTool

    targets = [[text] if text.startswith(("http://", "https://")) else shlex.split(text) for text in args.servers]
    targets += [command] if command else []
    if args.name and len(targets) > 1:
        raise UsageError("--name names a single server; leave it out with several servers.")
    specs = [server_spec(words, args) for words in targets] or [demo_server_spec()]
    model = ChatModelConfig(
        base_url=args.base_url,
        model=args.model,
        api_key_env=args.api_key_env,
        temperature=args.temperature,
        max_tokens=args.max_tokens,
        timeout=args.request_timeout,
    )
    api_key = resolve_api_key(model)
    config = AgentConfig(
        iteration_limit=args.iteration_limit,
        on_limit="final_answer" if args.on_limit == "final-answer" else "fail",
        errors="column",
        max_concurrency=args.concurrency,
        policy=_tool_policy(args),
    )

    async def agent() -> AgentRun:
        tools: list[MCPTool] = []
        for spec in specs:
            tools += (await list_server_tools(spec)).tools
        system = {} if args.system is None else {"system_message": args.system}
        chat = build_chat_model(model, api_key)
        return await run_agent(chat, tools, args.prompt, config=config, secrets=[api_key], **system)

    result = run_sync(agent)
    if args.format == "json":
        rows = result.conversation.rows(error_column=True)
        log = [entry.to_dict() for entry in result.log]
        out.write(json.dumps({"conversation": rows, "tool_calls": log}, indent=2, ensure_ascii=False) + "\n")
    else:
        from knime_mcp.render import render_agent_run

        out.write(render_agent_run(result))
    if result.failure is not None:
        raise result.failure
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
        if args.command == "agent":
            return _command_agent(args, target, out)
        spec = server_spec(target, args)
        if args.command == "tools":
            return _command_tools(args, spec, out)
        if args.command == "call-table":
            return _command_call_table(args, spec, out)
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
