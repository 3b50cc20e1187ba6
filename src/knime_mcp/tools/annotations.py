"""A tool's behaviour hints and the facts a table's seal covers: what both the tool (:mod:`knime_mcp.tools.tool`)
and its table cell (:mod:`knime_mcp.tools.tool_cells`) are made of, so neither needs the other to hold them."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from functools import cache, cached_property
from json.encoder import encode_basestring_ascii as _quote
from typing import TYPE_CHECKING, Any

from pydantic_core import to_json

from knime_mcp.errors import ConfigError

if TYPE_CHECKING:
    import mcp_types

    from knime_mcp.tools.http_operation import HttpOperation
    from knime_mcp.tools.program_call import ProgramCall

__all__ = ["ToolAnnotations", "compact_json", "policy_facts"]


@dataclass(frozen=True, kw_only=True)
class ToolAnnotations:
    """Behaviour hints, with the MCP specification's defaults for hints a server leaves out."""

    read_only: bool = False
    destructive: bool = True
    idempotent: bool = False
    open_world: bool = True

    annotated: bool = False
    """Whether the server sent at least one behaviour hint. Without any, the values above are only the spec's
    defaults (a destructive tool), which most FastMCP and ``mcp`` 1.x servers leave every tool with."""

    def __post_init__(self) -> None:
        """A table may hold anything here; a hint such as ``"no"`` would count as true in the tool policy."""
        if wrong := [name for name in _HINTS if not isinstance(getattr(self, name), bool)]:
            raise ConfigError(f"The annotation {wrong[0]!r} is not true or false.")

    @cached_property
    def cell_json(self) -> str:
        """The annotations as a table's JSON cell holds them, made once per value (values are shared by the tools of
        a listing, :func:`_sdk_hints`)."""
        return json.dumps(asdict(self), separators=(",", ":"))

    @cached_property
    def hints_json(self) -> str:
        """The hints as :func:`policy_facts` holds them, byte for byte as ``json.dumps`` writes them: tables keep
        seals of these facts."""
        return "[" + ",".join("true" if getattr(self, hint) else "false" for hint in _HINTS) + "]"

    @property
    def retry_safe(self) -> bool:
        """Whether repeating a call cannot change more than the first call did."""
        return self.read_only or self.idempotent

    @property
    def concurrency_safe(self) -> bool:
        """Whether calls may overlap: a tool that only reads, or whose repeats change nothing and destroy nothing.
        Overlapping calls of a tool that writes can overwrite each other (a read-modify-write of one file)."""
        return self.read_only or (self.idempotent and not self.destructive)

    @classmethod
    def from_sdk(cls, hints: mcp_types.ToolAnnotations | None) -> ToolAnnotations:
        if hints is None:
            return _sdk_hints(None, None, None, None)
        return _sdk_hints(hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint, hints.open_world_hint)


@cache
def _sdk_hints(
    read_only: bool | None, destructive: bool | None, idempotent: bool | None, open_world: bool | None
) -> ToolAnnotations:
    """One shared value per combination of hints (the values are frozen): a server lists thousands of tools with
    a handful of combinations."""
    if read_only is None and destructive is None and idempotent is None and open_world is None:
        return ToolAnnotations()
    default = ToolAnnotations()
    read_only = _or(read_only, default.read_only)
    return ToolAnnotations(
        read_only=read_only,
        # The spec gives destructive/idempotent meaning only for tools that write.
        destructive=False if read_only else _or(destructive, default.destructive),
        idempotent=_or(idempotent, default.idempotent),
        open_world=_or(open_world, default.open_world),
        annotated=True,
    )


_HINTS = tuple(hint.name for hint in fields(ToolAnnotations))


def _or(value: bool | None, default: bool) -> bool:
    return default if value is None else value


def policy_facts(
    name: str, tool_name: str, annotations: ToolAnnotations, task_support: str, http: HttpOperation | None = None,
    program: ProgramCall | None = None,
) -> str:  # fmt: skip
    """The fields of a tool that decide whether it may be called, as JSON: what a table's seal covers besides the
    server, so that editing a sealed tool's name, annotations, HTTP request (a GET made a DELETE) or program
    arguments cannot get it past the destructive-tool block or run something else."""
    head = f"[{_quote(name)},{_quote(tool_name)},{annotations.hints_json},{_quote(task_support)}"
    if http is not None:
        return f"{head},{json.dumps(http.to_dict(), separators=(',', ':'))}]"
    if program is not None:
        return f"{head},{json.dumps({'program': program.to_dict()}, separators=(',', ':'))}]"
    return head + "]"


def compact_json(value: Any) -> str:
    """``value`` as compact JSON, several times faster than ``json.dumps``: a tools table holds thousands of
    schemas. Unlike ``json.dumps`` it keeps non-ASCII text as it is."""
    return to_json(value).decode()
