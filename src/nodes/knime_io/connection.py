"""KNIME I/O: what the nodes that talk to the servers of their own settings share (the Tool Provider, the Resource
Reader, the Prompt node): the servers of the settings or the pasted configuration, and the connection keywords their
core call takes (credentials, sign-in, progress and cancel)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import knime.extension as knext

from knime_mcp.config import ServerSpec
from knime_mcp.config.pasted import input_ids, parse_pasted
from knime_mcp.errors import ConfigError
from nodes.knime_io.credentials import SignInNotice, credential_lookup, forget_sign_in
from nodes.knime_io.warnings import warn_if_insecure
from nodes.parameters.auth import AuthSettings
from nodes.parameters.catalog import CatalogOptions, CatalogSettings, catalog_hint, catalog_spec
from nodes.parameters.server import TRUST_SERVER, ServerSettings, server_spec, untrusted_address_hint, untrusted_hint
from nodes.parameters.timeouts import TimeoutSettings, timeout_limits
from nodes.parameters.tls import TlsGroup, tls_settings

__all__ = ["check_servers", "chosen_connection", "pasted_connection", "pasted_servers", "server_connection"]


def server_connection(
    ctx: knext.ExecutionContext,
    server: ServerSettings,
    auth: AuthSettings,
    timeouts: TimeoutSettings,
    logger: logging.Logger,
    catalog: CatalogSettings | None = None,
) -> tuple[ServerSpec, dict[str, Any]]:
    """The server's spec, and the keywords a core run takes to reach it as a person chose it: the workflow's
    credentials, the sign-in handling (forgetting a stored sign-in first for *Sign in again*), cancel and progress
    through :class:`SignInNotice`, and the hint for an address that came from a flow variable. ``catalog``: the
    Tool Provider's *Server from the catalog*, which, when chosen, gives the server. Raises ConfigError."""
    chosen = None if catalog is None else catalog_spec(catalog, server, auth, timeouts, fetch=True)
    if chosen is not None and catalog is not None:
        return chosen, _connection(ctx, [chosen], auth, catalog_hint(ctx, catalog, server), logger)
    spec = server_spec(server, auth, timeouts)
    return spec, _connection(ctx, [spec], auth, untrusted_address_hint(ctx, server), logger)


def pasted_servers(
    text: str, timeouts: TimeoutSettings, tls: TlsGroup, key: str | None = None
) -> dict[str, ServerSpec]:
    """The servers of a pasted MCP configuration by their keys, with the node's timeouts, and its TLS settings for
    the https ones (a person set both); only the one ``key`` names unless it is None ("": the only one). Raises the
    parser's ConfigError for a malformed configuration or one that holds a secret, and a ConfigError listing the
    keys when ``key`` picks none."""
    limits, secure = timeout_limits(timeouts), tls_settings(tls)
    specs = {
        name: replace(spec, timeouts=limits, tls=secure if spec.target.startswith("https://") else spec.tls)
        for name, spec in parse_pasted(text).items()
    }
    if key is None or (not key and len(specs) == 1):
        return specs
    if key not in specs:
        keys = ", ".join(map(repr, specs))
        raise ConfigError(
            f"The pasted configuration has no server {key!r}." if key else
            f"The pasted configuration describes {len(specs)} servers; this node uses one.",
            hint=f"Enter the key of one of its servers as the 'Server key': {keys}.",
        )  # fmt: skip
    return {key: specs[key]}


def pasted_connection(
    ctx: knext.ExecutionContext,
    text: str,
    server: ServerSettings,
    auth: AuthSettings,
    timeouts: TimeoutSettings,
    logger: logging.Logger,
    key: str | None = None,
) -> tuple[dict[str | None, ServerSpec], dict[str, Any]]:
    """:func:`server_connection` for the servers of a pasted configuration (those :func:`pasted_servers` picks by
    ``key``), which replaces the server settings: the credentials its ``${input:id}`` names are the workflow's, and a
    configuration set by a flow variable is data, as an address would be. Raises ConfigError."""
    specs: dict[str | None, ServerSpec] = dict(pasted_servers(text, timeouts, server.tls, key))
    hint = _pasted_hint(ctx, text, server)
    _credentials_used(specs, hint)
    return specs, _connection(ctx, list(specs.values()), auth, hint, logger)


def _pasted_hint(ctx: knext.ConfigurationContext, text: str, server: ServerSettings) -> str | None:
    """For a pasted configuration set by an untrusted flow variable, which makes it data, the hint on how to trust
    it; None for one a person pasted."""
    return untrusted_hint(
        ctx, (text,), trusted=server.trust_flow_variable, subject="The pasted configuration",
        switch=TRUST_SERVER,
    )  # fmt: skip


def _credentials_used(specs: Mapping[str | None, ServerSpec], hint: str | None) -> str | None:
    """The warning naming the KNIME credentials the servers' ``${input:ID}`` bind (None without any); a
    ConfigError when the configuration is data (``hint``), which may not choose a credential to receive."""
    used = {name: ids for name, spec in specs.items() if (ids := input_ids(spec))}
    if not used:
        return None
    named = "; ".join(f"{', '.join(map(repr, ids))} (server {name!r})" for name, ids in used.items())
    if hint is not None:
        raise ConfigError(
            f"The pasted configuration names the KNIME credentials {named} as inputs; a configuration taken from "
            "data may not choose which credentials it gets.",
            hint=hint,
        )
    return f"The pasted configuration sends the KNIME credentials {named} (its ${{input:ID}} entries)."


def chosen_connection(
    ctx: knext.ExecutionContext,
    pasted: str,
    key: str,
    server: ServerSettings,
    auth: AuthSettings,
    timeouts: TimeoutSettings,
    logger: logging.Logger,
) -> tuple[ServerSpec, dict[str, Any]]:
    """:func:`server_connection` for a node that works on one server: the pasted configuration's server ``key``
    picks (:func:`pasted_servers`), or else the server settings' one. Raises ConfigError."""
    if not pasted.strip():
        return server_connection(ctx, server, auth, timeouts, logger)
    specs, connection = pasted_connection(ctx, pasted, server, auth, timeouts, logger, key)
    (spec,) = specs.values()
    return spec, connection


def check_servers(
    ctx: knext.ConfigurationContext,
    pasted: str,
    key: str | None,
    server: ServerSettings,
    auth: AuthSettings,
    timeouts: TimeoutSettings,
    catalog: CatalogSettings | None = None,
) -> None:
    """The configure-time check of the server settings or the pasted configuration (its servers ``key`` picks, see
    :func:`pasted_servers`), or of the *Server from the catalog*, without connecting: raises ConfigError. The node's
    warning names the KNIME credentials a pasted configuration's inputs send."""
    if catalog is not None and catalog.source != CatalogOptions.NONE.name:
        catalog_spec(catalog, server, auth, timeouts, fetch=False)
    elif pasted.strip():
        specs = pasted_servers(pasted, timeouts, server.tls, key)
        if warning := _credentials_used(dict(specs), _pasted_hint(ctx, pasted, server)):
            ctx.set_warning(warning)
    else:
        server_spec(server, auth, timeouts)


def _connection(
    ctx: knext.ExecutionContext,
    specs: Sequence[ServerSpec],
    auth: AuthSettings,
    hint: str | None,
    logger: logging.Logger,
) -> dict[str, Any]:
    """The keywords a core run takes to reach ``specs`` (see :func:`server_connection`)."""
    notice = SignInNotice(ctx, logger)
    credentials = credential_lookup(ctx)
    warn_if_insecure(ctx, specs)
    if auth.sign_in_again:
        for spec in specs:
            forget_sign_in(spec, credentials)
    return {
        "credentials": credentials,
        "cancelled": notice.cancelled,
        "progress": notice.progress,
        "untrusted_hint": hint,
        "show_sign_in": notice.show if auth.browser_sign_in else None,
    }
