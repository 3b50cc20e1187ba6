"""Secret values masked in text, and in the errors that quote them: servers echo what they were given.

Below :mod:`knime_mcp.redaction`, which masks secret-looking arguments with the same :data:`MASK`.
"""

from __future__ import annotations

from collections.abc import Iterable

from knime_mcp.errors.tree import McpToolError

__all__ = ["MASK", "masked", "scrub"]

MASK = "***"


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
