"""How to reach a server and how long to wait: the configuration values every layer shares, and their secrets.

The value layer's settings, below the wire (:mod:`knime_mcp.mcp`, :mod:`knime_mcp.http`) and above only
:mod:`knime_mcp.errors` and :mod:`knime_mcp.redaction`. Import from here; the modules, bottom to top:

- :mod:`~knime_mcp.config.references`: how a setting names a secret (``${VAR}``), and spotting one written out;
- :mod:`~knime_mcp.config.websocket`: a ``ws://`` or ``wss://`` server refused, saying why (:func:`refuse_websocket`);
- :mod:`~knime_mcp.config.limits`: :class:`Timeouts`, and what servers may ask of a run (:class:`ServerRequestPolicy`);
- :mod:`~knime_mcp.config.auth`: :class:`AuthRef`, which sign-in a server gets and where its secret comes from;
- :mod:`~knime_mcp.config.spec`: :class:`ServerSpec`, which holds an :class:`AuthRef`; both frozen, checked as they
  are made, and round-tripping through JSON without ever holding a secret;
- :mod:`~knime_mcp.config.pasted`: servers from a pasted Claude Desktop, Cursor or VS Code configuration
  (:func:`parse_pasted`);
- :mod:`~knime_mcp.config.tls`: :class:`TlsSettings`, a server's CA bundle, trust store and client certificate;
- :mod:`~knime_mcp.config.resolve`: the references resolved to their values at connect time, and only there.

    spec = ServerSpec(target="https://example.com/mcp", auth=AuthRef(kind="bearer", secret="${API_TOKEN}"))
    ServerSpec.from_json(spec.to_json()) == spec
"""

from __future__ import annotations

from knime_mcp.config.auth import ASSERTION_KINDS, OAUTH_KINDS, AuthKind, AuthRef
from knime_mcp.config.limits import (
    DEFAULT_SERVER_REQUESTS,
    DEFAULT_TIMEOUTS,
    ElicitationMode,
    SamplingLimits,
    ServerRequestPolicy,
    Timeouts,
)
from knime_mcp.config.pasted import MAX_PASTED_CHARS, parse_pasted
from knime_mcp.config.references import ENV_REF, literal_secret_env, literal_secret_headers, literal_secret_query
from knime_mcp.config.resolve import (
    CredentialLookup,
    credential_password,
    expand_env,
    expand_path,
    header_value_problem,
    resolve_env,
    resolve_headers,
    resolve_query,
    resolve_secret,
    resolve_target,
    resolved_secrets,
)
from knime_mcp.config.spec import DEMO_SERVER, Handshake, ServerSpec, TransportKind, demo_server_spec
from knime_mcp.config.tls import DEFAULT_TLS, TlsSettings
from knime_mcp.config.websocket import refuse_websocket

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
    "TlsSettings",
    "DEFAULT_TLS",
    "Timeouts",
    "TransportKind",
    "ENV_REF",
    "ASSERTION_KINDS",
    "OAUTH_KINDS",
    "credential_password",
    "demo_server_spec",
    "expand_env",
    "expand_path",
    "header_value_problem",
    "literal_secret_env",
    "literal_secret_headers",
    "literal_secret_query",
    "MAX_PASTED_CHARS",
    "parse_pasted",
    "refuse_websocket",
    "resolve_env",
    "resolve_headers",
    "resolve_query",
    "resolve_secret",
    "resolve_target",
    "resolved_secrets",
]
