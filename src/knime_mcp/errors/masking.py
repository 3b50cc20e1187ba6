"""Secret values masked in text, and in the errors that quote them: servers echo what they were given.

Below :mod:`knime_mcp.redaction`, which masks secret-looking arguments with the same :data:`MASK`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import quote

from knime_mcp.errors.tree import McpToolError

__all__ = ["MASK", "masked", "scrub", "scrub_grant"]

MASK = "***"

_JWT = re.compile(r"eyJ[\w-]{2,}\.[\w-]*\.?[\w-]*")
"""A JWT (a JWS's base64url header, payload and signature), or its first two parts."""


def scrub(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every secret value in it replaced by :data:`MASK`, longest first (so a secret holding another
    is masked whole)."""
    for secret in sorted(filter(None, secrets), key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def masked(error: McpToolError, secrets: Iterable[str]) -> McpToolError:
    """``error`` with every secret value in its message and hint masked: servers echo what they were given (a stdio
    server printing its token at start-up, an HTTP body quoting a header)."""
    secrets = list(secrets)
    error.message = scrub(error.message, secrets)
    error.hint = error.hint and scrub(error.hint, secrets)
    error.args = (error.message,)
    return error


def scrub_grant(text: str, secrets: Iterable[str | None]) -> str:
    """What an OAuth server answered, with the secrets of the request it answers masked as :func:`scrub` does, as
    they were sent too (URL-encoded in a form), and every JWT in it: an assertion, an ID token or an ID-JAG it quotes
    back, whole or cut short. An OAuth refusal never needs to show a token."""
    secrets = [secret for secret in secrets if secret]
    return _JWT.sub(MASK, scrub(text, [*secrets, *(quote(secret, safe="") for secret in secrets)]))
