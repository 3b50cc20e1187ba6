"""Stable tool ids: the same server and tool give the same id in every listing, process and machine.

Layer: values, below :class:`~knime_mcp.tools.tool.MCPTool`, whose ``tool_id`` it computes from the tool's fields,
so a tools table needs no column of its own to keep it. An MCP tool's id comes from where its server is (its URL, or
its command and arguments) and the server's own name for the tool; an HTTP tool's from the API's base URL, the
method and the path. Nothing else of the server counts: not its display name, headers, environment, working folder,
authentication or timeouts (which hold references to secrets, or differ between machines for the same server), and
not what is only cosmetic in an address (the case of its scheme and host, a default port, a trailing slash, the
folder a command is run from, ``.exe``).

    tool_id(server_address(spec), "mcp", ["search"])   # "mcp-3f5c…" (16 hex digits)
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from functools import lru_cache
from json.encoder import encode_basestring_ascii
from urllib.parse import urlsplit, urlunsplit

__all__ = ["ID_DIGITS", "server_address", "tool_id"]

ID_DIGITS = 16
"""Hex digits of SHA-256 kept: 64 bits, so that even a registry of millions of tools holds no two alike."""

_DEFAULT_PORTS = {"http": 80, "https": 443}
_PROGRAM_SUFFIX = re.compile(r"\.(exe|cmd|bat)$", re.IGNORECASE)


@lru_cache(maxsize=256)
def server_address(target: str) -> str:
    """Where a server is, without what is cosmetic: a URL with its scheme and host in lower case, without a user,
    a default port, a fragment or a trailing slash; a command line as its program's file name (without folder and
    ``.exe``) and its arguments, as they are. Cached: the tools of a listing share a few servers."""
    if target.startswith(("http://", "https://")):
        parts = urlsplit(target)
        scheme = parts.scheme.lower()
        host = (parts.hostname or "").lower()
        if ":" in host:
            host = f"[{host}]"  # an IPv6 address keeps its brackets
        port = "" if parts.port in (None, _DEFAULT_PORTS.get(scheme)) else f":{parts.port}"
        return urlunsplit((scheme, host + port, parts.path.rstrip("/"), parts.query, ""))
    try:
        words = shlex.split(target)
    except ValueError:  # unbalanced quotes: such a server cannot start, but its tools still get an id
        words = target.split()
    if not words:
        return ""
    program = _PROGRAM_SUFFIX.sub("", re.split(r"[\\/]", words[0])[-1])
    return json.dumps([program, *words[1:]], separators=(",", ":"))


def tool_id(address: str, kind: str, names: list[str]) -> str:
    """``KIND-`` and the first :data:`ID_DIGITS` hex digits of the SHA-256 of the server's address and the tool's
    ``names`` (the server's own name for it, or an HTTP request's method and path), as the compact JSON array
    ``[kind, address, *names]``. A table computes it for every tool, so the server's part is written once per
    server and each name alone joins it: one hash of short text per tool."""
    text = ",".join([_server_part(kind, address), *map(encode_basestring_ascii, names)]) + "]"
    return f"{kind}-{hashlib.sha256(text.encode()).hexdigest()[:ID_DIGITS]}"


@lru_cache(maxsize=256)
def _server_part(kind: str, address: str) -> str:
    """The opening of the hashed JSON array: ``["kind","address"`` (``json.dumps`` escaping, closing bracket off)."""
    return json.dumps([kind, address], separators=(",", ":"))[:-1]
