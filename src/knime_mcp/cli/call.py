"""The command line's ``call`` command: one call of one tool, MCP or HTTP, printed as JSON.

The call goes through the :class:`~knime_mcp.calls.dispatch.Dispatcher` the nodes use, so ``call`` refuses what
they refuse before anything is sent (arguments that break the tool's schema, a tool that runs only as an MCP task)
and calls an HTTP tool of a tools file or an OpenAPI document as it calls an MCP server's tool.

    knime-mcp call http://127.0.0.1:8000/mcp add --args '{"a": 1, "b": 2}'
    knime-mcp call --openapi openapi.json getPet --args @pet.json
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any, TextIO

from knime_mcp.cli.catalog import print_json
from knime_mcp.cli.policy_options import granted_permissions
from knime_mcp.cli.render import one_line
from knime_mcp.cli.servers import SignInPrompt
from knime_mcp.cli.tool_sources import ToolSource
from knime_mcp.errors import UsageError
from knime_mcp.tools.json_text import NotAJsonNumber, strict_json

if TYPE_CHECKING:
    from knime_mcp.calls.dispatch import CallOutcome

__all__ = ["parse_arguments", "run_call"]


def parse_arguments(text: str, stdin: TextIO) -> dict[str, Any]:
    """``--args``: a JSON object itself, ``@FILE`` for a file (arguments past the 128 KB a command-line word may
    hold), or ``-`` for stdin."""
    return _json_object(_read_arguments(text, stdin))


def _read_arguments(text: str, stdin: TextIO) -> str:
    if text == "-":
        return stdin.read()
    if text.startswith("@"):
        try:
            with open(text[1:], encoding="utf-8") as file:
                return file.read()
        except OSError as exc:
            raise UsageError(f"Cannot read --args file {text[1:]!r}: {exc.strerror or exc}.") from exc
    return text


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = strict_json(text)
    except NotAJsonNumber as exc:
        raise UsageError(f"--args has {exc}; write a number a double holds, or the text in quotes.") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"--args is not valid JSON: {exc.msg} at position {exc.pos}.") from exc
    if not isinstance(value, dict):
        raise UsageError('--args must be a JSON object, e.g. \'{"text": "hi"}\'.')
    return value


def run_call(args: argparse.Namespace, source: ToolSource, out: TextIO, err: TextIO, show: SignInPrompt) -> int:
    """Call the tool; its result goes to ``out`` even when it reports an error (exit code 4), its progress to
    ``err``."""
    arguments = parse_arguments(args.args, sys.stdin)
    from knime_mcp.calls.dispatch import Dispatcher
    from knime_mcp.mcp.sync import run_sync
    from knime_mcp.tools.policy import ToolPolicy

    granted = granted_permissions(args, source.spec)
    policy = ToolPolicy.granting(granted)

    def progress(tool: str, text: str) -> None:
        print(f"Progress: {one_line(text)}", file=err, flush=True)

    async def call() -> CallOutcome:
        async with source.pool(show) as pool:
            tool = await source.tool(pool)
            return await Dispatcher(pool, policy=policy, progress=progress, tasks=args.tasks).call(tool, arguments)

    outcome = run_sync(call)
    if outcome.result is not None:
        print_json(outcome.result.to_dict(), out)
    outcome.raise_for_error()
    return 0
