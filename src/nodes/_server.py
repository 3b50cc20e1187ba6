"""What the nodes that talk to the server of their own settings share (the Tool Provider, the Resource Reader, the
Prompt node): the connection keywords their core call takes, and error handling per row."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import knime.extension as knext

from knime_mcp.config import ServerSpec
from nodes._credentials import SignInNotice, credential_lookup, forget_sign_in
from nodes._settings import AuthSettings, ServerSettings, TimeoutSettings, server_spec, untrusted_address_hint

if TYPE_CHECKING:
    from knime_mcp.calls.rows import OnError

__all__ = ["RowErrorOptions", "on_error", "server_connection"]


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
    notice = SignInNotice(ctx, logger)
    spec = server_spec(server, auth, timeouts)
    credentials = credential_lookup(ctx)
    if auth.sign_in_again:
        forget_sign_in(spec, credentials)
    return spec, {
        "credentials": credentials,
        "cancelled": notice.cancelled,
        "progress": notice.progress,
        "untrusted_hint": untrusted_address_hint(ctx, server),
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
