"""Secrets resolved at connect time: the one place a ``${VAR}`` reference or a credential name becomes its value.

Above :mod:`knime_mcp.config.spec`: :func:`resolve_headers` and :func:`resolve_env` are called by the client (the
transport layer only receives the values), :func:`resolve_target` by the transport as it opens the URL, and
:func:`resolved_secrets` gives the values to mask in text a server relays. A missing variable or credential, or one
whose value a header cannot carry (a CR, LF, NUL or other control character), fails fast with a :class:`ConfigError`
naming it, never its value. What these functions return must never be logged.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Callable
from urllib.parse import quote, urlsplit, urlunsplit

from knime_mcp.config.auth import OAUTH_KINDS, AuthRef
from knime_mcp.config.references import ENV_REF, INPUT_REF
from knime_mcp.config.spec import ServerSpec
from knime_mcp.errors import ConfigError

__all__ = [
    "CredentialLookup",
    "credential_password",
    "expand_env",
    "expand_path",
    "header_value_problem",
    "resolve_env",
    "resolve_headers",
    "resolve_query",
    "resolve_secret",
    "resolve_target",
    "resolved_secrets",
]

CredentialLookup = Callable[[str], tuple[str, str]]
"""Maps a credential name to ``(username, password)``; KNIME nodes wrap ``ctx.get_credentials``."""


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


def expand_path(setting: str, *, server: str | None = None) -> tuple[str, str]:
    """The path a path setting names (a CA bundle, a client certificate, a token file), with ``${VAR}`` and ``~``
    expanded, and how a message shows it: the setting as written where it holds a reference, since the variable may
    hold more than a path (a token put where its file's path belongs), else the path."""
    path = os.path.expanduser(expand_env(setting, server=server))
    return path, setting if ENV_REF.search(setting) else path


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


def credential_password(name: str, lookup: CredentialLookup | None, server: str) -> str:
    """The password of the KNIME credential ``name`` (e.g. a client key's passphrase), read now."""
    return _credential(name, lookup, server)[1]


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
    query holds (the query's also URL-encoded), the passwords of the credentials its environment names, and its
    authentication's secret (and its basic token and URL-encoded form), so that text relayed from the server can be
    masked. Values under four characters are left out: masking them would garble ordinary words."""
    references = (*spec.headers.values(), *spec.env.values(), spec.auth.secret or "")
    values = {os.environ.get(name, "") for text in references for name in ENV_REF.findall(text)}
    query = urlsplit(spec.target).query if spec.is_url else ""
    in_query = {os.environ.get(name, "") for name in ENV_REF.findall(query)}
    values |= {form for value in in_query for form in (value, quote(value, safe=""))}
    in_env = {name for text in spec.env.values() for name in INPUT_REF.findall(text)}
    values |= {credential_password(name, credentials, spec.display_name) for name in in_env}
    if spec.auth.credential is not None or spec.auth.secret is not None:
        username, secret = resolve_secret(spec.auth, credentials, spec.display_name)
        values |= {secret, base64.b64encode(f"{username}:{secret}".encode()).decode(), quote(secret, safe="")}
    return frozenset(value for value in values if len(value) >= 4)


def _env_value(value: str, credentials: CredentialLookup | None, server: str) -> str:
    """One environment value with its references resolved in one pass, so that neither a credential's password nor
    a variable's value is read for references in turn."""
    parts = INPUT_REF.split(value)  # text, credential name, text, …
    return "".join(
        credential_password(part, credentials, server) if index % 2 else expand_env(part, server=server)
        for index, part in enumerate(parts)
    )


def resolve_env(spec: ServerSpec, credentials: CredentialLookup | None = None) -> dict[str, str]:
    """The extra environment of a stdio server, with references resolved and checked: each ``${VAR}``, and each
    ``${input:ID}`` as the password of the credential ``ID`` (a ConfigError without ``credentials``, as outside KNIME).
    The operating system would refuse a NUL with an error that names neither the entry nor the server."""
    server = spec.display_name
    env = {name: _env_value(value, credentials, server) for name, value in spec.env.items()}
    if nul := [name for name, value in env.items() if "\0" in value]:
        # Only settings can carry a NUL (an operating system's environment cannot), so the entry is named.
        raise ConfigError(
            f"The environment entry {nul[0]!r} holds a NUL character, which a process environment cannot hold.",
            server=server,
            hint=_FIX_HINT,
        )
    return env
