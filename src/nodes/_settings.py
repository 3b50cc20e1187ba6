"""Parameter groups shared by the nodes (server, authentication, timeouts), and their translation into the core's
ServerSpec.

Settings hold no secret: authentication names a KNIME credential (its password is read at execution time, see
``nodes._credentials``), and header or environment values may only reference secrets as ``${VAR}``.
"""

from __future__ import annotations

import knime.extension as knext

from knime_mcp.config import (
    ASSERTION_KINDS,
    DEFAULT_TIMEOUTS,
    DEMO_SERVER,
    OAUTH_KINDS,
    AuthRef,
    ServerSpec,
    Timeouts,
    TlsSettings,
    demo_server_spec,
)
from knime_mcp.errors import ConfigError
from nodes._credentials import chosen_credential, credential_names
from nodes._tls_settings import TlsGroup, tls_settings


class TransportOptions(knext.EnumParameterOptions):
    AUTO = ("Auto", "A URL ending in /sse uses SSE; another URL tries Streamable HTTP, then SSE; else stdio.")
    STREAMABLE_HTTP = ("Streamable HTTP", "The current MCP HTTP transport.")
    SSE = ("SSE", "The older HTTP + Server-Sent Events transport.")
    STDIO = ("stdio", "Start the server as a local process and talk over its standard input and output.")


_TRANSPORTS = {"AUTO": "auto", "STREAMABLE_HTTP": "streamable-http", "SSE": "sse", "STDIO": "stdio"}


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


_AUTH_KINDS = {
    "NONE": "none", "BEARER": "bearer", "HEADER": "header", "BASIC": "basic", "OAUTH": "oauth",
    "OAUTH_CLIENT_CREDENTIALS": "oauth-client-credentials", "OAUTH_WORKLOAD_IDENTITY": "oauth-workload-identity",
    "OAUTH_ID_JAG": "oauth-id-jag",
}  # fmt: skip
_OAUTH_OPTIONS = [
    AuthOptions.OAUTH.name, AuthOptions.OAUTH_CLIENT_CREDENTIALS.name, AuthOptions.OAUTH_WORKLOAD_IDENTITY.name,
    AuthOptions.OAUTH_ID_JAG.name,
]  # fmt: skip


@knext.parameter_group(label="MCP server")
class ServerSettings:
    """Which MCP server to connect to, and how."""

    server = knext.StringParameter(
        "Server",
        "An http(s) URL of an MCP server (e.g. http://localhost:8000/mcp), or a command line that starts a stdio "
        f"server (e.g. npx -y @modelcontextprotocol/server-memory). Enter '{DEMO_SERVER}' to try the nodes with the "
        "demo server bundled with this extension: it starts over stdio with the extension's own Python, needs no "
        "network, and offers tools that return text, numbers, structured results, a chart image and errors.",
        "",
    )
    transport = knext.EnumParameter(
        "Transport", "How to talk to the server.", TransportOptions.AUTO.name, TransportOptions
    )
    headers = knext.MultilineStringParameter(
        "Extra HTTP headers",
        "One 'Name: value' per line. Write secrets as ${VARIABLE} environment references, never as values.",
        "",
        is_advanced=True,
    )
    environment = knext.MultilineStringParameter(
        "Environment (stdio)",
        "One NAME=value per line for a stdio server; values may reference ${VARIABLE}s.",
        "",
        is_advanced=True,
    )
    roots = knext.MultilineStringParameter(
        "Folders the server may see (stdio)",
        "One folder per line, as a full path: the folders a stdio server is told it may work in when it asks for "
        "the client's roots (MCP roots/list). Empty: the server is offered no folders. Roots are a hint the server "
        "is trusted to follow, not a sandbox.",
        "",
        since_version="0.3.0",
        is_advanced=True,
    )
    trust_flow_variable = knext.BoolParameter(
        "Trust a server address from a flow variable",
        "A server URL, command line or stdio environment set by a flow variable may come from data (a table, a "
        "web form), so by default it may only be a public http(s) URL and a command line is never run. Switch "
        "this on if the flow variable is yours, e.g. set by a configuration node.",
        False,
        is_advanced=True,
    )
    tls = TlsGroup()


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


@knext.parameter_group(label="Timeouts")
class TimeoutSettings:
    connect = knext.DoubleParameter(
        "Connect timeout (s)", "Seconds to wait for the connection and handshake.", DEFAULT_TIMEOUTS.connect,
        min_value=0.1,
    )
    call = knext.DoubleParameter(
        "Call timeout (s)",
        "Seconds to wait for one tool call; a slower call is cancelled on the server.",
        DEFAULT_TIMEOUTS.call,
        min_value=0.1,
    )
    progress_max = knext.DoubleParameter(
        "Longest call while progress is reported (s)",
        "While a tool reports progress (or, run as an MCP task, a new status), each report restarts the call "
        "timeout, up to this many seconds in all. 0: the call timeout is final.",
        0.0,
        min_value=0.0,
        since_version="0.5.0",
        is_advanced=True,
    )


def _lines(text: str, separator: str, setting: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        name, found, value = line.partition(separator)
        if not found or not name.strip():
            raise ConfigError(f"Line {number} of '{setting}' is not of the form NAME{separator}value.")
        pairs[name.strip()] = value.strip()
    return pairs


def timeout_limits(timeouts: TimeoutSettings) -> Timeouts:
    return Timeouts(connect=timeouts.connect, call=timeouts.call, progress_max=timeouts.progress_max or None)


def server_spec(server: ServerSettings, auth: AuthSettings, timeouts: TimeoutSettings) -> ServerSpec:
    """The core's description of the server; raises ConfigError for settings that cannot work."""
    limits = timeout_limits(timeouts)
    if server.server.strip() == DEMO_SERVER:
        return demo_server_spec(timeouts=limits)
    kind = _AUTH_KINDS[auth.kind]
    credential = chosen_credential(auth.credential)
    if kind == "oauth-client-credentials" and not credential:
        raise ConfigError(
            "OAuth client credentials need a credential.",
            hint="Choose the credential whose user name is the client id and whose password is the client secret.",
        )
    if kind not in ("none", "oauth", *ASSERTION_KINDS) and not credential:
        raise ConfigError("Choose the credential that holds the secret for the authentication.")
    oauth = kind in OAUTH_KINDS
    spec = ServerSpec(
        target=server.server.strip(),
        transport=_TRANSPORTS[server.transport],  # type: ignore[arg-type]
        headers=_lines(server.headers, ":", "Extra HTTP headers"),
        env=_lines(server.environment, "=", "Environment (stdio)"),
        auth=AuthRef(
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
        if kind != "none"
        else AuthRef(),
        timeouts=limits,
        roots=tuple(line.strip() for line in server.roots.splitlines() if line.strip()),
        tls=tls_settings(server.tls) if server.server.strip().startswith("https://") else TlsSettings(),
    )
    if oauth and not spec.is_url:
        raise ConfigError(
            "OAuth works with http(s) servers only.",
            hint="Enter the server's URL, or choose another authentication for a stdio server.",
        )
    return spec


def _assertion_settings(kind: str, auth: AuthSettings) -> dict[str, str | None]:
    """The settings of the JWT bearer grant ``kind`` names, if any (the others' stay unset)."""
    if kind == "oauth-workload-identity":
        return {"token_file": auth.token_file.strip() or None}
    if kind != "oauth-id-jag":
        return {}
    settings = (auth.identity_assertion, auth.idp_token_endpoint, auth.idp_client_id, auth.idp_secret)
    names = ("assertion", "idp_token_endpoint", "idp_client_id", "idp_secret")
    return {name: value.strip() or None for name, value in zip(names, settings, strict=True)}


def untrusted_address_hint(ctx: knext.ConfigurationContext, server: ServerSettings) -> str | None:
    """For a server address (or stdio environment) set by an untrusted flow variable, which makes it data, the
    hint on how to trust it; None for an address a person typed."""
    return untrusted_hint(
        ctx,
        (server.server, server.environment, server.roots),
        trusted=server.trust_flow_variable,
        subject="The address",
        switch="Trust a server address from a flow variable",
    )


def untrusted_hint(
    ctx: knext.ConfigurationContext, settings: tuple[str, ...], *, trusted: bool, subject: str, switch: str
) -> str | None:
    """For ``settings`` of which one was set by a flow variable that ``trusted`` does not vouch for, the hint naming
    that flow variable and the ``switch`` that trusts it; else None. KNIME hands a node its settings with flow
    variables already applied, so an equal value is how a node can tell."""
    if trusted:
        return None
    texts = {text.strip() for text in settings if text.strip()}
    for name, value in ctx.flow_variables.items():
        if isinstance(value, str) and value.strip() in texts:
            return f"{subject} comes from flow variable {name!r}; if you trust it, switch on '{switch}'."
    return None
