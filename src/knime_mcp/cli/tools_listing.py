"""The command line's ``tools`` command: the tools of one server, or of every server of ``--config FILE`` in one
table, each name prefixed by its server's key so that names stay unique and say where a tool comes from. The servers
are listed at once; one that fails is left out and named on stderr, unless ``--strict`` (``agent`` and ``chat`` list
their servers the same way)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, TextIO

from knime_mcp.cli.policy_options import tool_policy
from knime_mcp.cli.render import one_line
from knime_mcp.cli.servers import SignInPrompt, configured_servers, configured_tags, server_spec
from knime_mcp.cli.wording import cli_words

if TYPE_CHECKING:
    from knime_mcp.calls.listing import ServerFailure, ToolListing

__all__ = ["add_strict_option", "list_tools", "print_failures"]


def add_strict_option(parser: argparse.ArgumentParser) -> None:
    """``--strict``: with several servers, one that fails fails the command, as a single server's failure does."""
    parser.add_argument(
        "--strict",
        action="store_true",
        help="with several servers: fail if any of them fails (default: leave it out and name it on stderr)",
    )


def print_failures(failed: Iterable[ServerFailure], err: TextIO) -> None:
    """One ``Warning:`` line per server left out, with its reason in the command line's words."""
    for failure in failed:
        reason = one_line(cli_words(failure.reason))
        print(f"Warning: server {failure.key!r} was left out (--strict fails instead): {reason}", file=err)


def list_tools(args: argparse.Namespace, target: list[str], show: SignInPrompt) -> ToolListing:
    """The tools the words name: the server's (``--prefix`` prefixes them), or with several servers in ``--config``
    those of all of them, in its order, prefixed by ``KEY_`` before ``--prefix``, each tool tagged with its server's
    key (else ``--prefix``) and the ``"tags"`` the file gives its server; the servers left out are named on stderr."""
    from knime_mcp.calls.listing import list_servers_tools
    from knime_mcp.mcp.sync import run_sync

    configured = configured_servers(target, args)
    servers = {None: server_spec(target, args)} if len(configured) < 2 else configured
    listing = run_sync(
        list_servers_tools,
        servers,
        include=args.include,
        exclude=args.exclude,
        prefix=args.prefix or "",
        server_tags=configured_tags(args),
        schema_mode=args.schema_mode,
        policy=tool_policy(args),
        show_sign_in=show,
        strict=args.strict,
    )
    print_failures(listing.failed, sys.stderr)
    return listing
