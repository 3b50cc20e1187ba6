"""How to reach an MCP server: a frozen, JSON-round-tripping description that never holds a secret.

Secrets are held by reference only (:mod:`knime_mcp.config.references`): a KNIME credential *name*, or a ``${VAR}``
environment reference; a :class:`ServerSpec` or :class:`AuthRef` holding a secret written out cannot be made. Each
value checks itself as it is made, so no unchecked one exists, whether it comes from a node's settings, the CLI or a
table's JSON. The references are resolved at connect time by :mod:`knime_mcp.config.resolve`, above this module.

    spec = ServerSpec(target="https://example.com/mcp", auth=AuthRef(kind="bearer", secret="${API_TOKEN}"))
    ServerSpec.from_json(spec.to_json()) == spec
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, get_args
from urllib.parse import urlsplit

from knime_mcp.config.auth import AuthRef
from knime_mcp.config.limits import DEFAULT_TIMEOUTS, MAX_MESSAGE_BYTES, Timeouts
from knime_mcp.config.references import literal_secret_env, literal_secret_headers, literal_secret_query
from knime_mcp.config.tls import DEFAULT_TLS, TlsSettings
from knime_mcp.config.websocket import refuse_websocket
from knime_mcp.errors import ConfigError

__all__ = [
    "DEMO_SERVER",
    "Handshake",
    "ServerSpec",
    "TransportKind",
    "demo_server_spec",
]

TransportKind = Literal["auto", "streamable-http", "sse", "stdio"]
Handshake = Literal["discover", "initialize"]
"""How a server opens a session: ``server/discover`` (MCP 2026 and later) or the ``initialize`` handshake (earlier)."""


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

    tls: TlsSettings = DEFAULT_TLS
    """How the server's certificate is checked, and the client certificate shown to it. Part of the identity (and
    so of the seal) when set, left out of the JSON when default, so tables written before it read, and are sealed,
    the same."""

    max_response_bytes: int | None = None
    """The largest response an HTTP tool (an API operation or a webhook) reads; a larger one is a tool error. None:
    the default, :data:`~knime_mcp.config.limits.MAX_MESSAGE_BYTES` (64 MiB), and left out of the JSON, so tables
    written before it read, and are sealed, the same; MCP servers ignore it."""

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
        refuse_websocket(self.target)
        if self.transport not in get_args(TransportKind):
            raise ConfigError(f"Unknown transport {self.transport!r}; use one of {', '.join(get_args(TransportKind))}.")
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
        if self.max_response_bytes is not None and self.max_response_bytes < 1:
            raise ConfigError("The largest response must be a positive number of bytes.")
        if self.max_response_bytes == MAX_MESSAGE_BYTES:
            object.__setattr__(self, "max_response_bytes", None)  # the default written out is the default
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
        if self.max_response_bytes is None:
            del data["max_response_bytes"]
        if self.tls.is_default:
            del data["tls"]
        else:
            data["tls"] = self.tls.to_dict()
        data["auth"] = self.auth.to_dict()
        data["timeouts"] = self.timeouts.to_dict()
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
        values["tls"] = TlsSettings.from_dict(values.get("tls"))
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
    package_folder = str(Path(__file__).resolve().parents[2])
    return ServerSpec(target=command, transport="stdio", name=DEMO_SERVER, cwd=package_folder, timeouts=timeouts)


def _compact_json(data: Mapping[str, Any]) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"))
