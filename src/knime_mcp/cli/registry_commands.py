"""The command line's catalog of servers: ``servers search``, ``servers show`` and ``connect``.

Layer: beside :mod:`knime_mcp.cli.main`, which parses the words and turns errors into exit codes; this module adds the
commands' arguments and runs them on :mod:`knime_mcp.registry`. What a registry says is shown (through
:func:`~knime_mcp.cli.render.terminal_safe`), never run; ``connect NAME`` starts the entry's package because the
person typed its name. The TLS options (:mod:`knime_mcp.cli.tls_options`) apply to the registry (an organisation's,
under its own CA) and to an https remote ``connect`` lists.

    knime-mcp servers search memory
    knime-mcp servers show io.github.domdomegg/airtable-mcp-server --version 1.7.3
    knime-mcp connect filesystem --env allowed_directory=/data --write mcp.json
"""

from __future__ import annotations

import argparse
import json
import os
from typing import TYPE_CHECKING, Any, TextIO

from knime_mcp.cli.render import one_line, terminal_safe
from knime_mcp.cli.servers import SignInPrompt, common_options
from knime_mcp.cli.tls_options import add_tls_options, tls_settings
from knime_mcp.errors import UsageError

if TYPE_CHECKING:
    from knime_mcp.config import TlsSettings
    from knime_mcp.registry.entries import RegistryEntry
    from knime_mcp.registry.setup import ServerSetup

__all__ = ["COMMANDS", "add_registry_commands", "run_registry_command"]

COMMANDS = ("servers", "connect")

_NAME_HELP = "a preset's name (memory, github, …) or a registry server's name (io.github.user/server)"


def add_registry_commands(commands: Any) -> None:
    """Add ``servers`` (``search``, ``show``) and ``connect`` to the CLI's subparsers."""
    from knime_mcp.registry.entries import OFFICIAL_REGISTRY

    registry = argparse.ArgumentParser(add_help=False, parents=[common_options()])
    registry.add_argument(
        "--registry",
        default=OFFICIAL_REGISTRY,
        metavar="URL",
        help=f"the MCP Registry to read (default: the official one, {OFFICIAL_REGISTRY})",
    )
    add_tls_options(registry)  # for the registry's https, and for the remote server 'connect' lists
    servers = commands.add_parser("servers", help="find servers in the presets and the MCP Registry")
    actions = servers.add_subparsers(dest="servers_command", required=True, parser_class=type(servers))
    search = actions.add_parser("search", parents=[registry], help="servers whose name contains TEXT")
    search.add_argument("text", nargs="?", default="", metavar="TEXT", help="a word of the name (none: all)")
    search.add_argument("--format", choices=["text", "json"], default="text")
    show = actions.add_parser("show", parents=[registry], help="what a server runs and the inputs it needs")
    show.add_argument("name", metavar="NAME", help=_NAME_HELP)
    show.add_argument("--version", dest="server_version", metavar="V", help="the version (default: the latest)")
    show.add_argument("--format", choices=["text", "json"], default="text")

    connect = commands.add_parser(
        "connect", parents=[registry], help="set up a preset or registry server, print its entry and list its tools"
    )
    connect.add_argument("name", metavar="NAME", help=_NAME_HELP)
    connect.add_argument("--version", dest="server_version", metavar="V", help="the version (default: the latest)")
    connect.add_argument(
        "--write", metavar="FILE", help="add the server's entry to the mcpServers of FILE (made if missing)"
    )
    connect.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="the value of an input the server declares ('servers show' lists them: environment variables, headers "
        "and their variables, arguments); secrets only as ${VAR} references",
    )


def run_registry_command(args: argparse.Namespace, out: TextIO, err: TextIO, show: SignInPrompt) -> int:
    """Run ``servers search``, ``servers show`` or ``connect``."""
    from knime_mcp.mcp.sync import run_sync
    from knime_mcp.registry.catalog import find_server, resolve_server, search_servers
    from knime_mcp.registry.setup import server_setup

    tls = tls_settings(args)
    if args.command == "servers" and args.servers_command == "search":
        found = run_sync(lambda: search_servers(args.text, registry_url=args.registry, tls=tls))
        if found.registry_error is not None:
            said = one_line(found.registry_error)
            print(f"Warning: the registry could not be read ({said}); only the presets are listed.", file=err)
        if args.format == "json":
            out.write(json.dumps([_entry_dict(entry) for entry in found.entries], indent=2) + "\n")
        else:
            out.write(_entries_text(found.entries))
        return 0
    if args.command == "servers":
        entry = run_sync(lambda: find_server(args.name, args.server_version, registry_url=args.registry, tls=tls))
        setup = server_setup(entry, strict=False)
        if args.format == "json":
            out.write(json.dumps({**_entry_dict(entry), "setup": setup.to_dict()}, indent=2) + "\n")
        else:
            out.write(_setup_text(setup))
        return 0
    values = _pairs(args.env)
    setup = run_sync(
        lambda: resolve_server(args.name, args.server_version, values, registry_url=args.registry, tls=tls)
    )
    if unknown := sorted(set(values) - {item.name for item in setup.inputs}):
        declared = ", ".join(item.name for item in setup.inputs) or "none"
        raise UsageError(f"{setup.entry.label} declares no input {unknown[0]!r}.", hint=f"Its inputs: {declared}.")
    out.write(json.dumps({"mcpServers": {setup.key: setup.config}}, indent=2) + "\n")
    _say_needs(setup, err)
    if args.write:
        _merge(args.write, setup)
        print(f"Added server {setup.key!r} to {args.write}.", file=err)
    return _list_tools(setup, tls, out, err, show)


def _pairs(values: list[str]) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for number, value in enumerate(values, start=1):
        name, found, rest = value.partition("=")
        if not found or not name.strip():
            raise UsageError(
                f"--env {number} is not of the form NAME=VALUE (its text is not shown: it may be a secret)."
            )
        pairs[name.strip()] = rest
    return pairs


def _entry_dict(entry: RegistryEntry) -> dict[str, Any]:
    return {
        "name": entry.name, "version": entry.version, "title": entry.title, "description": entry.description,
        "source": entry.source, "status": entry.status, "repository": entry.repository, "website": entry.website,
    }  # fmt: skip


def _entries_text(entries: tuple[RegistryEntry, ...]) -> str:
    if not entries:
        return "No server found.\n"
    rows = [("NAME", "VERSION", "FROM", "DESCRIPTION")] + [
        (entry.name, entry.version, "preset" if entry.is_preset else "registry", entry.title or entry.description)
        for entry in entries
    ]
    widths = [max(len(row[column]) for row in rows) for column in range(3)]
    lines = [
        "  ".join([*(cell.ljust(width) for cell, width in zip(row, widths, strict=False)), row[3]]).rstrip()
        for row in rows
    ]
    return terminal_safe("\n".join(lines)) + f"\n{len(entries)} server(s); 'knime-mcp servers show NAME' says more.\n"


def _setup_text(setup: ServerSetup) -> str:
    entry = setup.entry
    lines = [f"{entry.label} ({'preset' if entry.is_preset else f'registry {entry.source}'}, {entry.status})"]
    lines += [text for text in (entry.title, entry.description, entry.repository, entry.website) if text]
    lines += [f"Runs: {setup.way}", "Entry:", json.dumps({"mcpServers": {setup.key: setup.config}}, indent=2)]
    lines.append(
        "Inputs (give each with 'knime-mcp connect NAME --env INPUT=VALUE'):" if setup.inputs else "Inputs: none"
    )
    for item in setup.inputs:
        marks = ", ".join(mark for mark, on in (("required", item.required), ("secret", item.secret)) if on)
        default = f" (default {item.default})" if item.default is not None else ""
        lines.append(f"  {item.name}  [{item.kind}{', ' + marks if marks else ''}]{default}  {item.description}")
    return terminal_safe("\n".join(lines)) + "\n"


def _say_needs(setup: ServerSetup, err: TextIO) -> None:
    """Name the environment variables the entry reads that are not set here, so that a failed start is explained."""
    from knime_mcp.config import ENV_REF

    texts = [*setup.config.get("env", {}).values(), *setup.config.get("headers", {}).values()]
    unset = sorted({name for text in texts for name in ENV_REF.findall(text) if name not in os.environ})
    if unset:
        print(f"Note: set {', '.join(unset)} in the environment; the server's entry reads them.", file=err)


def _merge(path: str, setup: ServerSetup) -> None:
    """Add the entry to the ``mcpServers`` of the file at ``path``, keeping everything else in it."""
    try:
        with open(path, encoding="utf-8") as file:
            data = json.load(file)
    except FileNotFoundError:
        data = {}
    except (OSError, ValueError) as exc:
        raise UsageError(
            f"Cannot read {path!r} as JSON: {exc}", hint="Give a new file, or an mcp.json to add to."
        ) from exc
    if not isinstance(data, dict) or not isinstance(data.setdefault("mcpServers", {}), dict):
        raise UsageError(f'{path!r} is not an MCP configuration with an "mcpServers" object.')
    data["mcpServers"][setup.key] = setup.config
    with open(path, "w", encoding="utf-8") as file:
        file.write(json.dumps(data, indent=2) + "\n")


def _list_tools(setup: ServerSetup, tls: TlsSettings, out: TextIO, err: TextIO, show: SignInPrompt) -> int:
    """List the tools of the server set up; a remote over https is reached with the command's TLS options."""
    from dataclasses import replace

    from knime_mcp.calls.listing import list_servers_tools
    from knime_mcp.cli.render import render_tools
    from knime_mcp.cli.wording import print_notes
    from knime_mcp.mcp.sync import run_sync

    spec = setup.spec()
    spec = replace(spec, tls=tls) if spec.target.startswith("https://") else spec
    listing = run_sync(list_servers_tools, {None: spec}, show_sign_in=show, strict=True)
    out.write(render_tools(listing.tools))
    print_notes(listing.notes, err)
    return 0
