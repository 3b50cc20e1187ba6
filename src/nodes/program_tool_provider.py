"""Program Tool Provider: a source node that makes command-line programs a person configures into tools."""

from __future__ import annotations

import knime.extension as knext

from nodes import CATEGORY
from nodes.knime_io.errors import knime_errors
from nodes.knime_io.team_seal import team_seal
from nodes.knime_io.tools_table import output_schema, tools_output
from nodes.parameters.program import ProgramSettings, check_not_from_data, programs, programs_config_parameter
from nodes.parameters.selection import SelectionSettings, selection_options
from nodes.parameters.team_seal import team_seal_key_parameter


@knext.node(
    "Program Tool Provider",
    knext.NodeType.SOURCE,
    "icons/program_provider.png",
    category=CATEGORY,
    id="ProgramToolProvider",
)
@knext.output_table("Tools", "One row per program, in the MCP Tool Provider's columns, for the agent and caller nodes.")
class ProgramToolProvider:
    """Makes command-line programs into tools.

    Each program you configure becomes one tool, in exactly the **MCP Tool Provider**'s columns (its *Kind* is
    Program): connect the table to the **Agent Prompter** or the **Agent Chat** to let a model run the program, or
    to the **MCP Tool Caller** to run it for every row of a table; concatenate it with other providers' tables to
    offer all their tools together. Configure one program in the *Program* settings, or several at once as a pasted
    *Programs configuration*. Nothing runs while the node lists the programs; a program runs when an agent or the
    Tool Caller calls its tool.

    **How a program is run.** The *Command* is started directly, never through a shell: each line of *Arguments* is
    one argument, exactly as written, and a `{name}` in it is replaced by the call's argument *name*, still as one
    argument, so no value a model sends can add arguments, pipes, redirections or commands. The program runs in the
    *Working folder*, its standard input closed. It gets only the PATH, HOME, LANG, LC_ALL and TMPDIR (and SYSTEMROOT
    on Windows) of KNIME's environment, plus what *Environment* sets (`${VARIABLE}` references are read when the tool
    is called; a secret written out is refused, and secrets are masked in results and errors). What it writes to its
    standard output is the tool's result (read as JSON when it is JSON, else as text). An exit status other than 0
    is a tool error carrying the end of what it wrote to its standard error; the agents tell the model, and the Tool
    Caller marks that row. After *Timeout (s)*, or when the node calling it is cancelled, the program and every
    process it started are stopped (on Linux and macOS its whole process group), and the call fails saying so; a
    program that writes more than *Largest output (MB)* is stopped the same way.

    **A program from data never runs.** The tools table holds each program (command, arguments, working folder and
    the names and references of its environment, never a secret) with a seal that tells the agent and caller nodes
    on this machine (or your team's, with a *Team seal key*) that a person configured it here. A row without a
    fitting seal, from a file, another machine or a table edited after this node wrote it, is refused when called,
    with the words used for an MCP server's command line taken from data, and nothing is started. A command,
    arguments, working folder, environment or programs configuration set by a flow variable counts as data too: the
    node fails instead of listing it, unless you trust the flow variable (advanced).

    **Tool ID, Kind and Tags.** *Tool ID* is the same for the same program in every run and on every machine (a hash
    of its command and arguments); *Kind* is Program; *Tags* are the *Name prefix* and the *Tags* of the *Tool
    selection* settings, and read-only or destructive when the configuration gives the program MCP behaviour hints
    (`annotations`). Without hints a program counts as not annotated, as most MCP tools do: the Agent Prompter
    offers it unless *Treat unannotated tools as destructive* is on.
    """

    pasted_config = programs_config_parameter()
    team_seal_key = team_seal_key_parameter()  # before the groups, as KNIME's node description lists it
    program = ProgramSettings()
    selection = SelectionSettings()

    def configure(self, ctx: knext.ConfigurationContext) -> knext.Schema:
        with knime_errors():
            check_not_from_data(ctx, self.pasted_config, self.program)
            programs(self.pasted_config, self.program)
        return output_schema()

    def execute(self, ctx: knext.ExecutionContext) -> knext.Table:
        from knime_mcp.calls.listing import list_program_tools

        with knime_errors(), team_seal(ctx, self.team_seal_key):
            check_not_from_data(ctx, self.pasted_config, self.program)
            listing = list_program_tools(
                programs(self.pasted_config, self.program), **selection_options(self.selection)
            )
            return tools_output(ctx, listing.tools, listing.notes)  # sealed as the programs are listed
