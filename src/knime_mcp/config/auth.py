"""Which authentication a server gets, and where its secret comes from: a frozen value that never holds a secret.

Part of :class:`~knime_mcp.config.spec.ServerSpec`; its own module because every sign-in (bearer and header tokens,
basic, query keys, the OAuth grants) adds its fields here, and the server's description should not grow with them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from knime_mcp.config.references import ENV_REF
from knime_mcp.errors import ConfigError

__all__ = ["OAUTH_KINDS", "AuthKind", "AuthRef"]

AuthKind = Literal["none", "bearer", "header", "basic", "query", "oauth", "oauth-client-credentials"]
OAUTH_KINDS = frozenset({"oauth", "oauth-client-credentials"})
"""Authentication by OAuth (:mod:`knime_mcp.auth`): the token comes from an authorization server, not a setting."""


@dataclass(frozen=True, kw_only=True)
class AuthRef:
    """Which authentication to send, and where its secret comes from (never the secret itself)."""

    kind: AuthKind = "none"

    credential: str | None = None
    """Name of a KNIME credential: its password is the token or secret, its user name the basic-auth user."""

    secret: str | None = None
    """An environment reference ``${VAR}`` holding the token or password, as an alternative to a credential."""

    username: str | None = None
    """Basic-auth user name when the secret comes from ``secret``; may be a ``${VAR}`` reference."""

    header: str | None = None
    """Header name for ``kind="header"``, e.g. ``X-API-Key``."""

    parameter: str | None = None
    """Query parameter name for ``kind="query"``, e.g. ``api_key``: an API key sent in the URL, which only HTTP
    tools send (:mod:`knime_mcp.http`). Left out of the JSON when None, so tables written before it read the same."""

    client_id: str | None = None
    """OAuth: the id of a client registered with the authorization server beforehand; for the client credentials
    grant it may come from the credential's user name instead. None: knime-mcp registers itself (RFC 7591)."""

    scope: str | None = None
    """OAuth: the scopes to ask for, space-separated: for client credentials, and for a sign-in where the server names
    none (the SDK asks for what the server's challenge or metadata names, as the MCP specification says)."""

    issuer: str | None = None
    """OAuth: the issuer of the authorization server, e.g. ``https://login.example.com``: the only one knime-mcp signs
    in at or sends the client secret to (:mod:`knime_mcp.auth.guard`). Left out of the JSON when None."""

    def __post_init__(self) -> None:
        if self.kind not in get_args(AuthKind):
            raise ConfigError(f"Unknown authentication kind {self.kind!r}; use one of {', '.join(get_args(AuthKind))}.")
        web = ("http://", "https://")
        if self.issuer is not None and (self.kind not in OAUTH_KINDS or not self.issuer.startswith(web)):
            raise ConfigError(
                "An authorization server (issuer) goes with OAuth only, and must be an http(s) URL.",
                hint="Give the issuer the authorization server's metadata names, e.g. https://login.example.com.",
            )
        if self.kind == "none":
            return
        if self.kind == "oauth" and self.credential is None and self.secret is None:
            return  # a public client: no secret
        if (self.credential is None) == (self.secret is None):
            raise ConfigError(
                f"Authentication {self.kind!r} needs exactly one secret source.",
                hint="Choose a KNIME credential, or give an environment reference such as ${API_TOKEN}.",
            )
        if self.secret is not None and not ENV_REF.fullmatch(self.secret):
            raise ConfigError(
                "A secret must be an environment reference such as ${API_TOKEN}, not a value.",
                hint="Store the secret in an environment variable or a KNIME credential; settings are saved in clear.",
            )
        if self.kind == "header" and not self.header:
            raise ConfigError("Authentication 'header' needs a header name, e.g. X-API-Key.")
        if (self.kind == "query") != bool(self.parameter):
            raise ConfigError(
                "Authentication 'query' needs a query parameter name, e.g. api_key."
                if self.kind == "query"
                else f"A query parameter name goes with authentication 'query' only, not {self.kind!r}."
            )
