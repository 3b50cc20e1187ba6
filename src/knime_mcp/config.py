"""How to reach an MCP server: a frozen, JSON-round-tripping description that never holds a secret.

Secrets are held by reference only: a KNIME credential *name*, or a ``${VAR}`` environment reference; a header,
stdio environment entry or URL query parameter holding a secret written out is refused (:func:`literal_secret_headers`,
:func:`literal_secret_env`, :func:`literal_secret_query`). They are resolved at connect time by :func:`resolve_headers`
and :func:`resolve_env`, which the client calls (the transport layer only receives the values), and by
:func:`resolve_target`, which the transport calls as it opens the URL; a missing variable or credential, or one
whose value a header cannot carry (a CR, LF, NUL or other control character), fails fast with a
:class:`ConfigError` naming it, never its value.

    spec = ServerSpec(target="https://example.com/mcp", auth=AuthRef(kind="bearer", secret="${API_TOKEN}"))
    ServerSpec.from_json(spec.to_json()) == spec
"""

from __future__ import annotations

import base64
import json
import os
import re
import shlex
import sys
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, get_args
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

from knime_mcp.errors import ConfigError
from knime_mcp.redaction import CREDENTIAL_VALUE, is_secret_parameter

__all__ = [
    "DEFAULT_TIMEOUTS",
    "DEFAULT_SERVER_REQUESTS",
    "DEMO_SERVER",
    "AuthKind",
    "ElicitationMode",
    "Handshake",
    "AuthRef",
    "CredentialLookup",
    "SamplingLimits",
    "ServerRequestPolicy",
    "ServerSpec",
    "Timeouts",
    "TransportKind",
    "ENV_REF",
    "OAUTH_KINDS",
    "demo_server_spec",
    "expand_env",
    "resolve_env",
    "resolve_headers",
    "resolve_query",
    "resolve_secret",
    "resolve_target",
]

TransportKind = Literal["auto", "streamable-http", "sse", "stdio"]
AuthKind = Literal["none", "bearer", "header", "basic", "query", "oauth", "oauth-client-credentials"]
OAUTH_KINDS = frozenset({"oauth", "oauth-client-credentials"})
"""Authentication by OAuth (:mod:`knime_mcp.auth`): the token comes from an authorization server, not a setting."""
Handshake = Literal["discover", "initialize"]
"""How a server opens a session: ``server/discover`` (MCP 2026 and later) or the ``initialize`` handshake (earlier)."""

CredentialLookup = Callable[[str], tuple[str, str]]
"""Maps a credential name to ``(username, password)``; KNIME nodes wrap ``ctx.get_credentials``."""

ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
"""A ``${VAR}`` environment reference, the one way a setting may name a secret."""


@dataclass(frozen=True, kw_only=True)
class Timeouts:
    """Seconds to wait; one object shared by the nodes, the CLI and the tests."""

    connect: float = 30.0
    """For opening the transport and the MCP handshake."""

    call: float = 60.0
    """For one tool call or listing page; a call past it is cancelled on the server too."""

    def __post_init__(self) -> None:
        if self.connect <= 0 or self.call <= 0:
            raise ConfigError("Timeouts must be positive numbers of seconds.")


DEFAULT_TIMEOUTS = Timeouts()

ElicitationMode = Literal["decline", "defaults"]
"""How a form a tool asks for is answered while nobody watches: declined, or filled in with the defaults of its
schema when every field has one (else declined)."""


@dataclass(frozen=True, kw_only=True)
class SamplingLimits:
    """How much of the run's chat model servers may use (``sampling/createMessage``): each request costs tokens."""

    max_tokens: int = 1000
    """Tokens one answer may have at most; a request asking for more gets this many."""

    max_requests: int = 10
    """Requests answered per run, across all servers; later ones are declined."""

    max_prompt_bytes: int = 100_000
    """UTF-8 bytes of a request's prompt (system prompt and messages), about 25,000 tokens; a larger request is
    declined: the server, not the workflow, chose its size, and the model is paid by the token."""

    def __post_init__(self) -> None:
        if min(self.max_tokens, self.max_requests, self.max_prompt_bytes) < 1:
            raise ConfigError(
                "The sampling limits (tokens per answer, requests per run, bytes per prompt) must be at least 1."
            )


@dataclass(frozen=True, kw_only=True)
class ServerRequestPolicy:
    """How a run answers what servers ask of the client while a tool runs (see :mod:`knime_mcp.mcp.server_requests`)."""

    elicitation: ElicitationMode = "decline"

    sampling: SamplingLimits | None = None
    """Answer sampling requests with the run's chat model within these limits; None: decline them."""

    def __post_init__(self) -> None:
        if self.elicitation not in get_args(ElicitationMode):
            raise ConfigError(
                f"Unknown elicitation mode {self.elicitation!r}; use one of {', '.join(get_args(ElicitationMode))}."
            )


DEFAULT_SERVER_REQUESTS = ServerRequestPolicy()


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


_CREDENTIAL_HEADER = re.compile(
    r"authorization|cookie|token|secret|passw|api[-_]?key|auth|credential|session|signature|(?:^|[-_])key$"
    r"|(?:^|[-_])(?:access|private|client|subscription)[-_]?key",
    re.IGNORECASE,
)
"""Header names whose values are credentials (``X-Access-Key``, ``Private-Token``, ``X-Goog-Api-Key``, …)."""


_CREDENTIAL_ENV = re.compile(
    r"(?:^|_)(?:token|secret|passphrase|key|apikey|credentials?|auth|cookie|session)s?(?:$|_)|passw(?:or)?d",
    re.IGNORECASE,
)
"""Environment variable names whose values are credentials: ``API_KEY``, ``GITHUB_TOKEN``,
``AWS_SECRET_ACCESS_KEY``, ``PGPASSWORD``."""


def literal_secret_headers(headers: Mapping[str, str]) -> list[str]:
    """The headers holding a secret written out instead of referenced as ``${VAR}`` (a secret that would be kept in
    settings, tables and command lines): a credential header without a reference, or a value that is plainly a
    credential whatever the header's name."""
    return [
        name
        for name, value in headers.items()
        if not ENV_REF.search(value) and (_CREDENTIAL_HEADER.search(name) or CREDENTIAL_VALUE.match(value.strip()))
    ]


def literal_secret_query(target: str) -> list[str]:
    """The query parameters of a URL holding a secret written out instead of referenced as ``${VAR}`` (a secret that
    would be kept in settings, tables and logs): a secret-looking name
    (:func:`~knime_mcp.redaction.is_secret_parameter`) with a value, or a value plainly a credential whatever its
    name."""
    return [
        name
        for name, value in parse_qsl(urlsplit(target).query, keep_blank_values=True)
        if value and not ENV_REF.search(value) and (is_secret_parameter(name) or CREDENTIAL_VALUE.match(value))
    ]


def literal_secret_env(env: Mapping[str, str]) -> list[str]:
    """The stdio environment entries whose name marks a credential and whose value is written out instead of
    referenced as ``${VAR}``; empty values are no secret."""
    return [name for name, text in env.items() if text and not ENV_REF.search(text) and _CREDENTIAL_ENV.search(name)]


@dataclass(frozen=True, kw_only=True)
class ServerSpec:
    """Everything needed to (re)connect to one MCP server, in any process.

    spec = ServerSpec(target="http://127.0.0.1:8000/mcp")
    spec = ServerSpec(target="npx -y @modelcontextprotocol/server-memory", env={"TOKEN": "${TOKEN}"})
    """

    target: str
    """An http(s) URL, or a command line that starts a stdio server."""

    transport: TransportKind = "auto"
    """``auto``: a URL ending in /sse is SSE, another URL tries Streamable HTTP then SSE, anything else is stdio."""

    name: str | None = None
    """Display name used in messages and tables; defaults to the URL (without credentials) or the command."""

    env: Mapping[str, str] = field(default_factory=dict)
    """Extra environment for a stdio server; values may hold ``${VAR}`` references."""

    cwd: str | None = None
    """Working folder for a stdio server."""

    headers: Mapping[str, str] = field(default_factory=dict)
    """Extra HTTP headers; values may hold ``${VAR}`` references."""

    auth: AuthRef = field(default_factory=AuthRef)

    timeouts: Timeouts = DEFAULT_TIMEOUTS

    roots: tuple[str, ...] = ()
    """Absolute paths of the folders a stdio server may see, sent as its ``roots/list`` answer; empty: the client
    offers no roots. Part of the identity (and so of the seal) when set, left out of the JSON when empty, so tables
    written before it read, and are sealed, the same."""

    seal: str | None = field(default=None, repr=False)
    """Proof that a person named this server in settings on this machine; set by
    :func:`knime_mcp.seal.seal_spec` only, and left out of comparisons."""

    handshake: Handshake | None = None
    """The handshake the server answered when its tools were listed, so that a server known to speak only
    ``initialize`` is not probed with ``server/discover`` (which an MCP 1.x server logs as a long validation error);
    None: unknown, probe first. A hint, not part of the server's identity: left out of comparisons and seals, and out
    of the JSON when None, so tables written before it read the same."""

    def __post_init__(self) -> None:
        if not self.target.strip():
            raise ConfigError("No MCP server given.", hint="Enter a server URL or a command line.")
        if self.transport not in get_args(TransportKind):
            raise ConfigError(
                f"Unknown transport {self.transport!r}; use one of {', '.join(get_args(TransportKind))}."
            )
        if self.is_url and urlsplit(self.target).password:
            raise ConfigError(
                "The server URL contains a password.",
                hint="Remove it from the URL and use basic authentication with a KNIME credential instead.",
            )
        if self.is_url and (literal := literal_secret_query(self.target)):
            raise ConfigError(
                f"The query parameter {literal[0]!r} of the server URL holds a literal secret, which would be kept in "
                "settings, tables and logs.",
                hint=f"Write {literal[0]}=${{VARIABLE}} in the URL and set VARIABLE in the environment KNIME (or this "
                "command) runs in, or use the Authentication setting.",
            )
        if literal := literal_secret_headers(self.headers):
            raise ConfigError(
                f"The header {literal[0]!r} holds a literal secret, which would be kept in settings and tables.",
                hint="Use the Authentication setting with a credential, or reference the secret as ${VARIABLE}.",
            )
        if literal := literal_secret_env(self.env):
            raise ConfigError(
                f"The environment variable {literal[0]!r} holds a literal secret, which would be kept in settings "
                "and tables.",
                hint=f"Write {literal[0]}=${{VARIABLE}} and set VARIABLE in the environment KNIME (or this command) "
                "runs in.",
            )
        if self.handshake not in (None, *get_args(Handshake)):
            raise ConfigError(
                f"Unknown handshake {self.handshake!r}; use one of {', '.join(get_args(Handshake))}, or leave it out."
            )
        if self.transport in ("streamable-http", "sse") and not self.is_url:
            raise ConfigError(f"Transport {self.transport!r} needs an http(s) URL, got a command line.")
        self._check_roots()
        object.__setattr__(self, "env", dict(self.env))
        object.__setattr__(self, "headers", dict(self.headers))
        object.__setattr__(self, "roots", tuple(self.roots))

    def _check_roots(self) -> None:
        if not self.roots:
            return
        if self.is_url:
            raise ConfigError(
                "Roots are folders on this machine, which only a stdio server can see.",
                hint="Leave the folders empty for an http(s) server.",
            )
        if relative := [root for root in self.roots if not Path(root).is_absolute()]:
            raise ConfigError(
                f"The root folder {relative[0]!r} is not an absolute path.",
                hint="Write each folder the server may see as a full path.",
            )

    @property
    def is_url(self) -> bool:
        return self.target.startswith(("http://", "https://"))

    @property
    def command(self) -> list[str]:
        """The stdio command line, split like a POSIX shell would."""
        return shlex.split(self.target)

    @cached_property
    def display_name(self) -> str:
        if self.name:
            return self.name
        if self.is_url:
            parts = urlsplit(self.target)
            host = parts.hostname or ""
            port = f":{parts.port}" if parts.port else ""
            return f"{parts.scheme}://{host}{port}{parts.path}"
        return self.target

    def __hash__(self) -> int:
        return hash(self.identity)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ServerSpec) and self.identity == other.identity

    @cached_property
    def identity(self) -> str:
        """The JSON of everything but the seal, computed once: it keys the session pool, is compared on every
        call, and is what a seal signs."""
        return _compact_json({name: value for name, value in self.to_dict().items() if name not in _NOT_IDENTITY})

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for name in _NOT_IDENTITY:
            if data[name] is None:
                del data[name]
        if not self.roots:
            del data["roots"]
        for optional in ("parameter", "issuer"):
            if data["auth"][optional] is None:
                del data["auth"][optional]
        return data

    def to_json(self) -> str:
        if self.seal is None and self.handshake is None:
            return self.identity
        return _compact_json(self.to_dict())

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ServerSpec:
        values = dict(data)
        values["auth"] = AuthRef(**values.get("auth") or {})
        values["timeouts"] = Timeouts(**values.get("timeouts") or {})
        values["roots"] = tuple(values.get("roots") or ())
        return cls(**values)

    @classmethod
    def from_json(cls, text: str) -> ServerSpec:
        return cls.from_dict(json.loads(text))


_NOT_IDENTITY = ("seal", "handshake")

DEMO_SERVER = "demo"
"""What stands for the bundled demo server in a node's server setting; also its display name."""


def demo_server_spec(*, timeouts: Timeouts = DEFAULT_TIMEOUTS) -> ServerSpec:
    """The bundled demo server over stdio, run by this interpreter from the folder that holds ``knime_mcp``.

    Started as ``python -m knime_mcp.demo_server`` in that folder, it needs no installed package: inside KNIME the
    package is importable only because KNIME puts the extension's ``src/`` on ``sys.path``, which a child process
    does not inherit, and ``sys.executable`` is the extension environment's Python.
    """
    command = shlex.join([sys.executable, "-m", "knime_mcp.demo_server"])
    package_folder = str(Path(__file__).resolve().parent.parent)
    return ServerSpec(target=command, transport="stdio", name=DEMO_SERVER, cwd=package_folder, timeouts=timeouts)


def _compact_json(data: Mapping[str, Any]) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


_CHARACTER_NAMES = {"\r": "a carriage return (CR)", "\n": "a line feed (LF)", "\0": "a NUL character"}

_FIX_HINT = (
    "Remove the character from the variable, credential or setting; a secret copied from a file often keeps the "
    "file's final line break."
)


def _character(char: str) -> str:
    if char in _CHARACTER_NAMES:
        return _CHARACTER_NAMES[char]
    return "a control character" if char < " " or char == "\x7f" else "a non-ASCII character"


def header_value_problem(value: str) -> str | None:
    """Why ``value`` cannot be sent in an HTTP header (RFC 9110 field values, as h11 enforces them): only printable
    ASCII and tabs, no white space at either end. Checked before sending, because the HTTP library's own error quotes
    the whole value, secret and all."""
    for index, char in enumerate(value):
        if char != "\t" and not " " <= char <= "~":
            return f"{'ends in' if index == len(value) - 1 else 'holds'} {_character(char)}"
    if value != value.strip(" \t"):
        return "starts or ends with white space"
    return None


def expand_env(value: str, *, server: str | None = None, header: bool = False) -> str:
    """Replace every ``${VAR}`` in ``value``; a missing variable, or (for a ``header`` value) one holding what an
    HTTP header cannot, is a ConfigError naming it, never its value."""

    def lookup(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in os.environ:
            raise ConfigError(
                f"Environment variable {name} is not set.",
                server=server,
                hint=f"Set {name} in the environment of KNIME or of this command.",
            )
        resolved = os.environ[name]
        if header and (problem := header_value_problem(resolved)):
            message = f"Environment variable {name} {problem}, which an HTTP header cannot hold."
            raise ConfigError(message, server=server, hint=_FIX_HINT)
        return resolved

    return ENV_REF.sub(lookup, value)


def _credential(name: str, lookup: CredentialLookup | None, server: str) -> tuple[str, str]:
    if lookup is None:
        raise ConfigError(
            f"Credential {name!r} cannot be read here.",
            server=server,
            hint="Use an environment reference such as ${API_TOKEN} outside KNIME.",
        )
    try:
        username, password = lookup(name)
    except (KeyError, RuntimeError) as exc:
        raise ConfigError(
            f"Credential {name!r} is not available.",
            server=server,
            hint="Connect a credentials flow variable with that name to the node.",
        ) from exc
    if not password:
        raise ConfigError(f"Credential {name!r} has an empty password.", server=server)
    return username, password


def resolve_secret(auth: AuthRef, lookup: CredentialLookup | None, server: str) -> tuple[str, str]:
    """The ``(username, secret)`` pair of an auth reference, resolved now. A bearer token or header secret goes
    into a header as it is, so it is checked for what a header cannot carry; a basic one is base64-encoded first, a
    query one percent-encoded."""
    header = auth.kind in ("bearer", "header")
    if auth.credential is not None:
        username, password = _credential(auth.credential, lookup, server)
        if header and (problem := header_value_problem(password)):
            raise ConfigError(
                f"The password of credential {auth.credential!r} {problem}, which an HTTP header cannot hold.",
                server=server,
                hint=_FIX_HINT,
            )
        return username, password
    username = expand_env(auth.username or "", server=server)
    return username, expand_env(auth.secret or "", server=server, header=header)


def resolve_headers(spec: ServerSpec, credentials: CredentialLookup | None = None) -> dict[str, str]:
    """The HTTP headers to send, with references resolved; the result must never be logged."""
    server = spec.display_name
    headers = {name: _header_value(name, value, server) for name, value in spec.headers.items()}
    auth = spec.auth
    if auth.kind == "none" or auth.kind in OAUTH_KINDS:
        return headers
    username, secret = resolve_secret(auth, credentials, server)
    match auth.kind:
        case "bearer":
            headers["Authorization"] = f"Bearer {secret}"
        case "header":
            headers[auth.header or ""] = secret
        case "basic":
            token = base64.b64encode(f"{username}:{secret}".encode()).decode()
            headers["Authorization"] = f"Basic {token}"
    return headers


def resolve_query(spec: ServerSpec, credentials: CredentialLookup | None = None) -> dict[str, str]:
    """The query parameters authentication adds (``kind="query"``), with the secret resolved; never to be logged."""
    if spec.auth.kind != "query" or spec.auth.parameter is None:
        return {}
    return {spec.auth.parameter: resolve_secret(spec.auth, credentials, spec.display_name)[1]}


def resolve_target(spec: ServerSpec) -> str:
    """The server URL to open, with each ``${VAR}`` of its query resolved and percent-encoded; never to be logged or
    shown (the URL kept in settings and tables is ``spec.target``, with the references)."""
    parts = urlsplit(spec.target)
    if not spec.is_url or not ENV_REF.search(parts.query):
        return spec.target
    server = spec.display_name
    query = ENV_REF.sub(lambda match: quote(expand_env(match[0], server=server), safe=""), parts.query)
    return urlunsplit(parts._replace(query=query))


def _header_value(name: str, value: str, server: str) -> str:
    """One extra header's value with its references resolved and checked; the error names the header or the
    variable, never the value."""
    resolved = expand_env(value, server=server, header=True)
    if problem := header_value_problem(resolved):
        raise ConfigError(f"The value of header {name!r} {problem}, which HTTP forbids.", server=server, hint=_FIX_HINT)
    return resolved


def resolved_secrets(spec: ServerSpec, credentials: CredentialLookup | None = None) -> frozenset[str]:
    """The secret values a session to ``spec`` resolves: what each ``${VAR}`` of its headers, environment and URL
    query holds (the query's also URL-encoded), and its authentication's secret (and its basic token and URL-encoded
    form), so that text relayed from the server can be masked. Values under four characters are left out: masking
    them would garble ordinary words."""
    references = (*spec.headers.values(), *spec.env.values(), spec.auth.secret or "")
    values = {os.environ.get(name, "") for text in references for name in ENV_REF.findall(text)}
    query = urlsplit(spec.target).query if spec.is_url else ""
    in_query = {os.environ.get(name, "") for name in ENV_REF.findall(query)}
    values |= {form for value in in_query for form in (value, quote(value, safe=""))}
    if spec.auth.credential is not None or spec.auth.secret is not None:
        username, secret = resolve_secret(spec.auth, credentials, spec.display_name)
        values |= {secret, base64.b64encode(f"{username}:{secret}".encode()).decode(), quote(secret, safe="")}
    return frozenset(value for value in values if len(value) >= 4)


def resolve_env(spec: ServerSpec) -> dict[str, str]:
    """The extra environment of a stdio server, with references resolved and checked: the operating system would
    refuse a NUL with an error that names neither the entry nor the server."""
    server = spec.display_name
    env = {name: expand_env(value, server=server) for name, value in spec.env.items()}
    if nul := [name for name, value in env.items() if "\0" in value]:
        # Only settings can carry a NUL (an operating system's environment cannot), so the entry is named.
        raise ConfigError(
            f"The environment entry {nul[0]!r} holds a NUL character, which a process environment cannot hold.",
            server=server,
            hint=_FIX_HINT,
        )
    return env
