"""Permissions: what a tool may reach on this machine or beyond it, derived from what the tool is.

Layer: values, beside :class:`~knime_mcp.tools.tool.MCPTool`. A tool's permissions are worked out from its sealed
facts (its server's transport and environment, its HTTP request, its MCP annotations), never stored: a tools table
written before permissions existed has them too, and an edited table cannot claim fewer than its tool needs.

=========================================== ==========================================
The tool                                    Needs
=========================================== ==========================================
a remote MCP server's (http(s) URL)         ``network``
an HTTP tool (OpenAPI operation, webhook)   ``network``
a stdio MCP server's (a command line)       ``processes``, ``files``
a command-line program (Kind *Program*)     ``processes``, ``files``
... whose setup passes environment vars     ``environment`` too
... annotated ``openWorldHint: true``       ``network`` too
=========================================== ==========================================

A process started here can read and write what the user running KNIME can, hence ``files`` with ``processes``. The
MCP SDK hands a stdio server only a few variables of this machine (``HOME``, ``PATH``, ``USER`` and the like);
``environment`` is needed when the server's setup passes more (its environment variables, often ``${VAR}``
references to secrets). A tool without any MCP annotation is judged by its transport alone (the specification's
default ``openWorldHint`` is true, which would give every such tool ``network``); ``openWorldHint: false`` never
removes ``network`` from a remote tool: its calls still cross the network.

    needed_permissions(tool)                    # ("processes", "files")
    missing_permissions(tool, ("network",))     # ("processes", "files")
    parse_permissions(["network", "files"])     # ("network", "files"); ["none"] is ()
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal, get_args

from knime_mcp.errors import ConfigError

if TYPE_CHECKING:
    from knime_mcp.config import ServerSpec
    from knime_mcp.tools.tool import MCPTool

__all__ = [
    "ALL_PERMISSIONS", "GRANT_ADVICE", "NO_PERMISSION", "PERMISSION_TEXTS", "Permission", "missing_permissions",
    "needed_permissions", "parse_permissions", "permission_refusal", "server_permissions",
]  # fmt: skip

Permission = Literal["network", "files", "processes", "environment"]

ALL_PERMISSIONS: tuple[Permission, ...] = get_args(Permission)
"""Every permission, in the order tables, settings and messages list them; the default grant."""

NO_PERMISSION = "none"
"""The word that grants none (``--permit none``)."""

GRANT_ADVICE = "under 'Granted permissions', or with "
"""How a refusal says to grant a permission, before the ``--permit`` flags; the CLI says ``with`` alone."""

PERMISSION_TEXTS: dict[Permission, str] = {
    "network": "Reach other machines: a remote MCP server, an HTTP API or webhook, or a local tool that says it "
    "reaches out (MCP annotation openWorldHint).",
    "files": "Read and write files on this machine, as the user running KNIME: every process started here can.",
    "processes": "Start a program on this machine: a stdio MCP server or a command-line program.",
    "environment": "Be handed environment variables of this machine (often secrets as ${VAR}) beyond the few every "
    "started program gets.",
}
"""What each permission lets a tool do, for the settings' descriptions and the CLI's help."""


def server_permissions(server: ServerSpec) -> tuple[Permission, ...]:
    """What any tool of ``server`` needs by its transport alone, known before anything connects: a URL, or a command
    line (a stdio server's, or a command-line program's, whose server holds its program, folder and environment)."""
    if server.is_url:
        return ("network",)
    return ("files", "processes", "environment") if server.env else ("files", "processes")


def needed_permissions(tool: MCPTool) -> tuple[Permission, ...]:
    """The permissions ``tool`` needs, in :data:`ALL_PERMISSIONS` order (see the module's table)."""
    if tool.http is not None:
        return ("network",)
    needed = server_permissions(tool.server)
    hints = tool.annotations
    if "network" not in needed and hints.annotated and hints.open_world:
        needed = ("network", *needed)
    return needed


def missing_permissions(tool: MCPTool, granted: Iterable[str]) -> tuple[Permission, ...]:
    """The permissions ``tool`` needs that ``granted`` leaves out, in :data:`ALL_PERMISSIONS` order."""
    granted = frozenset(granted)
    return tuple(permission for permission in needed_permissions(tool) if permission not in granted)


def permission_refusal(what: str, missing: Iterable[Permission]) -> str:
    """Why ``what`` (``tool 'x'``, a server) may not be used, naming each permission not granted and how to grant
    it, in the words of the KNIME setting and of the command line (which the CLI shortens to its own): for a model to
    pass on, for a Tool Caller row, and for the CLI."""
    missing = tuple(missing)
    plural = len(missing) > 1
    flags = " ".join(f"--permit {permission}" for permission in missing)
    return (
        f"{what} needs the {' and '.join(missing)} permission{'s' if plural else ''}, which "
        f"{'are' if plural else 'is'} not granted; grant {'them' if plural else 'it'} {GRANT_ADVICE}{flags} on the "
        "command line"
    )


def parse_permissions(words: Iterable[str]) -> tuple[Permission, ...]:
    """The permissions ``words`` name (each may list several, separated by commas; ignoring case), in
    :data:`ALL_PERMISSIONS` order; ``none`` alone grants none. An unknown word is a ConfigError listing the known."""
    chosen = {word.strip().casefold() for text in words for word in text.split(",") if word.strip()}
    if chosen == {NO_PERMISSION}:
        return ()
    if NO_PERMISSION in chosen:
        raise ConfigError(f"'{NO_PERMISSION}' grants no permission, so it goes alone; leave it out or the others.")
    if unknown := sorted(chosen - set(ALL_PERMISSIONS)):
        raise ConfigError(
            f"Unknown permission {unknown[0]!r}; use {', '.join(ALL_PERMISSIONS)} (or {NO_PERMISSION} alone)."
        )
    return tuple(permission for permission in ALL_PERMISSIONS if permission in chosen)
