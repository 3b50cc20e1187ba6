"""What the nodes that talk to the server of their own settings share (the Tool Provider, the Resource Reader, the
Prompt node): the connection keywords their core call takes, and error handling per row."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import knime.extension as knext

from knime_mcp.config import ServerSpec
from knime_mcp.config.pasted import parse_pasted
from nodes._credentials import SignInNotice, credential_lookup, forget_sign_in
from nodes._settings import (
    AuthSettings,
    ServerSettings,
    TimeoutSettings,
    server_spec,
    timeout_limits,
    untrusted_address_hint,
    untrusted_hint,
)

if TYPE_CHECKING:
    from knime_mcp.calls.rows import OnError

__all__ = ["RowErrorOptions", "on_error", "pasted_connection", "pasted_servers", "server_connection"]


def server_connection(
    ctx: knext.ExecutionContext,
    server: ServerSettings,
    auth: AuthSettings,
    timeouts: TimeoutSettings,
    logger: logging.Logger,
) -> tuple[ServerSpec, dict[str, Any]]:
    """The server's spec, and the keywords a core run takes to reach it as a person chose it: the workflow's
    credentials, the sign-in handling (forgetting a stored sign-in first for *Sign in again*), cancel and progress
    through :class:`SignInNotice`, and the hint for an address that came from a flow variable. Raises ConfigError."""
    spec = server_spec(server, auth, timeouts)
    return spec, _connection(ctx, [spec], auth, untrusted_address_hint(ctx, server), logger)


def pasted_servers(text: str, timeouts: TimeoutSettings) -> dict[str, ServerSpec]:
    """The servers of a pasted MCP configuration by their keys, with the node's timeouts; raises the parser's
    ConfigError for a malformed configuration or one that holds a secret."""
    limits = timeout_limits(timeouts)
    return {key: replace(spec, timeouts=limits) for key, spec in parse_pasted(text).items()}


def pasted_connection(
    ctx: knext.ExecutionContext,
    text: str,
    server: ServerSettings,
    auth: AuthSettings,
    timeouts: TimeoutSettings,
    logger: logging.Logger,
) -> tuple[dict[str | None, ServerSpec], dict[str, Any]]:
    """:func:`server_connection` for the servers of a pasted configuration, which replaces the server settings: the
    credentials its ``${input:id}`` names are the workflow's, and a configuration set by a flow variable is data, as
    an address would be. Raises ConfigError."""
    specs: dict[str | None, ServerSpec] = dict(pasted_servers(text, timeouts))
    hint = untrusted_hint(
        ctx, (text,), trusted=server.trust_flow_variable, subject="The pasted configuration",
        switch="Trust a server address from a flow variable",
    )  # fmt: skip
    return specs, _connection(ctx, list(specs.values()), auth, hint, logger)


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


class RowErrorOptions(knext.EnumParameterOptions):
    FAIL = ("Fail", "Stop at the first row that fails, and fail the node with that row's error.")
    COLUMN = (
        "Error column",
        "Go through every row; a row that fails keeps its place, with its message in the 'Error' column.",
    )


def on_error(option: str) -> OnError:
    return "column" if option == RowErrorOptions.COLUMN.name else "fail"
