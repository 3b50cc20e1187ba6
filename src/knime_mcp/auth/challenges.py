"""The challenges of ``WWW-Authenticate`` headers (RFC 9110 §11.6.1), as a server may write them: scheme names in any
case, several challenges in one header, several headers.

    challenges(['Bearer realm="mcp", DPoP error="use_dpop_nonce", algs="ES256 EdDSA"'])
    # [Challenge("bearer", {"realm": "mcp"}), Challenge("dpop", {"error": "use_dpop_nonce", "algs": "ES256 EdDSA"})]

Neither httpx nor the SDK parses them (the SDK searches one header for a parameter by pattern), so this does, for
the DPoP challenges (RFC 9449 §7.1) an MCP server sends. A header that does not follow the grammar gives what it
holds up to the fault, never an error: it comes from a server.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["Challenge", "challenges"]

_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_SCHEME = re.compile(rf"[\s,]*({_TOKEN})")
_PARAM = re.compile(rf"[ \t]*({_TOKEN})[ \t]*=[ \t]*({_TOKEN}|\"(?:[^\"\\]|\\.)*\")[ \t]*")
_TOKEN68 = re.compile(r"[ \t]*([A-Za-z0-9\-._~+/]+=*)[ \t]*(?=,|$)")
_SEPARATOR = re.compile(r"[ \t]*(?:,[ \t]*)+")
_QUOTED_PAIR = re.compile(r"\\(.)")


@dataclass(frozen=True)
class Challenge:
    """One challenge: its scheme (lower case: scheme names are case-insensitive) and its parameters (names lower
    case, quoted values unquoted); a token68 is the parameter ``""``."""

    scheme: str
    params: dict[str, str] = field(default_factory=dict)


def challenges(headers: Iterable[str]) -> list[Challenge]:
    """Every challenge of every ``WWW-Authenticate`` header value, in order."""
    return [challenge for header in headers for challenge in _parse(header)]


def _parse(header: str) -> list[Challenge]:
    found: list[Challenge] = []
    position = 0
    while (scheme := _SCHEME.match(header, position)) is not None:
        params: dict[str, str] = {}
        position = scheme.end()
        if header[position : position + 1] in (" ", "\t"):
            position = _read_params(header, position, params)
        found.append(Challenge(scheme[1].lower(), params))
        if (comma := header.find(",", position)) < 0:
            break
        position = comma  # past anything that does not parse, to the next list element
    return found


def _read_params(header: str, position: int, params: dict[str, str]) -> int:
    """Read a token68 or a comma-separated list of parameters into ``params``; where reading stopped."""
    if (param := _PARAM.match(header, position)) is None:
        if (token68 := _TOKEN68.match(header, position)) is not None:
            params[""] = token68[1]
            return token68.end()
        return position
    while param is not None:
        value = param[2]
        params.setdefault(param[1].lower(), _QUOTED_PAIR.sub(r"\1", value[1:-1]) if value[:1] == '"' else value)
        position = param.end()
        if (separator := _SEPARATOR.match(header, position)) is None:
            break
        param = _PARAM.match(header, separator.end())  # None where the next challenge starts
    return position
