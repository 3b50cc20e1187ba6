"""A node's warnings combined into one: KNIME shows only the last ``set_warning``, so a later note would hide an
earlier warning (certificate verification skipped, say). Each warning added keeps those set before it, first."""

from __future__ import annotations

from weakref import WeakKeyDictionary

import knime.extension as knext

__all__ = ["add_warning"]

_SET: WeakKeyDictionary[knext.ExecutionContext, list[str]] = WeakKeyDictionary()
"""The warnings set so far in each execution."""


def add_warning(ctx: knext.ExecutionContext, message: str) -> None:
    """Show ``message`` on the node after the warnings this execution set before it."""
    shown = _SET.setdefault(ctx, [])
    shown.append(message)
    ctx.set_warning(" | ".join(shown))
