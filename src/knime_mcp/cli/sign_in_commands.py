"""The command line's ``login`` and ``logout``: an OAuth server's stored sign-in, made afresh or forgotten.

Layer: beside :mod:`knime_mcp.cli.main`, which parses the words, builds the server and turns errors into exit codes.
"""

from __future__ import annotations

from typing import TextIO

from knime_mcp.cli.servers import SignInPrompt
from knime_mcp.config import ServerSpec
from knime_mcp.errors import UsageError

__all__ = ["command_login", "command_logout"]


def command_login(spec: ServerSpec, out: TextIO, show: SignInPrompt) -> int:
    """Sign in afresh (the client registration is kept) and store the tokens for every later command."""
    from knime_mcp.auth import spec_token_store
    from knime_mcp.mcp.client import McpClient
    from knime_mcp.mcp.sync import run_sync

    if spec.auth.kind != "oauth":
        raise UsageError("login signs in with OAuth to an http(s) server; --auth must be oauth, or left out.")
    store = spec_token_store(spec)
    store.forget_tokens()

    async def sign_in() -> int:
        async with McpClient(spec, show_sign_in=show) as client:
            return len(await client.list_tools())

    tools = run_sync(sign_in)
    out.write(f"Signed in to {spec.display_name} ({tools} tools); the sign-in is kept in {store.path}\n")
    return 0


def command_logout(spec: ServerSpec, out: TextIO) -> int:
    """Forget every sign-in stored for the server, so that the next command signs in afresh."""
    from knime_mcp.auth import forget_server

    forgotten = forget_server(spec.target)
    said = f"removed {forgotten} stored sign-in{'s' if forgotten != 1 else ''}" if forgotten else "no stored sign-in"
    out.write(f"Signed out of {spec.display_name} ({said}).\n")
    return 0
