"""How a program tool's arguments become its command line: the argument template after the program.

Layer: values, beside :mod:`knime_mcp.tools.http_operation`; a program tool's row holds it as an HTTP tool's row holds
its request. The program itself, its working folder and environment are the tool's server
(:attr:`knime_mcp.config.program.ProgramSpec.server`), so that a table's seal covers them as it covers an MCP server,
and a program from data is refused as a stdio server from data is (:func:`knime_mcp.net.urlguard.check_server`).

    ProgramCall(args=("-w", "{path}")).to_dict()   # {"args": ["-w", "{path}"]}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from knime_mcp.errors import ConfigError

__all__ = ["ProgramCall"]


@dataclass(frozen=True, kw_only=True)
class ProgramCall:
    """The arguments after the program, each one element of its command line (never split, never a shell's)."""

    args: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        """A table may hold anything here; what is wrong is named now, not in a run."""
        if not isinstance(self.args, tuple) or not all(isinstance(arg, str) for arg in self.args):
            raise ConfigError("The program's arguments are not a list of texts.")
        if nul := [arg for arg in self.args if "\0" in arg]:
            raise ConfigError(f"The program argument {nul[0]!r} holds a NUL character, which a command line cannot.")

    def to_dict(self) -> dict[str, Any]:
        return {"args": list(self.args)}

    @classmethod
    def from_dict(cls, data: object) -> ProgramCall:
        """The template as a table holds it; malformed entries are a ConfigError."""
        if not isinstance(data, Mapping) or not isinstance(args := data.get("args", []), list):
            raise ConfigError("The tool's program arguments are not a JSON object with a list of texts.")
        return cls(args=tuple(args))
