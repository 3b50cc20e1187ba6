"""Parameters: the MCP Tool Provider's *Server from the catalog* (a preset shipped with the extension, or an MCP
Registry server at a pinned version) and its translation into the core's ServerSpec.

The entry fills the server's address (its pinned package command or remote URL); the *MCP server* group's
environment and header lines give the values of the inputs the entry declares (a secret as ``${VARIABLE}`` or a
credential's ``${input:ID}``), and its authentication, timeouts, folders and TLS settings apply as to a server
typed in. A registry entry is read when the node executes; configure checks the settings without a network.
"""

from __future__ import annotations

from dataclasses import replace

import knime.extension as knext

from knime_mcp.config import ServerSpec, TlsSettings
from knime_mcp.errors import ConfigError
from knime_mcp.registry.entries import OFFICIAL_REGISTRY
from knime_mcp.registry.presets import PRESET_NAMES
from knime_mcp.registry.setup import ServerSetup
from nodes.parameters.auth import AuthSettings, auth_ref
from nodes.parameters.server import TRUST_SERVER, ServerSettings, setting_pairs, untrusted_hint
from nodes.parameters.timeouts import TimeoutSettings, timeout_limits
from nodes.parameters.tls import tls_settings

__all__ = ["CatalogOptions", "CatalogSettings", "catalog_hint", "catalog_spec"]


class CatalogOptions(knext.EnumParameterOptions):
    NONE = ("None", "Use the server settings below (or the pasted configuration).")
    PRESET = ("Preset", "A server of the curated list shipped with this extension, pinned to a version.")
    REGISTRY = ("MCP Registry", "A server of an MCP Registry, by its name and version.")


_ENVIRONMENT = "Environment (stdio)"
_HEADERS = "Extra HTTP headers"
_SETTING = {"environment variable": _ENVIRONMENT, "header": _HEADERS}
"""The setting where each kind of input is entered (an argument's value too is an environment line)."""
_PRESET = [CatalogOptions.PRESET.name]
_REGISTRY = [CatalogOptions.REGISTRY.name]


@knext.parameter_group(label="Server from the catalog", since_version="0.5.0")
class CatalogSettings:
    """A server chosen from the presets or an MCP Registry instead of typed in."""

    source = knext.EnumParameter(
        "Server from the catalog",
        "None: the server settings below. Preset: a server of the curated list shipped with this extension. MCP "
        "Registry: a server of the registry by its name and version. The chosen entry's package (npx, uvx or "
        "docker, pinned to its version) or remote URL replaces the Server setting.",
        CatalogOptions.NONE.name,
        CatalogOptions,
        since_version="0.5.0",
    )
    preset = knext.StringParameter(
        "Preset",
        "The preset: filesystem, memory, fetch, git, GitHub, Postgres, Slack, time, sequential thinking, everything "
        "and the MCP Apps examples, each pinned to a version.",
        PRESET_NAMES[0],
        enum=list(PRESET_NAMES),
        since_version="0.5.0",
    ).rule(knext.OneOf(source, _PRESET), knext.Effect.SHOW)
    name = knext.StringParameter(
        "Registry server name",
        "The server's name in the registry, e.g. io.github.user/weather ('knime-mcp servers search WORD' finds it).",
        "",
        since_version="0.5.0",
    ).rule(knext.OneOf(source, _REGISTRY), knext.Effect.SHOW)
    version = knext.StringParameter(
        "Registry server version",
        "The version to run, e.g. 1.0.2: required and kept, so that the workflow runs the same server next year.",
        "",
        since_version="0.5.0",
    ).rule(knext.OneOf(source, _REGISTRY), knext.Effect.SHOW)
    registry_url = knext.StringParameter(
        "Registry URL",
        f"The MCP Registry to read (an organisation's own, say); default: the official one, {OFFICIAL_REGISTRY}.",
        OFFICIAL_REGISTRY,
        since_version="0.5.0",
        is_advanced=True,
    ).rule(knext.OneOf(source, _REGISTRY), knext.Effect.SHOW)


def catalog_hint(ctx: knext.ConfigurationContext, catalog: CatalogSettings, server: ServerSettings) -> str | None:
    """For a catalog choice set by an untrusted flow variable, which makes it data, the hint on how to trust it."""
    if catalog.source == CatalogOptions.NONE.name:
        return None
    return untrusted_hint(
        ctx,
        (catalog.preset, catalog.name, catalog.version, catalog.registry_url),
        trusted=server.trust_flow_variable,
        subject="The server from the catalog",
        switch=TRUST_SERVER,
    )


def catalog_spec(
    catalog: CatalogSettings, server: ServerSettings, auth: AuthSettings, timeouts: TimeoutSettings, *, fetch: bool
) -> ServerSpec | None:
    """The spec of the catalog's server, None when none is chosen; ``fetch``: read a registry entry (execute), else
    only check its settings (configure, None). A ConfigError names a missing input by its name."""
    from knime_mcp.mcp.sync import run_sync
    from knime_mcp.registry.catalog import resolve_server
    from knime_mcp.registry.presets import preset
    from knime_mcp.registry.setup import server_setup

    if catalog.source == CatalogOptions.NONE.name:
        return None
    env = setting_pairs(server.environment, "=", _ENVIRONMENT)
    headers = setting_pairs(server.headers, ":", _HEADERS)
    values = {**env, **headers}
    if catalog.source == CatalogOptions.PRESET.name:
        entry = preset(catalog.preset)
        if entry is None:
            raise ConfigError(f"There is no preset {catalog.preset!r}.", hint="Choose one of the list.")
        setup = server_setup(entry, values)
    elif not catalog.name.strip() or not catalog.version.strip():
        raise ConfigError(
            "A server from the MCP Registry needs its name and its version.",
            hint="Enter both, e.g. io.github.user/weather and 1.0.2: the version is kept so the workflow runs the "
            "same server later.",
        )
    elif not fetch:
        return None
    else:
        name, version, url = catalog.name.strip(), catalog.version.strip(), catalog.registry_url.strip()
        setup = run_sync(lambda: resolve_server(name, version, values, registry_url=url or OFFICIAL_REGISTRY))
    _check_missing(setup)
    spec = setup.spec(credentials=True)
    declared = {item.name for item in setup.inputs}
    extra_env = {key: value for key, value in env.items() if key not in declared}  # the lines no input names
    extra_headers = {key: value for key, value in headers.items() if key not in declared}
    return replace(
        spec,
        env=spec.env if spec.is_url else {**spec.env, **extra_env},
        headers={**spec.headers, **extra_headers} if spec.is_url else spec.headers,
        auth=spec.auth if spec.auth.kind != "none" else auth_ref(auth),
        timeouts=timeout_limits(timeouts),
        roots=tuple(line.strip() for line in server.roots.splitlines() if line.strip()),
        tls=tls_settings(server.tls) if spec.target.startswith("https://") else TlsSettings(),
    )


def _check_missing(setup: ServerSetup) -> None:
    """The required inputs the settings give no value for, by name and where to enter each."""
    if not setup.missing:
        return
    said = [
        f"{item.name} ({item.kind}{', secret' if item.secret else ''}; in '{_SETTING.get(item.kind, _ENVIRONMENT)}')"
        for item in setup.inputs
        if item.name in setup.missing
    ]
    raise ConfigError(
        f"The server {setup.entry.label} needs {', '.join(said)}.",
        hint="Enter each as a NAME=value line (a header as 'Name: value'); a secret as ${VARIABLE} or "
        "${input:CREDENTIAL}, the password of a KNIME credential.",
    )
