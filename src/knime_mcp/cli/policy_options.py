"""The command line's tool policy options (``--allow``, ``--deny``, ``--destructive``, ``--unannotated-destructive``,
``--tag``) of ``tools``, ``http-tools`` and ``agent``, the *Granted permissions* (``--permit``) of ``agent``, ``chat``,
``call`` and ``call-table``, and the check of every regular expression a command takes."""

from __future__ import annotations

import argparse
import re
from typing import TYPE_CHECKING

from knime_mcp.errors import ConfigError, UsageError
from knime_mcp.tools.permissions import ALL_PERMISSIONS, NO_PERMISSION, Permission, parse_permissions

if TYPE_CHECKING:
    from knime_mcp.config import ServerSpec
    from knime_mcp.tools.policy import ToolPolicy

__all__ = [
    "add_permit_option", "add_policy_options", "add_tag_option", "check_patterns", "chosen_tags", "granted_permissions",
    "refused_server", "tool_policy",
]  # fmt: skip


def add_policy_options(parser: argparse.ArgumentParser, destructive: str) -> None:
    group = parser.add_argument_group("tool policy")
    group.add_argument("--allow", help="only tools whose whole name matches this regex (anchored at both ends)")
    group.add_argument("--deny", help="never tools whose name contains a match of this regex")
    group.add_argument(
        "--destructive",
        choices=["allow", "block", "read-only"],
        default=destructive,
        help=f"tools annotated destructive: allowed, blocked, or only read-only tools (default: {destructive})",
    )
    group.add_argument(
        "--unannotated-destructive",
        action="store_true",
        help="count tools without MCP annotations as destructive, as the MCP spec does (default: offer them and "
        "name them in a warning)",
    )
    add_tag_option(group, "only tools carrying this tag")


def add_tag_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup, what: str) -> None:
    """``--tag``, repeatable: tools are selected by any of the tags given (``call``, ``call-table``: the tool)."""
    parser.add_argument(
        "--tag",
        action="append",
        default=[],
        metavar="TAG",
        help=f"{what} (repeatable, or separated by commas: any of them, ignoring case): a server's key in a pasted "
        "configuration, a tag the MCP Tool Provider gave it, read-only or destructive (a tools table's Tags column)",
    )


def add_permit_option(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """``--permit``, repeatable: the *Granted permissions* of the commands that call tools (``call``, ``call-table``,
    ``agent``, ``chat``: ``parser`` is their common parent); none given: all. Returns ``parser``."""
    parser.add_argument(
        "--permit",
        action="append",
        default=[],
        metavar="PERMISSION",
        help=f"grant tools this permission: {', '.join(ALL_PERMISSIONS)} (repeatable, or separated by commas), or "
        f"'{NO_PERMISSION}'; a tool needing one not granted is not offered or called (default: all). Not to be "
        "confused with --allow (a tool-name allow-list) or OAuth grants",
    )
    return parser


def granted_permissions(args: argparse.Namespace, server: ServerSpec | None = None) -> tuple[Permission, ...]:
    """The ``--permit`` options; every permission when none is given (or the command has no ``--permit``). With
    ``server``, the one server a command calls: a usage error if its transport needs a permission not granted."""
    words = getattr(args, "permit", None)
    try:
        granted = parse_permissions(words) if words else ALL_PERMISSIONS
    except ConfigError as exc:
        raise UsageError(f"--permit: {exc.message}") from None
    if server is not None and (refusal := refused_server(server, granted)) is not None:
        raise UsageError(refusal)
    return granted


def refused_server(spec: ServerSpec, granted: tuple[Permission, ...]) -> str | None:
    """Why the server's tools may not be listed or called under ``--permit``, said before its process is started or
    its address reached; None when its transport needs nothing more."""
    from knime_mcp.cli.wording import cli_words
    from knime_mcp.tools.permissions import permission_refusal, server_permissions

    missing = [permission for permission in server_permissions(spec) if permission not in granted]
    if not missing:
        return None
    return cli_words(permission_refusal(f"The server {spec.display_name!r}", missing)) + "."


def tool_policy(args: argparse.Namespace) -> ToolPolicy:
    from knime_mcp.tools.policy import ToolPolicy

    return ToolPolicy(
        allow=args.allow,
        deny=args.deny,
        destructive=args.destructive.replace("-", "_"),
        unannotated_destructive=args.unannotated_destructive,
        tags=chosen_tags(args),
        granted=granted_permissions(args),
    )


def chosen_tags(args: argparse.Namespace) -> tuple[str, ...]:
    """The ``--tag`` options, each of which may also list tags separated by commas, as the nodes' settings do."""
    from knime_mcp.tools.tags import parse_tags

    return parse_tags(",".join(args.tag))


def check_patterns(args: argparse.Namespace) -> None:
    """A regex that does not compile is the command line's fault: say so before connecting."""
    for option in ("include", "exclude", "allow", "deny"):
        pattern = getattr(args, option, None)
        if pattern is None:
            continue
        try:
            re.compile(pattern)
        except re.error as exc:
            raise UsageError(f"--{option} {pattern!r} is not a valid regular expression: {exc}.") from exc
