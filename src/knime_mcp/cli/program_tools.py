"""The command line's ``program-tools`` command and ``--programs FILE``: a person's command-line programs as tools.

Layer: beside :mod:`knime_mcp.cli.main`, which parses the words, writes the table as ``tools`` does and turns errors
into exit codes; this module adds the command to its parser and lists the programs of a programs file
(:mod:`knime_mcp.config.program`) with :func:`knime_mcp.calls.listing.list_program_tools`. A programs file named on
one's own command line is one's own setting, as a server named there is: its tools are sealed and may run.

    knime-mcp program-tools programs.json --format json --output tools.json
    knime-mcp call --programs programs.json word_count --args '{"path": "notes.txt"}'
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from knime_mcp.cli.policy_options import add_policy_options

if TYPE_CHECKING:
    from knime_mcp.calls.listing import ToolListing
    from knime_mcp.tools.policy import ToolPolicy
    from knime_mcp.tools.tool import MCPTool

__all__ = ["PROGRAM_COMMAND", "add_program_command", "program_file_tools", "program_listing"]

PROGRAM_COMMAND = "program-tools"


def add_program_command(commands: Any, parents: list[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Add ``program-tools`` to the CLI's subparsers; ``parents`` hold the common options and those of ``tools`` that
    shape and write the table."""
    programs = commands.add_parser(
        PROGRAM_COMMAND, parents=parents, help="list the command-line programs of a programs file as a tools table"
    )
    programs.add_argument(
        "programs_file",
        metavar="FILE",
        help='the programs file (JSON or YAML): {"programs": {"NAME": {"command": …, "args": [… "{argument}" …]}}}',
    )
    add_policy_options(programs, "allow")
    programs.set_defaults(listing=program_listing)
    return programs


def program_listing(args: argparse.Namespace, policy: ToolPolicy) -> ToolListing:
    """The tools ``program-tools`` lists."""
    from knime_mcp.calls.listing import list_program_tools
    from knime_mcp.config.program import programs_from_file

    return list_program_tools(
        programs_from_file(args.programs_file),
        include=args.include,
        exclude=args.exclude,
        prefix=args.prefix,
        schema_mode=args.schema_mode,
        policy=policy,
    )


def program_file_tools(paths: list[str]) -> list[MCPTool]:
    """The tools of every ``--programs`` file, sealed: a file named on one's own command line is one's own."""
    from knime_mcp.config.program import programs_from_file
    from knime_mcp.programs import program_tools

    return [tool for path in paths for tool in program_tools(programs_from_file(path))]
