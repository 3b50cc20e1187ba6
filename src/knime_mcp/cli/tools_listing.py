"""The command line's ``tools`` command: the tools of one server, or of every server of ``--config FILE`` in one
table, each name prefixed by its server's key so that names stay unique and say where a tool comes from."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from knime_mcp.cli.policy_options import tool_policy
from knime_mcp.cli.servers import SignInPrompt, configured_servers, server_spec

if TYPE_CHECKING:
    from knime_mcp.calls.listing import ToolListing

__all__ = ["list_tools"]


def list_tools(args: argparse.Namespace, target: list[str], show: SignInPrompt) -> ToolListing:
    """The tools the words name: the server's (``--prefix`` prefixes them), or with several servers in ``--config``
    those of all of them, in its order, prefixed by ``KEY_`` before ``--prefix``."""
    from knime_mcp.calls.listing import list_servers_tools
    from knime_mcp.mcp.sync import run_sync

    configured = configured_servers(target, args)
    servers = {None: server_spec(target, args)} if len(configured) < 2 else configured
    return run_sync(
        list_servers_tools,
        servers,
        include=args.include,
        exclude=args.exclude,
        prefix=args.prefix or "",
        schema_mode=args.schema_mode,
        policy=tool_policy(args),
        show_sign_in=show,
    )
