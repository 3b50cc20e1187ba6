"""Parameters: the *Authentication* group of the nodes that reach a server of their own, and its translation into the
core's AuthRef.

The group holds no secret: it names a KNIME credential, whose password is read at execution time
(``nodes.knime_io.credentials``).
"""

from __future__ import annotations

import knime.extension as knext

from knime_mcp.config import ASSERTION_KINDS, OAUTH_KINDS, AuthRef
from knime_mcp.errors import ConfigError
from nodes.parameters.credentials import chosen_credential, credential_names

__all__ = ["AUTH_KINDS", "AuthOptions", "AuthSettings", "auth_ref"]


class AuthOptions(knext.EnumParameterOptions):
    NONE = ("None", "Send no credentials.")
    BEARER = ("Bearer token", "Send the credential's password as 'Authorization: Bearer …'.")
    HEADER = ("Custom header", "Send the credential's password in a header of your choice, e.g. X-API-Key.")
    BASIC = ("Basic", "Send the credential's user name and password with HTTP basic authentication.")
    OAUTH = (
        "OAuth sign-in",
        "Sign in once in a browser, as the MCP authorization specification describes: the node opens the system "
        "browser and shows where to sign in in its progress message and the KNIME log. The tokens are kept for "
        "each user in ~/.knime-mcp/oauth (never in the workflow) and refreshed, so later runs need no sign-in, also "
        "where nobody can sign in. A credential is optional: the secret of a pre-registered confidential client, "
        "whose user name is the client id unless 'OAuth client id' is set.",
    )
    OAUTH_CLIENT_CREDENTIALS = (
        "OAuth client credentials",
        "Get a token without a person (the OAuth client credentials grant), for KNIME Hub executors and batch runs: "
        "the credential's user name is the client id (unless 'OAuth client id' is set) and its password the client "
        "secret.",
    )
    OAUTH_WORKLOAD_IDENTITY = (
        "OAuth workload identity",
        "Get a token with the identity the platform gives this workload (the JWT bearer grant, RFC 7523), for KNIME "
        "Hub executors and Kubernetes: the token the platform writes to 'Token file' (a service account or federated "
        "token) is read for every token request. A credential is optional: a confidential client's id (user name) "
        "and secret (password) at the authorization server.",
    )
    OAUTH_ID_JAG = (
        "OAuth enterprise identity (ID-JAG)",
        "Sign in with your organisation's identity provider (enterprise-managed authorization): the ID token in "
        "'Identity assertion' is exchanged at the identity provider for an ID-JAG, which the MCP server's "
        "authorization server takes for a token; no browser opens. The credential holds this client's id (user "
        "name) and secret (password) at the authorization server.",
    )


AUTH_KINDS = {
    "NONE": "none", "BEARER": "bearer", "HEADER": "header", "BASIC": "basic", "OAUTH": "oauth",
    "OAUTH_CLIENT_CREDENTIALS": "oauth-client-credentials", "OAUTH_WORKLOAD_IDENTITY": "oauth-workload-identity",
    "OAUTH_ID_JAG": "oauth-id-jag",
}  # fmt: skip
_OAUTH_OPTIONS = [
    AuthOptions.OAUTH.name, AuthOptions.OAUTH_CLIENT_CREDENTIALS.name, AuthOptions.OAUTH_WORKLOAD_IDENTITY.name,
    AuthOptions.OAUTH_ID_JAG.name,
]  # fmt: skip


@knext.parameter_group(label="Authentication")
class AuthSettings:
    """Credentials for HTTP servers, always taken from a KNIME credentials flow variable."""

    kind = knext.EnumParameter("Authentication", "What to send to the server.", AuthOptions.NONE.name, AuthOptions)
    credential = knext.StringParameter(
        "Credential",
        "The credentials flow variable that holds the secret (password field) and, for basic, the user name. For "
        "OAuth client credentials: the client id (user name) and client secret (password); for OAuth sign-in it is "
        "optional, the secret of a pre-registered confidential client.",
        "",
        choices=credential_names,
    ).rule(knext.OneOf(kind, [AuthOptions.NONE.name]), knext.Effect.HIDE)
    header = knext.StringParameter("Header name", "The header for 'Custom header', e.g. X-API-Key.", "").rule(
        knext.OneOf(kind, [AuthOptions.HEADER.name]), knext.Effect.SHOW
    )
    client_id = knext.StringParameter(
        "OAuth client id",
        "The id of a client registered with the authorization server beforehand, or the https URL of a client ID "
        "metadata document your organisation publishes for knime-mcp (used where the authorization server takes "
        "such clients). Empty: the node registers itself with the authorization server (dynamic client "
        "registration) or, for client credentials, uses the credential's user name.",
        "",
        since_version="0.3.0",
        is_advanced=True,
    ).rule(knext.OneOf(kind, _OAUTH_OPTIONS), knext.Effect.SHOW)
    scope = knext.StringParameter(
        "OAuth scope",
        "The scopes to ask for, separated by spaces: for client credentials, and for a sign-in at a server that names "
        "no scopes (otherwise the scopes the server names are asked for, as the MCP specification says).",
        "",
        since_version="0.3.0",
        is_advanced=True,
    ).rule(knext.OneOf(kind, _OAUTH_OPTIONS), knext.Effect.SHOW)
    issuer = knext.StringParameter(
        "Authorization server (issuer)",
        "The issuer URL of the authorization server, e.g. https://login.example.com: the node signs in there only, "
        "and sends the client secret there only; an MCP server that names another one is refused. Empty: the one "
        "the MCP server names, except that a client secret stays with the issuer it was first used with (a later "
        "change is refused, naming the issuer to confirm here), and that client credentials, workload identity and "
        "ID-JAG need it set when the authorization server is on another host than the MCP server.",
        "",
        since_version="0.4.0",
        is_advanced=True,
    ).rule(knext.OneOf(kind, _OAUTH_OPTIONS), knext.Effect.SHOW)
    private_key_jwt = knext.BoolParameter(
        "Sign in with a private key (private_key_jwt)",
        "For OAuth client credentials: prove the client's identity with an assertion signed by its private key "
        "(RFC 7523) instead of a client secret. The credential's password then holds the private key (PEM; an RSA "
        "key signs with RS256, a P-256 key with ES256), whose public key is registered with the authorization server.",
        False,
        since_version="0.5.0",
        is_advanced=True,
    ).rule(knext.OneOf(kind, [AuthOptions.OAUTH_CLIENT_CREDENTIALS.name]), knext.Effect.SHOW)
    dpop = knext.BoolParameter(
        "Bind tokens with DPoP",
        "Where the authorization server offers DPoP (RFC 9449), bind the tokens to a key the node holds, so a token "
        "that leaks is of no use without it; each request to the MCP server then carries a proof signed with that "
        "key. Switch it off only for an MCP server that cannot take DPoP tokens although its authorization server "
        "issues them.",
        True,
        since_version="0.5.0",
        is_advanced=True,
    ).rule(knext.OneOf(kind, _OAUTH_OPTIONS), knext.Effect.SHOW)
    token_file = knext.StringParameter(
        "Token file",
        "For OAuth workload identity: the file the platform writes this workload's identity token (a JWT) to, as a "
        "path or a ${VARIABLE} holding one, e.g. ${AZURE_FEDERATED_TOKEN_FILE} or the mount path of a Kubernetes "
        "projected service account token. It is read again for every token request, as the platform renews it.",
        "",
        since_version="0.5.0",
    ).rule(knext.OneOf(kind, [AuthOptions.OAUTH_WORKLOAD_IDENTITY.name]), knext.Effect.SHOW)
    identity_assertion = knext.StringParameter(
        "Identity assertion",
        "For OAuth enterprise identity: where the ID token from your organisation's identity provider comes from: "
        "the name of a credentials flow variable whose password holds it, or a ${VARIABLE} holding it.",
        "",
        since_version="0.5.0",
    ).rule(knext.OneOf(kind, [AuthOptions.OAUTH_ID_JAG.name]), knext.Effect.SHOW)
    idp_token_endpoint = knext.StringParameter(
        "Identity provider token endpoint",
        "For OAuth enterprise identity: the token endpoint of your organisation's identity provider, e.g. "
        "https://login.example.com/oauth2/token, where the ID token is exchanged for an ID-JAG (RFC 8693).",
        "",
        since_version="0.5.0",
    ).rule(knext.OneOf(kind, [AuthOptions.OAUTH_ID_JAG.name]), knext.Effect.SHOW)
    idp_client_id = knext.StringParameter(
        "Identity provider client id",
        "For OAuth enterprise identity: knime-mcp's client id at the identity provider, if it asks for one.",
        "",
        since_version="0.5.0",
        is_advanced=True,
    ).rule(knext.OneOf(kind, [AuthOptions.OAUTH_ID_JAG.name]), knext.Effect.SHOW)
    idp_secret = knext.StringParameter(
        "Identity provider client secret",
        "For OAuth enterprise identity: the client secret at the identity provider, if it asks for one: the name of "
        "a credentials flow variable whose password holds it, or a ${VARIABLE} holding it.",
        "",
        since_version="0.5.0",
        is_advanced=True,
    ).rule(knext.OneOf(kind, [AuthOptions.OAUTH_ID_JAG.name]), knext.Effect.SHOW)
    browser_sign_in = knext.BoolParameter(
        "Sign in in a browser",
        "When no stored sign-in serves, open the browser for one (the progress message and the KNIME log show where). "
        "Switch it off where nobody can sign in, e.g. on a KNIME Hub executor or in a batch run, so the node uses "
        "only a stored sign-in and otherwise fails at once, saying how to sign in, instead of waiting for a browser.",
        True,
        since_version="0.3.0",
        is_advanced=True,
    ).rule(knext.OneOf(kind, [AuthOptions.OAUTH.name]), knext.Effect.SHOW)
    sign_in_again = knext.BoolParameter(
        "Sign in again",
        "Forget the stored OAuth sign-in (tokens) of this server and client before connecting, so the node signs in "
        "anew, e.g. as another user or after the server's permissions changed. Switch it off again afterwards, or "
        "every execution asks for a sign-in.",
        False,
        since_version="0.3.0",
        is_advanced=True,
    ).rule(knext.OneOf(kind, _OAUTH_OPTIONS), knext.Effect.SHOW)


def auth_ref(auth: AuthSettings) -> AuthRef:
    """The core's authentication of a server from the group's settings; raises ConfigError for settings that cannot
    work."""
    kind = AUTH_KINDS[auth.kind]
    credential = chosen_credential(auth.credential)
    if kind == "oauth-client-credentials" and not credential:
        raise ConfigError(
            "OAuth client credentials need a credential.",
            hint="Choose the credential whose user name is the client id and whose password is the client secret.",
        )
    if kind not in ("none", "oauth", *ASSERTION_KINDS) and not credential:
        raise ConfigError("Choose the credential that holds the secret for the authentication.")
    if kind == "none":
        return AuthRef()
    oauth = kind in OAUTH_KINDS
    return AuthRef(
        kind=kind,  # type: ignore[arg-type]
        credential=credential,
        header=auth.header or None,
        client_id=(auth.client_id.strip() or None) if oauth else None,
        scope=(auth.scope.strip() or None) if oauth else None,
        issuer=(auth.issuer.strip() or None) if oauth else None,
        client_auth="private_key_jwt" if kind == "oauth-client-credentials" and auth.private_key_jwt else None,
        dpop=None if auth.dpop or not oauth else "off",
        **_assertion_settings(kind, auth),
    )


def _assertion_settings(kind: str, auth: AuthSettings) -> dict[str, str | None]:
    """The settings of the JWT bearer grant ``kind`` names, if any (the others' stay unset)."""
    if kind == "oauth-workload-identity":
        return {"token_file": auth.token_file.strip() or None}
    if kind != "oauth-id-jag":
        return {}
    settings = (auth.identity_assertion, auth.idp_token_endpoint, auth.idp_client_id, auth.idp_secret)
    names = ("assertion", "idp_token_endpoint", "idp_client_id", "idp_secret")
    return {name: value.strip() or None for name, value in zip(names, settings, strict=True)}
