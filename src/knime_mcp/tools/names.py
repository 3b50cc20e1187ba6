"""Tool-list shaping: pure functions that filter, prefix, sanitise and de-duplicate tool names.

Sits between the client (which lists a server's tools) and the provider table or the agent (which need names a model
accepts, unique across everything offered). Each function takes and returns a list and can be tested on its own;
they compose left to right::

    tools = ensure_unique(sanitize_names(prefix_tools(filter_tools(tools, include, exclude), prefix)))

Only ``name`` changes; ``tool_name`` keeps the server's own name for the call. A collision is resolved with a
numeric suffix and a note rather than an error, because a provider must always produce a table of unique names and
the same order of tools always gives the same names. :class:`ToolNameMap` applies the same naming rules to any
(name, payload) pairs, for an agent that offers tools from several servers and from the workflow together.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Generic, TypeVar

from knime_mcp.errors import ConfigError, ToolCallError
from knime_mcp.tools.tool import MCPTool

__all__ = [
    "MAX_NAME_LENGTH",
    "RENAMED_HINT",
    "ToolNameMap",
    "compile_name_pattern",
    "ensure_unique",
    "filter_tools",
    "prefix_tools",
    "sanitize_names",
]

MAX_NAME_LENGTH = 64
"""The longest tool name the major LLM providers accept."""

_VALID_NAME = re.compile(rf"^[a-zA-Z0-9_-]{{1,{MAX_NAME_LENGTH}}}$")
_INVALID_RUN = re.compile(r"[^a-zA-Z0-9_-]+")
_HASH_LENGTH = 8

T = TypeVar("T")


def filter_tools(tools: Iterable[MCPTool], include: str | None = None, exclude: str | None = None) -> list[MCPTool]:
    """The tools whose name matches ``include`` (anywhere, like :func:`re.search`) and does not match ``exclude``.

    An empty pattern means no filter, as a cleared setting in a dialog should.
    """
    keep = compile_name_pattern(include, "include pattern")
    drop = compile_name_pattern(exclude, "exclude pattern")
    return [
        tool
        for tool in tools
        if (keep is None or keep.search(tool.name)) and (drop is None or not drop.search(tool.name))
    ]


def compile_name_pattern(pattern: str | None, setting: str) -> re.Pattern[str] | None:
    """A tool-name pattern of a setting; an empty one means no rule, as a cleared setting in a dialog should."""
    if not pattern:
        return None
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ConfigError(
            f"The {setting} {pattern!r} is not a valid regular expression: {exc}.",
            hint="Use a Python regular expression, e.g. ^get_ or search|fetch; escape special characters with \\.",
        ) from exc


def prefix_tools(tools: Iterable[MCPTool], prefix: str | None) -> list[MCPTool]:
    """The tools with ``name`` prefixed by ``prefix`` and one underscore (``github`` and ``github_`` both give
    ``github_search``); ``tool_name`` is kept for the call."""
    if not prefix:
        return list(tools)
    stem = prefix.rstrip("_") + "_"
    return [tool.with_changes(name=stem + tool.name) for tool in tools]


def sanitize_names(tools: Iterable[MCPTool]) -> list[MCPTool]:
    """The tools with every ``name`` matching ``^[a-zA-Z0-9_-]{1,64}$``; each changed name gets a note."""
    result = []
    for tool in tools:
        name = _sanitize(tool.name)
        if name == tool.name:
            result.append(tool)
        else:
            note = f"name {tool.name!r} changed to {name!r}: models accept only letters, digits, _ and -, at most 64"
            result.append(tool.with_changes(name=name, notes=(*tool.notes, note)))
    return result


RENAMED_HINT = "Set a name prefix per server to choose distinct names."
"""How each note on a tool renamed for a clash ends."""


def ensure_unique(tools: Iterable[MCPTool]) -> list[MCPTool]:
    """The tools with unique names: a repeated name gets ``_2``, ``_3``… in list order, with a note naming both
    tools. Deterministic, so the same listing always gives the same names."""
    tools = list(tools)
    result = []
    for tool, (name, first) in zip(tools, _dedupe([tool.name for tool in tools]), strict=True):
        if first is None:
            result.append(tool)
            continue
        other = tools[first]
        note = (
            f"name {tool.name!r} of tool {tool.tool_name!r} of {tool.server.display_name} is also used by tool "
            f"{other.tool_name!r} of {other.server.display_name}; renamed to {name!r}. {RENAMED_HINT}"
        )
        result.append(tool.with_changes(name=name, notes=(*tool.notes, note)))
    return result


def _sanitize(name: str) -> str:
    """A provider-safe name: accents stripped, other invalid runs become ``_``, long names end in a stable hash."""
    if _VALID_NAME.match(name):
        return name
    decomposed = unicodedata.normalize("NFKD", name)
    ascii_name = "".join(char for char in decomposed if not unicodedata.combining(char))
    cleaned = _INVALID_RUN.sub("_", ascii_name).strip("_")
    if not cleaned:
        return f"tool_{_digest(name)}"
    if len(cleaned) > MAX_NAME_LENGTH:
        cleaned = f"{cleaned[: MAX_NAME_LENGTH - _HASH_LENGTH - 1]}_{_digest(name)}"
    return cleaned


def _digest(name: str) -> str:
    """Eight hex digits that are the same in every run, so a shortened name stays stable."""
    return hashlib.blake2s(name.encode(), digest_size=_HASH_LENGTH // 2).hexdigest()


def _dedupe(names: Sequence[str]) -> list[tuple[str, int | None]]:
    """Each name made unique, with the index of the entry that kept it (None when unchanged).

    A name used only once never changes, even when it looks like a suffixed one (``a_2``).
    """
    originals = set(names)
    holders: dict[str, int] = {}
    result: list[tuple[str, int | None]] = []
    for index, name in enumerate(names):
        if name not in holders:
            holders[name] = index
            result.append((name, None))
            continue
        number = 2
        while (candidate := _suffixed(name, number)) in holders or candidate in originals:
            number += 1
        holders[candidate] = index
        result.append((candidate, holders[name]))
    return result


def _suffixed(name: str, number: int) -> str:
    suffix = f"_{number}"
    return name[: MAX_NAME_LENGTH - len(suffix)] + suffix


class ToolNameMap(Generic[T]):
    """Model-facing names for tools of any kind, and the exact way back from a name the model calls.

    names = ToolNameMap([(tool.name, tool) for tool in mcp_tools] + [("Row Filter", workflow_tool)])
    offered = [describe(name, tool) for name, tool in names.items()]
    tool = names.resolve(call.name)
    """

    def __init__(self, entries: Iterable[tuple[str, T]]) -> None:
        pairs = list(entries)
        unique = _dedupe([_sanitize(name) for name, _ in pairs])
        self._entries: dict[str, tuple[str, T]] = {
            model_name: pair for (model_name, _), pair in zip(unique, pairs, strict=True)
        }

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, model_name: object) -> bool:
        return model_name in self._entries

    @property
    def names(self) -> list[str]:
        """The model-facing names, in the order the entries were given."""
        return list(self._entries)

    def items(self) -> list[tuple[str, T]]:
        """``(model-facing name, payload)`` pairs, in the order the entries were given."""
        return [(model_name, payload) for model_name, (_, payload) in self._entries.items()]

    def resolve(self, model_name: str) -> T:
        """The payload offered as ``model_name``; an unknown name is a tool error a model can correct."""
        return self._entry(model_name)[1]

    def original_name(self, model_name: str) -> str:
        """The name the entry was given before sanitising and de-duplication."""
        return self._entry(model_name)[0]

    def _entry(self, model_name: str) -> tuple[str, T]:
        try:
            return self._entries[model_name]
        except KeyError:
            raise ToolCallError(
                f"There is no tool named {model_name!r}.",
                hint=f"Call one of the offered tools: {', '.join(self._entries) or '(none)'}.",
            ) from None
