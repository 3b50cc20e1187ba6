"""Parameter groups shared by the nodes, and their translation into the core's ServerSpec.

Settings hold no secret: authentication names a KNIME credential (its password is read at execution time), and
header or environment values may only reference secrets as ``${VAR}``.
"""

from __future__ import annotations

import logging
import queue
from urllib.parse import urlsplit

import knime.extension as knext

from knime_mcp.config import (
    DEFAULT_TIMEOUTS,
    DEMO_SERVER,
    OAUTH_KINDS,
    AuthRef,
    CredentialLookup,
    ElicitationMode,
    ServerSpec,
    Timeouts,
    demo_server_spec,
)
from knime_mcp.errors import ConfigError
from knime_mcp.tools.policy import ToolPolicy


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


_AUTH_KINDS = {
    "NONE": "none", "BEARER": "bearer", "HEADER": "header", "BASIC": "basic", "OAUTH": "oauth",
    "OAUTH_CLIENT_CREDENTIALS": "oauth-client-credentials",
}  # fmt: skip
_OAUTH_OPTIONS = [AuthOptions.OAUTH.name, AuthOptions.OAUTH_CLIENT_CREDENTIALS.name]


def credential_names(ctx: knext.DialogCreationContext) -> list[str]:
    return ctx.get_credential_names()


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
        "change is refused, naming the issuer to confirm here).",
        "",
        since_version="0.4.0",
        is_advanced=True,
    ).rule(knext.OneOf(kind, _OAUTH_OPTIONS), knext.Effect.SHOW)
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


class DestructiveOptions(knext.EnumParameterOptions):
    ALLOW = ("Allow all", "Every tool may be called.")
    BLOCK = (
        "Block destructive",
        "Tools whose MCP annotations say they may destroy data are never called (MCP counts a tool without "
        "annotations as destructive).",
    )
    READ_ONLY = ("Read-only only", "Only tools annotated read-only are called.")


def destructive_parameter(default: DestructiveOptions) -> knext.EnumParameter:
    return knext.EnumParameter(
        "Destructive tools",
        "Which tools may be called, judged by their MCP annotations.",
        default.name,
        DestructiveOptions,
    )


def unannotated_parameter() -> knext.BoolParameter:
    """Added in 0.2.0: settings saved before load with the default, which offers tools without annotations."""
    return knext.BoolParameter(
        "Treat unannotated tools as destructive",
        "MCP counts a tool whose server sent no annotations as destructive, but most servers built with FastMCP or "
        "the mcp 1.x SDK annotate no tool. By default, blocking destructive tools keeps such tools and names them in "
        "the node warning; switch this on to block them together with the destructive tools.",
        False,
        since_version="0.2.0",
        is_advanced=True,
    )


class ElicitationOptions(knext.EnumParameterOptions):
    DECLINE = (
        "Decline",
        "Decline every request for input: the tool call fails, saying what the tool asked for.",
    )
    DEFAULTS = (
        "Use the defaults",
        "Answer a form whose every field has a default with those defaults; decline any other request for input.",
    )


def elicitation_parameter() -> knext.EnumParameter:
    """Added in 0.3.0: for nodes that call tools."""
    return knext.EnumParameter(
        "When a tool asks for input",
        "An MCP tool may ask the client for input while it runs (elicitation), expecting a person to answer. A "
        "workflow usually runs without one, so the request is declined and the tool call fails with what the tool "
        "asked for, or, with 'Use the defaults', a form whose every field has a default is answered with them. "
        "Requests to open a web page are always declined. Each request is logged.",
        ElicitationOptions.DECLINE.name,
        ElicitationOptions,
        since_version="0.3.0",
        is_advanced=True,
    )


def elicitation_mode(option: str) -> ElicitationMode:
    return "defaults" if option == ElicitationOptions.DEFAULTS.name else "decline"


def trust_servers_parameter() -> knext.BoolParameter:
    return knext.BoolParameter(
        "Trust every server in the tools table",
        "Tools listed by an MCP Tool Provider on this machine are trusted as they are. Any other tools table (saved "
        "on another machine, read from a file, or edited) is data: its servers may only be public http(s) URLs, "
        "and its stdio command lines are never run. Switch this on to use such a table's local, private-network or "
        "stdio servers anyway.",
        False,
        is_advanced=True,
    )


def tool_policy(allow: str, deny: str, destructive: str, *, unannotated_destructive: bool = False) -> ToolPolicy:
    """The core's tool policy from node settings; a bad pattern is a ConfigError naming the setting."""
    mode = {"ALLOW": "allow", "BLOCK": "block", "READ_ONLY": "read_only"}[destructive]
    return ToolPolicy(
        allow=allow or None,
        deny=deny or None,
        destructive=mode,  # type: ignore[arg-type]
        unannotated_destructive=unannotated_destructive,
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
    return Timeouts(connect=timeouts.connect, call=timeouts.call)


def server_spec(server: ServerSettings, auth: AuthSettings, timeouts: TimeoutSettings) -> ServerSpec:
    """The core's description of the server; raises ConfigError for settings that cannot work."""
    limits = timeout_limits(timeouts)
    if server.server.strip() == DEMO_SERVER:
        return demo_server_spec(timeouts=limits)
    kind = _AUTH_KINDS[auth.kind]
    if kind == "oauth-client-credentials" and not auth.credential:
        raise ConfigError(
            "OAuth client credentials need a credential.",
            hint="Choose the credential whose user name is the client id and whose password is the client secret.",
        )
    if kind not in ("none", "oauth") and not auth.credential:
        raise ConfigError("Choose the credential that holds the secret for the authentication.")
    oauth = kind in OAUTH_KINDS
    spec = ServerSpec(
        target=server.server.strip(),
        transport=_TRANSPORTS[server.transport],  # type: ignore[arg-type]
        headers=_lines(server.headers, ":", "Extra HTTP headers"),
        env=_lines(server.environment, "=", "Environment (stdio)"),
        auth=AuthRef(
            kind=kind,  # type: ignore[arg-type]
            credential=auth.credential or None,
            header=auth.header or None,
            client_id=(auth.client_id.strip() or None) if oauth else None,
            scope=(auth.scope.strip() or None) if oauth else None,
            issuer=(auth.issuer.strip() or None) if oauth else None,
        )
        if kind != "none"
        else AuthRef(),
        timeouts=limits,
        roots=tuple(line.strip() for line in server.roots.splitlines() if line.strip()),
    )
    if oauth and not spec.is_url:
        raise ConfigError(
            "OAuth works with http(s) servers only.",
            hint="Enter the server's URL, or choose another authentication for a stdio server.",
        )
    return spec


def forget_sign_in(spec: ServerSpec, credentials: CredentialLookup) -> None:
    """'Sign in again': delete the stored OAuth tokens of the server and client that ``spec`` names (a client
    that registered itself stays registered)."""
    from knime_mcp.auth import spec_token_store

    if spec.auth.kind in OAUTH_KINDS and spec.is_url:
        spec_token_store(spec, credentials).forget_tokens()


def browser_sign_in_parameter() -> knext.BoolParameter:
    """Added in 0.3.0: for nodes that connect to the servers of a tools table."""
    return knext.BoolParameter(
        "Sign in to OAuth servers in a browser",
        "A server of the tools table that uses OAuth sign-in works with the sign-in stored when its tools were "
        "listed, refreshed as needed. When that sign-in is gone or has expired, this node opens the browser for a "
        "new one (the progress message and the KNIME log show where). Switch it off where nobody can sign in, e.g. "
        "on a KNIME Hub executor or in a batch run, so the node fails at once and says how to sign in instead of "
        "waiting for a browser.",
        True,
        since_version="0.3.0",
        is_advanced=True,
    )


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


def credential_lookup(ctx: knext.ConfigurationContext) -> CredentialLookup:
    """The workflow's credentials, read now in the node's own thread (KNIME's context belongs to it) for the core
    to resolve by name when it connects; nothing is stored in settings, specs or tables."""
    credentials: dict[str, tuple[str, str]] = {}
    for name in ctx.get_credential_names():
        credential = ctx.get_credentials(name)
        credentials[name] = (credential.username, credential.password)
    return credentials.__getitem__
