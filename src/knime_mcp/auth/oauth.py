"""OAuth for MCP servers, on the SDK's own client (:mod:`mcp.client.auth`): which of its providers a server gets.

Discovery (``WWW-Authenticate``, RFC 9728 protected resource metadata, RFC 8414 / OpenID Connect discovery), dynamic
client registration, PKCE, ``state``, the ``resource`` parameter, refresh and scope step-up are the SDK's; this
module picks the grant, the client identity and the token store, and says what to do when no person can sign in.

    auth = oauth_auth("https://mcp.example.com/mcp", OAuthClient(), sign_in=BrowserSignIn(server, show=print))
    httpx2.AsyncClient(auth=auth)
"""

from __future__ import annotations

import time
import warnings
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

import httpx2
import mcp.client.auth.oauth2
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.auth.utils import is_valid_client_metadata_url, union_scopes
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthMetadata

from knime_mcp.auth.assertion_grants import assertion_grant, assertion_store
from knime_mcp.auth.dpop import OAuthFlow
from knime_mcp.auth.jwt_bearer import JwtBearerGrant
from knime_mcp.auth.private_key_jwt import private_key_jwt_flow
from knime_mcp.auth.signin import BrowserSignIn
from knime_mcp.auth.store import TokenStore
from knime_mcp.config import ASSERTION_KINDS, CredentialLookup, ServerSpec, resolve_secret
from knime_mcp.errors import ServerAuthError
from knime_mcp.net.http_pool import HttpPool

__all__ = [
    "DYNAMIC_CLIENT",
    "Grant",
    "OAuthClient",
    "ServerOAuth",
    "oauth_auth",
    "oauth_client",
    "spec_token_store",
    "token_store",
]

Grant = Literal["authorization-code", "client-credentials"]

DYNAMIC_CLIENT = "dynamic"
"""The token store's name for a client that registered itself (RFC 7591) or names itself by a metadata URL."""

CLIENT_NAME = "knime-mcp"
"""The name knime-mcp registers itself under (RFC 7591 ``client_name``)."""

_UNUSED_REDIRECT = "http://127.0.0.1/callback"
"""A redirect address for runs that cannot sign in; the SDK only uses it to register and to sign in."""


@dataclass(frozen=True, kw_only=True)
class OAuthClient:
    """Who knime-mcp is to the authorization server: a pre-registered client (id, and secret for a confidential
    one), a client ID metadata document URL, or, with neither, a client that registers itself."""

    client_id: str | None = None
    client_secret: str | None = None
    private_key: str | None = None
    """For ``private_key_jwt`` (client credentials): the client's private key as PEM, or the path of a PEM file."""
    scope: str | None = None
    client_metadata_url: str | None = None
    issuer: str | None = None
    """The authorization server's issuer the person configured: the only one knime-mcp signs in at or sends the
    client secret to (:mod:`knime_mcp.auth.guard`)."""
    dpop: bool = True
    """Whether tokens are bound with DPoP where the authorization server offers it (:mod:`knime_mcp.auth.dpop`)."""

    @property
    def store_key(self) -> str:
        return self.client_id or self.client_metadata_url or DYNAMIC_CLIENT


def oauth_client(spec: ServerSpec, credentials: CredentialLookup | None = None) -> OAuthClient:
    """The client identity a spec's OAuth settings name, its secret resolved now (a credential's user name is the
    client id unless the settings give one). A client id that is an https URL names a client ID metadata document:
    the SDK uses it where the authorization server takes such clients, and registers a client elsewhere."""
    auth = spec.auth
    username, secret = None, None
    if auth.credential is not None or auth.secret is not None:
        username, secret = resolve_secret(auth, credentials, spec.display_name)
    client_id = auth.client_id or username or None
    dpop = auth.dpop != "off"
    if auth.client_auth == "private_key_jwt":
        return OAuthClient(client_id=client_id, private_key=secret, scope=auth.scope, issuer=auth.issuer, dpop=dpop)
    if client_id is not None and secret is None and is_valid_client_metadata_url(client_id):
        return OAuthClient(client_metadata_url=client_id, scope=auth.scope, issuer=auth.issuer, dpop=dpop)
    return OAuthClient(client_id=client_id, client_secret=secret, scope=auth.scope, issuer=auth.issuer, dpop=dpop)


class ServerOAuth:
    """One server's OAuth for a run: the SDK's provider for its HTTP client, and the loopback port of an interactive
    sign-in, which :meth:`close` releases. ``show_sign_in``: how to tell a person where to sign in; None where
    nobody can (stored tokens and their refresh only). ``pool``: the run's, for requests the grant sends itself."""

    def __init__(
        self,
        spec: ServerSpec,
        credentials: CredentialLookup | None,
        show_sign_in: Callable[[str], None] | None,
        *,
        pool: HttpPool,
    ) -> None:
        client = oauth_client(spec, credentials)
        if spec.auth.kind in ASSERTION_KINDS:
            self._sign_in = None
            secret = client.client_secret
            self.auth = assertion_grant(spec, credentials, client_id=client.client_id, client_secret=secret, pool=pool)
            return
        grant: Grant = "client-credentials" if spec.auth.kind == "oauth-client-credentials" else "authorization-code"
        interactive = show_sign_in is not None and grant == "authorization-code"
        self._sign_in = BrowserSignIn(spec.display_name, show=show_sign_in) if interactive else None
        self.auth = oauth_auth(spec.target, client, grant=grant, sign_in=self._sign_in, server=spec.display_name)

    @property
    def secrets(self) -> set[str]:
        """The tokens held now, and what a JWT bearer grant sent (assertions, the identity assertion), which a
        careless server may quote back."""
        tokens = self.auth.context.current_tokens
        held = {token for token in (tokens.access_token, tokens.refresh_token) if token} if tokens else set()
        return held | self.auth.sent_secrets if isinstance(self.auth, JwtBearerGrant) else held

    def close(self) -> None:
        if self._sign_in is not None:
            self._sign_in.close()


def token_store(server_url: str, client: OAuthClient) -> TokenStore:
    """Where the tokens of ``server_url`` for ``client`` are kept (``knime-mcp logout`` deletes it)."""
    return TokenStore.for_server(server_url, client=client.store_key)


def spec_token_store(spec: ServerSpec, credentials: CredentialLookup | None = None) -> TokenStore:
    """Where the tokens of the server and client that ``spec``'s OAuth settings name are kept: what a new sign-in
    (``knime-mcp login``, the nodes' *Sign in again*) forgets first."""
    client = oauth_client(spec, credentials)
    if spec.auth.kind in ASSERTION_KINDS:
        return assertion_store(spec, client.client_id)
    return token_store(spec.target, client)


def oauth_auth(
    server_url: str,
    client: OAuthClient,
    *,
    grant: Grant = "authorization-code",
    sign_in: BrowserSignIn | None,
    server: str | None = None,
) -> OAuthClientProvider:
    """The SDK provider for one server. Without ``sign_in`` (a Hub executor, a batch run) the authorization-code
    grant works from the tokens an earlier sign-in stored and refreshes them; it never opens a browser. ``server``:
    the display name its errors name (the URL by default), which holds no query or user name."""
    server = server or server_url
    store = token_store(server_url, client)
    if grant == "client-credentials" and client.private_key:
        if not client.client_id:
            raise ServerAuthError(
                "The client credentials grant needs a client id.",
                server=server,
                hint="Give the OAuth client id, or choose a KNIME credential whose user name is the client id.",
            )
        key, scope, issuer = client.private_key, client.scope, client.issuer
        provider: OAuthFlow = private_key_jwt_flow(
            server_url, store, client_id=client.client_id, key=key, scope=scope, issuer=issuer, server=server
        )
    elif grant == "client-credentials":
        if not client.client_id or not client.client_secret:
            raise ServerAuthError(
                "The client credentials grant needs a client id and secret.",
                server=server,
                hint="Choose a KNIME credential whose user name is the client id and whose password is the secret.",
            )
        with warnings.catch_warnings():
            # Without a configured issuer the guard remembers the first one (knime_mcp.auth.guard), as documented.
            warnings.simplefilter("ignore")
            provider = _ClientCredentials(
                server_url, store, client.client_id, client.client_secret, scope=client.scope, issuer=client.issuer
            )
    else:
        metadata = OAuthClientMetadata(
            client_name=CLIENT_NAME,
            redirect_uris=[sign_in.redirect_uri if sign_in else _UNUSED_REDIRECT],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="client_secret_basic" if client.client_secret else "none",
            scope=client.scope,
        )
        if client.client_id:
            store.preset_client(
                OAuthClientInformationFull(
                    client_id=client.client_id,
                    client_secret=client.client_secret,
                    redirect_uris=metadata.redirect_uris,
                    token_endpoint_auth_method=metadata.token_endpoint_auth_method,
                )
            )
        redirect, callback = (sign_in.open_browser, sign_in.wait_for_code) if sign_in else _no_person(server)
        provider = _RefreshingFirst(
            server_url,
            metadata,
            store,
            redirect_handler=redirect,
            callback_handler=callback,
            client_metadata_url=client.client_metadata_url,
        )
    secret = "the client secret" if client.client_secret else None
    secret = "the client's signed assertion (private_key_jwt)" if client.private_key else secret
    unattended = grant == "client-credentials"
    provider.guard(server=server, store=store, issuer=client.issuer, secret=secret, unattended=unattended)
    provider.use_dpop(allowed=client.dpop, store=store)
    store.attach(provider.context)
    return provider


class _ClientCredentials(OAuthFlow, ClientCredentialsOAuthProvider):
    """The SDK's client credentials grant, guarded, with DPoP where offered."""


class _RefreshingFirst(OAuthFlow):
    """On a 401 the SDK signs in anew; a refresh token held is tried first, once per request. The server may have
    revoked the access token or let it expire early, and a run where nobody can sign in goes on with a refresh."""

    async def async_auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        flow = super().async_auth_flow(request)
        refreshed = False
        try:
            outgoing = await flow.__anext__()
            while True:
                response = yield outgoing
                if outgoing is request and response.status_code == 401 and not refreshed and self._can_refresh():
                    refreshed = True
                    await flow.aclose()
                    self.context.token_expiry_time = time.time() - 1  # expired now: the flow refreshes before sending
                    flow = super().async_auth_flow(request)
                    outgoing = await flow.__anext__()
                else:
                    outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        finally:
            await flow.aclose()

    def _can_refresh(self) -> bool:
        return self.context.current_tokens is not None and self.context.can_refresh_token()


def _no_person(
    server: str,
) -> tuple[Callable[[str], Awaitable[None]], Callable[[], Awaitable[AuthorizationCodeResult]]]:
    """Redirect and callback handlers for a run where nobody can sign in: both say how to sign in instead."""

    async def refuse(*_: object) -> AuthorizationCodeResult:
        raise ServerAuthError(
            "The server asks for a sign-in, and nobody can sign in here (no stored sign-in, or it has expired).",
            server=server,
            hint="Sign in once on this machine (`knime-mcp login URL`, or run the node in KNIME Analytics Platform), "
            "or use the client credentials grant.",
        )

    return refuse, refuse


def _registering_every_offered_scope(create: Callable[..., httpx2.Request]) -> Callable[..., httpx2.Request]:
    """The SDK registers a client for the scope of the first challenge, and an authorization server may hold a
    client to the scope it registered (oidc-provider does): asking for a larger scope later (step-up) is then refused
    with ``invalid_scope``. knime-mcp registers for every scope the authorization server offers as well; each sign-in
    still asks for only the scope the MCP server wants."""

    def create_request(
        metadata: OAuthMetadata | None, client_metadata: OAuthClientMetadata, base_url: str
    ) -> httpx2.Request:
        offered = " ".join(metadata.scopes_supported) if metadata and metadata.scopes_supported else None
        if client_metadata.client_name == CLIENT_NAME and client_metadata.scope and offered:
            scope = union_scopes(client_metadata.scope, offered)
            client_metadata = client_metadata.model_copy(update={"scope": scope})
        return create(metadata, client_metadata, base_url)

    return create_request


# The SDK's OAuth flow builds its registration request through this name of its module.
mcp.client.auth.oauth2.create_client_registration_request = _registering_every_offered_scope(
    mcp.client.auth.oauth2.create_client_registration_request
)
