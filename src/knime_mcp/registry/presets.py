"""The curated servers shipped with the package (``presets.json``), for offline use and the KNIME dialogs.

Layer: features (``registry``). They are in the registry's own list format, so one converter
(:mod:`knime_mcp.registry.setup`) serves both; each is pinned to a version that exists on npm or PyPI.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

from knime_mcp.registry.entries import RegistryEntry, read_entry

__all__ = ["PRESET_NAMES", "preset", "presets"]


@cache
def presets() -> tuple[RegistryEntry, ...]:
    """Every preset, in the file's order."""
    text = resources.files(__package__).joinpath("presets.json").read_text(encoding="utf-8")
    return tuple(read_entry(item, source="preset") for item in json.loads(text)["servers"])


def preset(name: str) -> RegistryEntry | None:
    """The preset called ``name`` (``memory``, ``github``, …); None if there is none."""
    return next((entry for entry in presets() if entry.name == name), None)


PRESET_NAMES: tuple[str, ...] = tuple(entry.name for entry in presets())
"""The presets' names, for a dialog's choice list."""
