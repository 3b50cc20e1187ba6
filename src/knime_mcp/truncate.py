"""The output cap: how much of a tool result's text reaches a model.

A tool may return megabytes; a model's context holds far less, and paying for it helps nobody. The agent caps the
text it hands to a model with :func:`cap_text`; the full result stays in the output table or the
tool-call log, and the note appended to the cut text says so. Pure; nothing here knows about MCP.

    text, truncated = cap_text(result.text)            # at most 100,000 UTF-8 bytes, note included
"""

from __future__ import annotations

from knime_mcp.errors import ConfigError

__all__ = ["DEFAULT_LIMIT_BYTES", "MIN_LIMIT_BYTES", "cap_text"]

DEFAULT_LIMIT_BYTES = 100_000
"""The default cap: 100 KB of UTF-8 text."""

MIN_LIMIT_BYTES = 1_000
"""The smallest cap accepted: room for the note and some text."""

_NOTE_BUDGET = 256
"""Bytes kept free for the note; the longest note (two 20-digit sizes) is well below it."""


def cap_text(text: str, limit_bytes: int = DEFAULT_LIMIT_BYTES) -> tuple[str, bool]:
    """``text`` unchanged if its UTF-8 form fits ``limit_bytes``, else its start plus a note; and whether it was cut.

    The cut never splits a character, and the capped text including the note is at most ``limit_bytes`` long.
    """
    if limit_bytes < MIN_LIMIT_BYTES:
        raise ConfigError(
            f"The output cap of {limit_bytes:,} bytes is too small.",
            hint=f"Set the output cap to at least {MIN_LIMIT_BYTES:,} bytes.",
        )
    encoded = text.encode("utf-8", errors="surrogatepass")
    if len(encoded) <= limit_bytes:
        return text, False
    kept = encoded[: limit_bytes - _NOTE_BUDGET].decode("utf-8", errors="ignore")
    kept_bytes = len(kept.encode("utf-8"))
    note = (
        f"\n\n[Output truncated: showing the first {kept_bytes:,} of {len(encoded):,} bytes; "
        f"{len(encoded) - kept_bytes:,} bytes were cut. The full result is in the output table or the tool-call log.]"
    )
    return kept + note, True
