"""Which authentication a server gets, and where its secret comes from: a frozen value that never holds a secret.

Part of :class:`~knime_mcp.config.spec.ServerSpec`; its own module because every sign-in (bearer and header tokens,
basic, query keys, the OAuth grants) adds its fields here, and the server's description should not grow with them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal, get_args

from knime_mcp.config.references import ENV_REF
from knime_mcp.errors import ConfigError
from knime_mcp.redaction import CREDENTIAL_VALUE

__all__ = ["ASSERTION_KINDS", "OAUTH_KINDS", "AuthKind", "AuthRef", "ClientAuth"]

ClientAuth = Literal["client_secret", "private_key_jwt"]
AuthKind = Literal[
    "none",
    "bearer",
    "header",
    "basic",
    "query",
    "oauth",
    "oauth-client-credentials",
    "oauth-workload-identity",
    "oauth-id-jag",
]
ASSERTION_KINDS = frozenset({"oauth-workload-identity", "oauth-id-jag"})
"""OAuth by the JWT bearer grant (RFC 7523, :mod:`knime_mcp.auth.jwt_bearer`): the assertion is a platform's token
from a file (workload identity) or an enterprise identity provider's ID-JAG; a client secret is optional."""
OAUTH_KINDS = frozenset({"oauth", "oauth-client-credentials", *ASSERTION_KINDS})
"""Authentication by OAuth (:mod:`knime_mcp.auth`): the token comes from an authorization server, not a setting."""
_LATER_FIELDS = (
    "parameter", "issuer", "client_auth", "dpop", "token_file", "assertion", "idp_token_endpoint", "idp_client_id",
    "idp_secret",
)  # fmt: skip
"""Fields added after tables were first written: left out of the JSON when None, so those tables read (and are
sealed) the same."""


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

    client_auth: ClientAuth | None = None
    """OAuth client credentials: how the client proves who it is. None or ``client_secret``: the secret;
    ``private_key_jwt``: an assertion signed with a private key (RFC 7523), the secret source then holding the key's
    PEM (a ``${VAR}`` may name a PEM file instead). Left out of the JSON when None."""

    dpop: Literal["off"] | None = None
    """OAuth: ``off`` never binds tokens with DPoP (RFC 9449); None binds them where the authorization server offers
    it. Left out of the JSON when None."""

    token_file: str | None = None
    """OAuth workload identity: the file the platform writes its identity token (a JWT) to, a path or a ``${VAR}``
    holding one (e.g. ``${AZURE_FEDERATED_TOKEN_FILE}``); read again for every token request. Left out of the JSON
    when None."""

    assertion: str | None = None
    """OAuth ID-JAG: where the enterprise identity provider's identity assertion (an ID token) comes from: a
    ``${VAR}`` reference, or else the name of a KNIME credential whose password holds it. Left out of the JSON when
    None."""

    idp_token_endpoint: str | None = None
    """OAuth ID-JAG: the identity provider's token endpoint, where the assertion is exchanged for an ID-JAG
    (RFC 8693). Left out of the JSON when None."""

    idp_client_id: str | None = None
    """OAuth ID-JAG: knime-mcp's client id at the identity provider, if it asks for one. Left out of the JSON when
    None."""

    idp_secret: str | None = None
    """OAuth ID-JAG: the client secret at the identity provider, if it asks for one: a ``${VAR}`` reference, or else
    the name of a KNIME credential whose password holds it. Left out of the JSON when None."""

    def to_dict(self) -> dict[str, Any]:
        """Every field, except the later ones (:data:`_LATER_FIELDS`) that are None."""
        return {name: value for name, value in asdict(self).items() if value is not None or name not in _LATER_FIELDS}

    def __post_init__(self) -> None:
        if self.kind not in get_args(AuthKind):
            raise ConfigError(f"Unknown authentication kind {self.kind!r}; use one of {', '.join(get_args(AuthKind))}.")
        web = ("http://", "https://")
        if self.issuer is not None and (self.kind not in OAUTH_KINDS or not self.issuer.startswith(web)):
            raise ConfigError(
                "An authorization server (issuer) goes with OAuth only, and must be an http(s) URL.",
                hint="Give the issuer the authorization server's metadata names, e.g. https://login.example.com.",
            )
        self._check_client_auth()
        self._check_assertion_grant()
        if self.kind == "none":
            return
        if self.kind in ("oauth", *ASSERTION_KINDS) and self.credential is None and self.secret is None:
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

    def _check_client_auth(self) -> None:
        """A private key goes with the client credentials grant only; DPoP can only be switched off, for OAuth."""
        if self.client_auth not in (None, *get_args(ClientAuth)):
            raise ConfigError(
                f"Unknown client authentication {self.client_auth!r}; use one of {', '.join(get_args(ClientAuth))}."
            )
        if self.client_auth == "private_key_jwt" and self.kind != "oauth-client-credentials":
            raise ConfigError(
                "A private key (private_key_jwt) goes with the OAuth client credentials grant only.",
                hint="Choose authentication 'oauth-client-credentials', or the client secret.",
            )
        if self.dpop not in (None, "off") or (self.dpop is not None and self.kind not in OAUTH_KINDS):
            raise ConfigError("DPoP may only be switched 'off', and for OAuth only.")

    def _check_assertion_grant(self) -> None:
        """Each JWT bearer grant has its source of the assertion, and only it."""
        workload, id_jag = self.kind == "oauth-workload-identity", self.kind == "oauth-id-jag"
        if workload != bool(self.token_file):
            raise ConfigError(
                "Workload identity needs a token file." if workload else "A token file goes with workload identity.",
                hint="Give the file the platform writes its identity token to, e.g. ${AZURE_FEDERATED_TOKEN_FILE}.",
            )
        idp = (self.assertion, self.idp_token_endpoint, self.idp_client_id, self.idp_secret)
        if not id_jag and any(value is not None for value in idp):
            raise ConfigError("An identity provider's settings go with the ID-JAG grant (oauth-id-jag) only.")
        if id_jag and not (self.assertion and (self.idp_token_endpoint or "").startswith(("http://", "https://"))):
            raise ConfigError(
                "The ID-JAG grant needs the identity assertion's source and the identity provider's token endpoint.",
                hint="Name a KNIME credential or ${VAR} holding the ID token, and the token endpoint's http(s) URL.",
            )
        for source in (self.assertion, self.idp_secret):
            if (
                source is not None
                and ("${" in source or CREDENTIAL_VALUE.search(source))
                and not ENV_REF.fullmatch(source)
            ):
                raise ConfigError(
                    "An identity assertion or secret must be named by a ${VAR} reference or a KNIME credential, not "
                    "written out.",
                    hint="Store it in an environment variable or a KNIME credential; settings are saved in clear.",
                )
