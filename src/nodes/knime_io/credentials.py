"""KNIME I/O: the workflow's credentials and the person who signs in, as the nodes see them.

A node reads credentials by name in its own thread (KNIME's context belongs to it) and hands the core a lookup, so no
secret is stored in settings, specs or tables; an OAuth sign-in is shown to the person through the node's progress
message and the KNIME log.
"""

from __future__ import annotations

import logging
import queue
from urllib.parse import urlsplit

import knime.extension as knext

from knime_mcp.config import OAUTH_KINDS, CredentialLookup, ServerSpec
from knime_mcp.errors import ConfigError

__all__ = ["SignInNotice", "check_credentials", "credential_lookup", "forget_sign_in"]


def credential_lookup(ctx: knext.ConfigurationContext) -> CredentialLookup:
    """The workflow's credentials, read now in the node's own thread (KNIME's context belongs to it) for the core
    to resolve by name when it connects; nothing is stored in settings, specs or tables."""
    credentials: dict[str, tuple[str, str]] = {}
    for name in ctx.get_credential_names():
        credential = ctx.get_credentials(name)
        credentials[name] = (credential.username, credential.password)
    return credentials.__getitem__


def check_credentials(ctx: knext.ExecutionContext, names: set[str | None]) -> None:
    """Fail as a setting problem up front, rather than letting the model see one failed call per server."""
    missing = sorted(str(name) for name in names - set(ctx.get_credential_names()))
    if missing:
        raise ConfigError(
            f"The MCP tools need the credentials {', '.join(map(repr, missing))}, which are not available here.",
            hint="Connect the same credentials flow variables that the MCP Tool Provider used.",
        )


def forget_sign_in(spec: ServerSpec, credentials: CredentialLookup) -> None:
    """'Sign in again': delete the stored OAuth tokens of the server and client that ``spec`` names (a client
    that registered itself stays registered)."""
    from knime_mcp.auth import spec_token_store

    if spec.auth.kind in OAUTH_KINDS and spec.is_url:
        spec_token_store(spec, credentials).forget_tokens()


class SignInNotice:
    """Tells the person at KNIME Analytics Platform where to sign in: the node's progress message says "Waiting for
    sign-in in the browser: <host>" and the log has the address at WARNING, for when no browser opens.

    The core calls :meth:`show` from its event loop's thread, but KNIME's context belongs to the node's thread, so
    the address is handed over and reported in :meth:`cancelled`, which :func:`knime_mcp.mcp.sync.run_sync` polls there
    ten times a second; pass :meth:`cancelled` and :meth:`progress` to it instead of the context's own. A cancel
    cancels the run, and with it the core's wait for the browser."""

    def __init__(self, ctx: knext.ExecutionContext, logger: logging.Logger) -> None:
        self._ctx = ctx
        self._logger = logger
        self._addresses: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._fraction = 0.0

    def show(self, url: str) -> None:
        self._addresses.put(url)

    def progress(self, fraction: float, message: str) -> None:
        self._fraction = fraction
        self._ctx.set_progress(fraction, message)

    def cancelled(self) -> bool:
        while True:
            try:
                url = self._addresses.get_nowait()
            except queue.Empty:
                break
            host = _host(url)
            self._logger.warning("Sign in to %s in the browser; if none opened, open this address: %s", host, url)
            self._ctx.set_progress(self._fraction, f"Waiting for sign-in in the browser: {host}")
        return self._ctx.is_canceled()


def _host(url: str) -> str:
    parts = urlsplit(url)
    return parts.netloc.rpartition("@")[2] or url
