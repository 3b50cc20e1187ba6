"""Where ``call``, ``call-table`` and ``agent`` find their tools: an MCP server, a tools file (``--tools FILE``) or an
OpenAPI document or UTCP manual (``--openapi SOURCE``, also spelt ``--utcp SOURCE``); MCP and HTTP tools are then
called alike, through the dispatcher and the run's :class:`~knime_mcp.calls.pool.ClientPool`, as the nodes call them.

A tools file is data, as a tools table is in KNIME: it may have been written anywhere, so the server of a tool is
used as it is only when the tool's seal fits (the file was written on this machine by ``tools`` or ``http-tools``);
any other is checked before anything connects (docs/security.md, "Servers that come from data") unless
``--trust-all-servers``, the nodes' *Trust every server in the tools table*. An OpenAPI document named on the command
line is chosen by a person, as ``http-tools`` takes it.

    knime-mcp call --openapi http://127.0.0.1:8080/openapi.json getPet --args '{"pet_id": 7}'
    knime-mcp http-tools openapi.yaml --format json --output tools.json
    knime-mcp call-table --tools tools.json getPet --input pets.csv --output pets.parquet
"""

from __future__ import annotations

import argparse
import json
import os
from typing import TYPE_CHECKING, Any, TextIO

from knime_mcp.cli.catalog import find_named
from knime_mcp.cli.http_tools import (
    API_AUTH,
    add_api_options,
    api_auth,
    api_listing,
    max_document_bytes,
    max_response_bytes,
)
from knime_mcp.cli.policy_options import add_tag_option, chosen_tags
from knime_mcp.cli.program_tools import program_file_tools
from knime_mcp.cli.servers import OAUTH, SignInPrompt, server_spec
from knime_mcp.cli.tls_options import tls_settings
from knime_mcp.cli.wording import print_notes
from knime_mcp.errors import ConfigError, UsageError

if TYPE_CHECKING:
    import pyarrow as pa

    from knime_mcp.calls.pool import ClientPool
    from knime_mcp.config import ServerSpec
    from knime_mcp.tools.tool import MCPTool

__all__ = ["ToolSource", "add_tool_source_options", "api_sources", "check_tool_sources", "read_tools_file"]

_AGENTS = ("agent", "chat")
"""The commands whose tools come from servers and files together, and whose ``--base-url`` is the chat model's."""
_UNSEALED_API = (
    "An API that an OpenAPI document names counts as data when the document was read from a file or another "
    "server: knime-mcp calls it only at a public address. To call it there, give its base URL with {flag} URL (a "
    "server you set), or pass --trust-all-servers."
)
_WRITE_ONE = "Write one with 'knime-mcp tools' or 'knime-mcp http-tools' and --format json|arrow|parquet --output FILE."


def add_tool_source_options(parser: argparse.ArgumentParser, *, base_url: str, pick_by_tag: bool = False) -> None:
    """``--tools``, ``--openapi`` and the options of the document's API; ``base_url`` names the flag of its base URL
    (``agent`` has a ``--base-url`` of its own, the chat model's); ``pick_by_tag``: ``--tag`` picks the one tool called
    (the agents' ``--tag`` is their tool policy's)."""
    besides = "besides the servers, or instead of them" if parser.prog.endswith(_AGENTS) else "instead of a server"
    group = parser.add_argument_group("tools from a file or an OpenAPI document", besides)
    group.add_argument(
        "--tools",
        action="append",
        default=[],
        metavar="FILE",
        help="a tools file (.json, .arrow or .parquet) as 'tools' and 'http-tools' write it; its servers are checked "
        "as data unless the file was written on this machine",
    )
    group.add_argument(
        "--openapi",
        "--utcp",
        action="append",
        default=[],
        metavar="SOURCE",
        help="an API's description, an OpenAPI 3.0/3.1 document or a UTCP manual: URL or file (either flag takes "
        "either)",
    )
    group.add_argument(
        "--programs",
        action="append",
        default=[],
        metavar="FILE",
        help="a programs file (JSON or YAML) whose command-line programs become tools, as 'program-tools' lists them",
    )
    group.add_argument(
        "--trust-all-servers",
        action="store_true",
        help="connect to the servers of a tools file as they are, although it was not written on this machine",
    )
    add_api_options(parser, base_url=base_url, auth=None)
    if pick_by_tag:
        add_tag_option(parser, "pick TOOL among the tools carrying this tag, by its name there or its server's own")


def check_tool_sources(args: argparse.Namespace, *, server: bool) -> None:
    """The usage errors of the words alone, before anything is read; ``server``: the words name an MCP server."""
    sources = len(args.tools) + len(api_sources(args)) + len(args.programs)
    if args.command not in _AGENTS and sources + server > 1:
        raise UsageError(
            f"{args.command} calls a tool of one source: give either a server, --tools FILE, --openapi SOURCE or "
            "--programs FILE."
        )
    for flag, paths, hint in (("--tools", args.tools, _WRITE_ONE), ("--programs", args.programs, None)):
        if missing := [path for path in paths if not os.path.isfile(path)]:
            raise UsageError(f"The {flag} file {missing[0]!r} does not exist.", hint=hint)
    if args.trust_all_servers and not args.tools:
        raise UsageError("--trust-all-servers is for the servers of a --tools file; a server given here is trusted.")
    if not api_sources(args):
        if args.auth in API_AUTH:
            raise UsageError(
                f"--auth {args.auth} goes with --openapi (an API's tools); an MCP server takes --auth "
                f"{' or '.join(OAUTH)}."
            )
        given = [flag for flag, value in _api_options(args) if value is not None]
        if given:
            raise UsageError(f"{given[0]} goes with --openapi SOURCE or {_base_url_flag(args)} URL.")
    elif args.auth in OAUTH and not server:
        raise UsageError(
            f"--auth {args.auth} signs in to an MCP server; an API's tools send --auth {'|'.join(API_AUTH)}."
        )


def api_sources(args: argparse.Namespace) -> list[str | None]:
    """The API descriptions to read: each ``--openapi SOURCE``; with none, the one found at the base URL alone
    (``None``: looked for at the paths the HTTP Tool Provider tries), as ``http-tools --base-url`` finds it."""
    return list(args.openapi) or ([None] if args.api_base_url is not None else [])


def _base_url_flag(args: argparse.Namespace) -> str:
    """The flag of an OpenAPI document's base URL in this command."""
    return "--openapi-base-url" if args.command in _AGENTS else "--base-url"


def _api_options(args: argparse.Namespace) -> list[tuple[str, Any]]:
    return [
        (_base_url_flag(args), args.api_base_url),
        ("--secret", args.secret),
        ("--user", args.user),
        ("--key-name", args.key_name),
        ("--max-document-mb", args.max_document_mb),
        ("--max-response-mb", args.max_response_mb),
    ]


class ToolSource:
    """The tools of one command: those of the MCP server the words name (the demo server when they name none), or
    those of its tools files and OpenAPI documents."""

    def __init__(self, args: argparse.Namespace, target: list[str], err: TextIO) -> None:
        self._args = args
        self._err = err
        self.from_files = bool(args.tools or api_sources(args) or args.programs)
        self.spec: ServerSpec | None = None if self.from_files else server_spec(target, args)

    def pool(self, show: SignInPrompt, max_concurrency: int | None = None) -> ClientPool:
        """The run's pool: it answers what servers ask as ``--elicitation`` says, and checks the servers of tools
        that come from files unless they are sealed here or ``--trust-all-servers``."""
        from knime_mcp.calls.pool import UNSEALED_HINT, ClientPool
        from knime_mcp.config import ServerRequestPolicy
        from knime_mcp.mcp.server_requests import ServerRequests

        flag = _base_url_flag(self._args)
        return ClientPool(
            check_unsealed=self.from_files and not self._args.trust_all_servers,
            unsealed_hint=_UNSEALED_API.format(flag=flag) if api_sources(self._args) else UNSEALED_HINT,
            show_sign_in=show,
            requests=ServerRequests(ServerRequestPolicy(elicitation=self._args.elicitation)),
            **({} if max_concurrency is None else {"max_concurrency": max_concurrency}),
        )

    async def tool(self, pool: ClientPool) -> MCPTool:
        """The tool ``args.tool`` names; an unknown one is an error listing the others (exit code 4). With
        ``--tag``, the one among the tools carrying any of the tags, by its name or its server's own name."""
        from knime_mcp.tools.tags import pick_tool

        args = self._args
        tools = await (await pool.client(self.spec)).list_tools() if self.spec is not None else await self.file_tools()
        if tags := chosen_tags(args):
            return pick_tool(tools, args.tool, tags)
        if self.spec is not None:
            return find_named(tools, args.tool, self.spec.display_name, kind="tool")
        owner = (
            f"The tools file {args.tools[0]!r}" if args.tools
            else f"The programs file {args.programs[0]!r}" if args.programs
            else f"The OpenAPI document {args.openapi[0]!r}" if args.openapi
            else f"The API at {args.api_base_url!r}"
        )  # fmt: skip
        return find_named(tools, args.tool, None, kind="tool", owner=owner)

    async def file_tools(self) -> list[MCPTool]:
        """The tools of every ``--tools`` and ``--programs`` file, then of every ``--openapi`` document or of the API
        found at the base URL alone (their notes go to stderr)."""
        from knime_mcp.config import Timeouts

        args = self._args
        tools = [tool for path in args.tools for tool in read_tools_file(path)] + program_file_tools(args.programs)
        auth = api_auth(args)
        for source in api_sources(args):
            listing = await api_listing(
                args,
                _base_url_flag(args),
                source,
                auth=auth,
                timeouts=Timeouts(connect=args.connect_timeout, call=args.call_timeout),
                max_document_bytes=max_document_bytes(args),
                tls=tls_settings(args),
                max_response_bytes=max_response_bytes(args),
            )
            print_notes(listing.notes, self._err)
            tools += listing.tools
        return tools


def read_tools_file(path: str) -> list[MCPTool]:
    """The tools of a file ``tools`` or ``http-tools`` wrote: JSON (by its ``.json`` suffix), Parquet (``.parquet``)
    or else an Arrow IPC file; a tool whose seal does not fit keeps its server unsealed. A *Timeout (s)* column (a
    key of the JSON rows) gives its tools their own call timeout, and *Expected time (s)* and *Cost* their hints, as
    they do in a tools table in KNIME; a bad value is an error naming the column and the row (counted from 0)."""
    import pyarrow as pa

    from knime_mcp.tools.tool import MCPTool
    from knime_mcp.tools.tool_cells import TableReader
    from knime_mcp.tools.tool_columns import TOOL_COLUMNS, with_tool_columns

    suffix = os.path.splitext(path)[1].lower()
    columns: dict[str, list[Any]] = {}
    try:
        if suffix == ".json":
            with open(path, encoding="utf-8") as file:
                rows = json.load(file)
            if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
                raise ValueError("it is not a JSON list of tools")
            reader = TableReader(MCPTool.from_fields)
            tools = [reader.tool(row) for row in rows]
            columns = {
                name: [row.get(name) for row in rows] for name in TOOL_COLUMNS if any(name in row for row in rows)
            }
        elif suffix == ".parquet":
            import pyarrow.parquet as pq

            tools, columns = _arrow_tools(pq.read_table(path, use_threads=False))  # apache/arrow#34314: docs/nodes.md
        else:
            with pa.memory_map(path) as source:
                tools, columns = _arrow_tools(pa.ipc.open_file(source).read_all())
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise ConfigError(f"Cannot read the tools file {path!r}: {exc}", hint=_WRITE_ONE) from exc
    return with_tool_columns(tools, columns, [str(row) for row in range(len(tools))]) if columns else tools


def _arrow_tools(table: pa.Table) -> tuple[list[MCPTool], dict[str, list[Any]]]:
    """The tools of an Arrow tools file's table, and the cells of its columns of
    :data:`~knime_mcp.tools.tool_columns.TOOL_COLUMNS` by name."""
    from knime_mcp.tools.arrow import tools_from_arrow
    from knime_mcp.tools.tool_columns import present_columns

    return tools_from_arrow(table), present_columns(table)
