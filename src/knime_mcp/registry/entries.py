"""Entries of the MCP Registry (and of the shipped presets, which use the same format), read as data.

Layer: features (``registry``), on values only. An entry is the registry's ``server.json`` (schema 2025-09-29 and
later: ``packages``, ``remotes``, camelCase keys), wrapped as the API lists it (``{"server": {...}, "_meta": {...}}``)
or not; an older registry's snake_case keys (``registry_type``, ``environment_variables``, …) read the same. Nothing
in an entry is ever run or trusted here: :mod:`knime_mcp.registry.setup` turns a chosen entry into a server setup.

    entry = read_entry({"server": {"name": "io.github.x/y", "version": "1.0.0", "packages": [...]}}, source="...")
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from knime_mcp.errors import ConfigError

__all__ = ["MAX_TEXT_CHARS", "OFFICIAL_META", "OFFICIAL_REGISTRY", "RegistryEntry", "camel_keys", "read_entry"]

OFFICIAL_REGISTRY = "https://registry.modelcontextprotocol.io"
"""The official MCP Registry, the default everywhere a registry URL is a setting."""

OFFICIAL_META = "io.modelcontextprotocol.registry/official"
"""The registry's own metadata key of a listed entry (status, isLatest)."""

MAX_TEXT_CHARS = 500
"""The longest name, title, description or version kept from an entry; longer text is cut (the registry allows 100
characters of description, 200 of name)."""

_SNAKE = re.compile(r"_([a-z])")


def camel_keys(value: Any) -> Any:
    """``value`` with every dict key in camelCase (an older registry's ``is_required`` is ``isRequired``), except the
    keys of ``_meta`` and of an input's ``variables``, which are names, not fields."""
    if isinstance(value, list):
        return [camel_keys(item) for item in value]
    if not isinstance(value, dict):
        return value
    converted: dict[str, Any] = {}
    for key, item in value.items():
        if not isinstance(key, str):
            continue
        name = key if key.startswith("_") else _SNAKE.sub(lambda match: match.group(1).upper(), key)
        if name == "variables" and isinstance(item, dict):
            converted[name] = {str(var): camel_keys(spec) for var, spec in item.items()}
        else:
            converted[name] = item if name == "_meta" else camel_keys(item)
    return converted


def _text(value: Any) -> str:
    return value[:MAX_TEXT_CHARS] if isinstance(value, str) else ""


def _dicts(value: Any) -> tuple[dict[str, Any], ...]:
    return tuple(item for item in value if isinstance(item, dict)) if isinstance(value, list) else ()


@dataclass(frozen=True, kw_only=True)
class RegistryEntry:
    """One version of one server as a registry (or the presets) lists it; every field is the registry's word."""

    name: str
    """The registry's name, reverse-DNS (``io.github.user/server``); a preset's short name (``memory``)."""

    version: str
    title: str = ""
    description: str = ""
    packages: tuple[dict[str, Any], ...] = ()
    """The ways to run it locally (npm, PyPI, OCI, …), camelCase keys."""

    remotes: tuple[dict[str, Any], ...] = ()
    """The ways to reach it over the network (streamable-http, sse), camelCase keys."""

    source: str = "preset"
    """``preset``, or the URL of the registry that listed it."""

    status: str = "active"
    """The registry's lifecycle status: active, deprecated or deleted."""

    is_latest: bool = True
    website: str = ""
    repository: str = ""
    registry_name: str = field(default="", compare=False)
    """For a preset, the registry name of the same server, if it has one."""

    @property
    def is_preset(self) -> bool:
        return self.source == "preset"

    @property
    def label(self) -> str:
        """``name@version``: what to type to get this entry again."""
        return f"{self.name}@{self.version}"


def read_entry(data: Any, *, source: str) -> RegistryEntry:
    """The entry ``data`` describes, listed by ``source`` (``preset`` or a registry's URL); a ConfigError for data
    that is not an entry (no name or no version), naming neither, as both are the registry's text."""
    if not isinstance(data, dict):
        raise ConfigError(f"The registry at {source} sent a server entry that is not a JSON object.")
    data = camel_keys(data)
    server = data.get("server") if isinstance(data.get("server"), dict) else data
    meta = data.get("_meta") if isinstance(data.get("_meta"), dict) else server.get("_meta")
    official = meta.get(OFFICIAL_META) if isinstance(meta, dict) else None
    official = camel_keys(official) if isinstance(official, dict) else {}
    name, version = _text(server.get("name")), _text(server.get("version"))
    if not version and isinstance(server.get("versionDetail"), dict):  # the registry's first format (2025-07)
        version = _text(server["versionDetail"].get("version"))
    if not name or not version:
        raise ConfigError(f"The registry at {source} sent a server entry without a name or a version.")
    repository = server.get("repository")
    return RegistryEntry(
        name=name,
        version=version,
        title=_text(server.get("title")),
        description=_text(server.get("description")),
        packages=_dicts(server.get("packages")),
        remotes=_dicts(server.get("remotes")),
        source=source,
        status=_text(official.get("status") or server.get("status")) or "active",
        is_latest=official.get("isLatest", True) is not False,
        website=_text(server.get("websiteUrl")),
        repository=_text(repository.get("url")) if isinstance(repository, dict) else "",
        registry_name=_text(data.get("registryName")),
    )
