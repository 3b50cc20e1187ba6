"""A tool's MCP App as its ``_meta`` names it: the ``ui://`` resource that shows its results, and whether only that
app may call it.

Layer: values, used by :meth:`knime_mcp.tools.tool.MCPTool.from_sdk`. The MCP Apps extension (ext-apps 2.0) puts the
link in ``_meta.ui.resourceUri``; servers written before it use the flat key ``_meta["ui/resourceUri"]``, which is
still read. ``_meta.ui.visibility`` lists who may call the tool: ``["model", "app"]`` when not given; without
``"model"`` the tool is its app's alone and is never offered to a model.

    link = app_link(tool.meta, tool.name)
    link.uri, link.only, link.note
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

__all__ = ["AppLink", "app_link"]


class AppLink(NamedTuple):
    """What a tool's ``_meta`` says of its app."""

    uri: str | None
    """The app's ``ui://`` resource; None when the tool has none (or names something that is no app)."""
    only: bool
    """True when only the app may call the tool: a model is never offered it."""
    note: str | None
    """Why a link the tool gives was not taken (a URI that is no ``ui://`` one), for the tool's notes."""


def app_link(meta: Mapping[str, Any] | None, tool_name: str) -> AppLink:
    """The app that ``meta`` (a tool's ``_meta``) names."""
    if not meta:
        return _NO_LINK
    ui = meta.get("ui")
    ui = ui if isinstance(ui, Mapping) else {}
    uri = ui.get("resourceUri") or meta.get("ui/resourceUri")
    visibility = ui.get("visibility")
    only = isinstance(visibility, list) and "model" not in visibility
    if uri is None:
        return AppLink(None, only, None)
    if isinstance(uri, str) and uri.startswith("ui://"):
        return AppLink(uri, only, None)
    note = f"Tool {tool_name!r} names an app at {repr(uri)[:120]}, which is not a ui:// resource; it has no app."
    return AppLink(None, only, note)


_NO_LINK = AppLink(None, False, None)
