"""KNIME I/O: a node's warnings combined into one: KNIME shows only the last ``set_warning``, so a later note would
hide an earlier warning (certificate verification skipped, say). Each warning added keeps those set before it, first."""

from __future__ import annotations

from collections.abc import Iterable
from weakref import WeakKeyDictionary

import knime.extension as knext

from knime_mcp.config import ServerSpec

__all__ = ["add_warning", "warn_if_insecure"]

_SET: WeakKeyDictionary[knext.ExecutionContext, list[str]] = WeakKeyDictionary()
"""The warnings set so far in each execution."""


def add_warning(ctx: knext.ExecutionContext, message: str) -> None:
    """Show ``message`` on the node after the warnings this execution set before it."""
    shown = _SET.setdefault(ctx, [])
    shown.append(message)
    ctx.set_warning(" | ".join(shown))


def warn_if_insecure(ctx: knext.ExecutionContext, specs: Iterable[ServerSpec]) -> None:
    """Tell the person on the node that a server's certificate is not checked; the node's later warnings add to it."""
    if names := [spec.display_name for spec in specs if not spec.tls.verify]:
        add_warning(ctx, f"Certificate verification is skipped for {', '.join(names)}: the connection is not secure.")
