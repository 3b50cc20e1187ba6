"""Programs as tools rows, and the program a row runs.

Layer: wire, beside :mod:`knime_mcp.programs.runner`. A program's row is an :class:`MCPTool` of Kind ``Program``: its
server is the program (:attr:`ProgramSpec.server`: the command, working folder, environment, timeout and largest
output) and its :class:`ProgramCall` the argument template. Sealed, as a person's setting is: the row's seal covers
all of them, so an edited row, or one from a file or table made elsewhere, is data, and data never runs a program.

    tools = program_tools([ProgramSpec(name="wc", command="wc", args=("-w", "{path}"))])
    program_of(tools[0]).args   # ("-w", "{path}")
"""

from __future__ import annotations

import functools
import shlex
from collections.abc import Sequence

import mcp_types

from knime_mcp.config.program import ProgramSpec
from knime_mcp.errors import ConfigError
from knime_mcp.seal import seal_spec
from knime_mcp.tools.annotations import ToolAnnotations
from knime_mcp.tools.program_call import ProgramCall
from knime_mcp.tools.tool import MCPTool

__all__ = ["program_of", "program_tools"]


def program_tools(programs: Sequence[ProgramSpec]) -> list[MCPTool]:
    """One tool per program, in order, sealed: a person configured them here, so they may run."""
    tools = []
    for program in programs:
        server = seal_spec(program.server)
        schema = program.schema
        tools.append(
            MCPTool(
                name=program.name,
                tool_name=program.name,
                description=program.description,
                input_schema=schema,
                parameter_schema=schema,
                annotations=_hints(program),
                server=server,
                program=ProgramCall(args=program.args),
            )
        )
    return tools


def program_of(tool: MCPTool) -> ProgramSpec:
    """The program a program tool's row runs (its seal is the pool's to check, not this function's)."""
    if tool.program is None:
        raise ConfigError(f"Tool {tool.name!r} is not a program tool.")
    return _program_of(tool)


@functools.lru_cache(maxsize=256)
def _program_of(tool: MCPTool) -> ProgramSpec:
    """Made once per row (an equal row is the same program): a run calls the same rows again and again, and making
    the program again, its checks included, cost about a tenth of a call to an instant program."""
    assert tool.program is not None
    server = tool.server
    return ProgramSpec(
        name=tool.name,
        command=shlex.split(server.target)[0] if server.target.strip() else "",
        args=tool.program.args,
        description=tool.description,
        input_schema=tool.input_schema or None,
        cwd=server.cwd,
        env=server.env,
        timeout=server.timeouts.call,
        max_output_bytes=server.max_response_bytes,
    )


def _hints(program: ProgramSpec) -> ToolAnnotations:
    """The program's declared hints as MCP reads them; none declared: the MCP defaults, unannotated."""
    if not program.annotations:
        return ToolAnnotations()
    return ToolAnnotations.from_sdk(mcp_types.ToolAnnotations.model_validate(dict(program.annotations)))
