"""Parameters: the settings of the nodes that offer or call MCP tools: which tools may be called (the tool policy),
which servers of a tools table are trusted, and how a server's requests (a browser sign-in, a request for input)
are answered.

The parameters come from factories, so that every node declares a setting with the same name, text and version;
``tool_policy`` and ``elicitation_mode`` translate the settings for the core.
"""

from __future__ import annotations

import knime.extension as knext

from knime_mcp.config import ElicitationMode
from knime_mcp.tools.permissions import PERMISSION_TEXTS, Permission, parse_permissions
from knime_mcp.tools.policy import ToolPolicy

__all__ = [
    "DestructiveOptions", "ElicitationOptions", "PermissionOptions", "browser_sign_in_parameter",
    "destructive_parameter", "elicitation_mode", "elicitation_parameter", "granted_permissions",
    "granted_permissions_parameter", "tool_policy", "trust_servers_parameter", "unannotated_parameter",
]  # fmt: skip


class DestructiveOptions(knext.EnumParameterOptions):
    ALLOW = ("Allow all", "Every tool may be called.")
    BLOCK = (
        "Block destructive",
        "Tools whose MCP annotations say they may destroy data are never called (MCP counts a tool without "
        "annotations as destructive).",
    )
    READ_ONLY = ("Read-only only", "Only tools annotated read-only are called.")


def destructive_parameter(default: DestructiveOptions) -> knext.EnumParameter:
    return knext.EnumParameter(
        "Destructive tools",
        "Which tools may be called, judged by their MCP annotations.",
        default.name,
        DestructiveOptions,
    )


def unannotated_parameter() -> knext.BoolParameter:
    """Added in 0.2.0: settings saved before load with the default, which offers tools without annotations."""
    return knext.BoolParameter(
        "Treat unannotated tools as destructive",
        "MCP counts a tool whose server sent no annotations as destructive, but most servers built with FastMCP or "
        "the mcp 1.x SDK annotate no tool. By default, blocking destructive tools keeps such tools and names them in "
        "the node warning; switch this on to block them together with the destructive tools.",
        False,
        since_version="0.2.0",
        is_advanced=True,
    )


class ElicitationOptions(knext.EnumParameterOptions):
    DECLINE = (
        "Decline",
        "Decline every request for input: the tool call fails, saying what the tool asked for.",
    )
    DEFAULTS = (
        "Use the defaults",
        "Answer a form whose every field has a default with those defaults; decline any other request for input.",
    )


def elicitation_parameter() -> knext.EnumParameter:
    """Added in 0.3.0: for nodes that call tools."""
    return knext.EnumParameter(
        "When a tool asks for input",
        "An MCP tool may ask the client for input while it runs (elicitation), expecting a person to answer. A "
        "workflow usually runs without one, so the request is declined and the tool call fails with what the tool "
        "asked for, or, with 'Use the defaults', a form whose every field has a default is answered with them. "
        "Requests to open a web page are always declined. Each request is logged.",
        ElicitationOptions.DECLINE.name,
        ElicitationOptions,
        since_version="0.3.0",
        is_advanced=True,
    )


def elicitation_mode(option: str) -> ElicitationMode:
    return "defaults" if option == ElicitationOptions.DEFAULTS.name else "decline"


def trust_servers_parameter() -> knext.BoolParameter:
    return knext.BoolParameter(
        "Trust every server in the tools table",
        "Tools listed by an MCP Tool Provider on this machine are trusted as they are. Any other tools table (saved "
        "on another machine, read from a file, or edited) is data: its servers may only be public http(s) URLs, "
        "and its stdio command lines are never run. Switch this on to use such a table's local, private-network or "
        "stdio servers anyway.",
        False,
        is_advanced=True,
    )


class PermissionOptions(knext.EnumParameterOptions):
    """The permissions of :mod:`knime_mcp.tools.permissions`, each option named as the permission in capitals."""

    NETWORK = ("Network", PERMISSION_TEXTS["network"])
    FILES = ("Files", PERMISSION_TEXTS["files"])
    PROCESSES = ("Processes", PERMISSION_TEXTS["processes"])
    ENVIRONMENT = ("Environment", PERMISSION_TEXTS["environment"])


def granted_permissions_parameter() -> knext.EnumSetParameter:
    """Added in 0.5.0: for the nodes that offer or call tools; settings saved before it grant every permission."""
    return knext.EnumSetParameter(
        "Granted permissions",
        "What the tools may reach; every tool needs some, worked out from what it is (the tools table's Permissions "
        "column): a remote MCP server's tool or an HTTP tool needs Network; a stdio MCP server's tool or a "
        "command-line program (and a skill's script, with 'Run skill scripts') Processes and Files, and Environment "
        "when its settings pass environment variables; a local tool annotated openWorldHint also Network. A tool "
        "needing a permission not granted here is not "
        "offered to a model (a model calling it by name is told which permission is missing) and not called by the "
        "Tool Caller (each row fails, naming it); its server is never started or reached. All are granted by "
        "default.",
        [option.name for option in PermissionOptions],
        PermissionOptions,
        since_version="0.5.0",
        is_advanced=True,
    )


def granted_permissions(options: list[str]) -> tuple[Permission, ...]:
    """The core's permissions from the setting's option names."""
    return parse_permissions(option.lower() for option in options)


def tool_policy(
    allow: str,
    deny: str,
    destructive: str,
    *,
    unannotated_destructive: bool = False,
    tags: str = "",
    granted: list[str] | None = None,
) -> ToolPolicy:
    """The core's tool policy from node settings; a bad pattern is a ConfigError naming the setting. ``tags``:
    *Only tools tagged*, separated by commas; ``granted``: *Granted permissions*, None: all."""
    from knime_mcp.tools.tags import parse_tags

    mode = {"ALLOW": "allow", "BLOCK": "block", "READ_ONLY": "read_only"}[destructive]
    return ToolPolicy(
        allow=allow or None,
        deny=deny or None,
        destructive=mode,  # type: ignore[arg-type]
        unannotated_destructive=unannotated_destructive,
        tags=parse_tags(tags),
        **({} if granted is None else {"granted": granted_permissions(granted)}),
    )


def tasks_parameter() -> knext.BoolParameter:
    """Added in 0.5.0: for nodes that call the tools of a tools table."""
    return knext.BoolParameter(
        "Run long tools as tasks",
        "Call a tool whose server allows it to run as an MCP task (taskSupport 'optional') as one: the node polls "
        "it at the interval the server asks for, shows its status as progress, and cancels it on the server when "
        "the node is cancelled or the call times out. A tool that requires a task (taskSupport 'required') always "
        "runs as one; calls run concurrently within the node's concurrency.",
        False,
        since_version="0.5.0",
    )


def browser_sign_in_parameter() -> knext.BoolParameter:
    """Added in 0.3.0: for nodes that connect to the servers of a tools table."""
    return knext.BoolParameter(
        "Sign in to OAuth servers in a browser",
        "A server of the tools table that uses OAuth sign-in works with the sign-in stored when its tools were "
        "listed, refreshed as needed. When that sign-in is gone or has expired, this node opens the browser for a "
        "new one (the progress message and the KNIME log show where). Switch it off where nobody can sign in, e.g. "
        "on a KNIME Hub executor or in a batch run, so the node fails at once and says how to sign in instead of "
        "waiting for a browser.",
        True,
        since_version="0.3.0",
        is_advanced=True,
    )
