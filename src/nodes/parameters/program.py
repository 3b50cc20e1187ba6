"""Parameters: the *Program* group of the Program Tool Provider (one command-line program as a person types it), its
*Programs configuration* setting, and the core's ProgramSpecs of them.

A program from data never runs: the settings that decide what runs (the command, its arguments, working folder and
environment, or the pasted configuration), when a flow variable the person does not vouch for set them, refuse the
node with the same words as a stdio server's command line from data (docs/security.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import knime.extension as knext

from knime_mcp.config.limits import MAX_MESSAGE_BYTES
from knime_mcp.config.program import DEFAULT_PROGRAM_TIMEOUT
from knime_mcp.errors import ConfigError
from nodes.parameters.server import setting_pairs, untrusted_hint

if TYPE_CHECKING:
    from knime_mcp.config.program import ProgramSpec

__all__ = ["TRUST_PROGRAM", "ProgramSettings", "check_not_from_data", "programs", "programs_config_parameter"]

TRUST_PROGRAM = "Trust a program from a flow variable"
_DATA_REFUSED = "A program taken from data was refused: it would start a program on this machine."


@knext.parameter_group(label="Program")
class ProgramSettings:
    """One command-line program the tool runs, used when no programs configuration is pasted above."""

    name = knext.StringParameter(
        "Name",
        "The tool's name, as the model and the Tool Caller call it, e.g. word_count.",
        "",
        since_version="0.5.0",
    )
    description = knext.MultilineStringParameter(
        "Description",
        "What the program does and when to use it, in words for the model, e.g. 'Counts the words of a text file'.",
        "",
        since_version="0.5.0",
        number_of_lines=3,
    )
    command = knext.StringParameter(
        "Command",
        "The one program to run: a name found on the PATH (e.g. wc, python3) or its full path. It is started "
        "directly, never by a shell, so this is a program, not a command line: no pipes, redirections, wildcards, "
        "$VARIABLES or several commands. A program that is a script runs when it is executable and starts with #!; "
        "else enter its interpreter here and the script as the first argument.",
        "",
        since_version="0.5.0",
    )
    arguments = knext.MultilineStringParameter(
        "Arguments",
        "One argument per line, each handed to the program as one argument exactly as written (spaces, quotes and "
        "$ included); empty lines are left out. {name} in an argument is replaced by the tool's argument 'name' as "
        "the model or the Tool Caller gives it, still as one argument (a text as it is, a number or true/false as "
        "written, a list or an object as JSON); write {{ and }} for braces. E.g. the lines -w and {path}.",
        "",
        since_version="0.5.0",
        number_of_lines=4,
    )
    input_schema = knext.MultilineStringParameter(
        "Input schema",
        "The JSON Schema of the tool's arguments (an object with properties), which the model sees and every call "
        "is checked against. Empty: one required text argument per {name} in the arguments.",
        "",
        since_version="0.5.0",
        number_of_lines=4,
    )
    working_folder = knext.StringParameter(
        "Working folder",
        "The folder the program runs in, as a full path. Empty: the folder KNIME runs in.",
        "",
        since_version="0.5.0",
    )
    environment = knext.MultilineStringParameter(
        "Environment",
        "One NAME=value per line, handed to the program; values may reference ${VARIABLE}s of KNIME's environment, "
        "read when the tool is called. A secret written out is refused. Besides these, only PATH, HOME, LANG, "
        "LC_ALL and TMPDIR (and SYSTEMROOT on Windows) reach the program from KNIME's environment.",
        "",
        since_version="0.5.0",
        is_advanced=True,
    )
    timeout = knext.DoubleParameter(
        "Timeout (s)",
        "Seconds one call may run; then the program and every process it started are stopped, and the call fails "
        "saying so. A Timeout (s) column beside the tools table's MCP Tool column replaces it for that tool; the "
        "Tool Caller's and the agents' call timeouts do not.",
        DEFAULT_PROGRAM_TIMEOUT,
        min_value=0.1,
        since_version="0.5.0",
    )
    max_output_mb = knext.IntParameter(
        "Largest output (MB)",
        "The most output a call reads; a program that writes more is stopped and the call is a tool error that says "
        "so. The default is the limit of an MCP tool's result.",
        MAX_MESSAGE_BYTES // 2**20,
        min_value=1,
        since_version="0.5.0",
        is_advanced=True,
    )
    trust_flow_variable = knext.BoolParameter(
        TRUST_PROGRAM,
        "A command, arguments, working folder, environment or programs configuration set by a flow variable may "
        "come from data (a table, a web form), so by default the node refuses it and nothing is ever run. Switch "
        "this on if the flow variable is yours, e.g. set by a configuration node.",
        False,
        since_version="0.5.0",
        is_advanced=True,
    )


def programs_config_parameter() -> knext.MultilineStringParameter:
    """The *Programs configuration* setting: several programs at once, typed or pasted by a person."""
    return knext.MultilineStringParameter(
        "Programs configuration",
        "Several programs at once, JSON or YAML, which replaces the program settings below: "
        '{"programs": {"word_count": {"command": "wc", "args": ["-w", "{path}"], "description": "Counts words", '
        '"inputSchema": {...}, "cwd": "/data", "env": {"LANG": "C"}, "timeout": 30, "maxOutputMb": 1, '
        '"annotations": {"readOnlyHint": true}}}}. '
        "Each key is a tool's name; only command is required, and the other keys mean what the program settings "
        "below mean (annotations: MCP's behaviour hints). Empty: the program settings are used.",
        "",
        since_version="0.5.0",
        number_of_lines=6,
    )


def programs(pasted: str, program: ProgramSettings) -> list[ProgramSpec]:
    """The programs of the pasted configuration, else the one of the settings; a ConfigError for settings that
    cannot work, or for none at all."""
    from knime_mcp.config.program import ProgramSpec, programs_from_text

    if pasted.strip():
        return programs_from_text(pasted)
    if not (program.name.strip() or program.command.strip()):
        raise ConfigError(
            "No program given.", hint="Enter the program's Name and Command, or paste a programs configuration."
        )
    if not program.name.strip():
        raise ConfigError("The program has no Name.", hint="Enter the name the tool is called by, e.g. word_count.")
    if not program.command.strip():
        raise ConfigError("The program has no Command.", hint="Enter the program to run, e.g. wc, or its full path.")
    return [
        ProgramSpec(
            name=program.name.strip(),
            command=program.command.strip(),
            args=tuple(line for line in program.arguments.splitlines() if line.strip()),
            description=program.description.strip(),
            input_schema=_schema(program.input_schema),
            cwd=program.working_folder.strip() or None,
            env=setting_pairs(program.environment, "=", "Environment"),
            timeout=program.timeout,
            max_output_bytes=program.max_output_mb * 2**20,
        )
    ]


def check_not_from_data(ctx: knext.ConfigurationContext, pasted: str, program: ProgramSettings) -> None:
    """Refuse what decides the program to run when a flow variable the person does not vouch for set it: such a
    program is data, and a program from data never runs."""
    settings = (pasted, program.command, program.arguments, program.working_folder, program.environment)
    hint = untrusted_hint(
        ctx, settings, trusted=program.trust_flow_variable, subject="The program", switch=TRUST_PROGRAM
    )
    if hint is not None:
        raise ConfigError(_DATA_REFUSED, hint=hint)


def _schema(text: str) -> dict[str, object] | None:
    """The *Input schema* setting's JSON object; None when empty."""
    from knime_mcp.calls.rows import json_object

    example = '{"type": "object", "properties": {"path": {"type": "string"}}}'
    return json_object(text, "The 'Input schema'", example) if text.strip() else None
