"""Command-line programs as tools (issue 37 §2): a person's programs as tools rows, and one call of one, run without
a shell.

Layer: wire, beside :mod:`knime_mcp.mcp` and :mod:`knime_mcp.http`. Import from here; the modules, bottom to top:

- :mod:`~knime_mcp.programs.arguments`: a call's arguments as the program's command line;
- :mod:`~knime_mcp.programs.spawn`: a program's process, started in a group of its own (on Linux awaited through a
  pidfd);
- :mod:`~knime_mcp.programs.runner`: one call (:func:`run_program`), its processes ended with it;
- :mod:`~knime_mcp.programs.tools`: programs as tools rows (:func:`program_tools`) and back (:func:`program_of`).

    tools = program_tools(programs_from_file("programs.json"))
    result = await run_program(program_of(tools[0]), {"path": "a.txt"})
"""

from __future__ import annotations

from knime_mcp.programs.arguments import argument_text, command_line
from knime_mcp.programs.runner import PASSED_ENVIRONMENT, run_program
from knime_mcp.programs.tools import program_of, program_tools

__all__ = ["PASSED_ENVIRONMENT", "argument_text", "command_line", "program_of", "program_tools", "run_program"]
