"""KNIME I/O: the nodes' one error boundary: core errors become the KNIME failures a workflow builder can act on."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import knime.extension as knext

from knime_mcp.errors import ConfigError


@contextmanager
def knime_errors() -> Iterator[None]:
    """A bad setting is an invalid-settings error (KNIME marks the node as misconfigured); every other
    knime-mcp error already says what happened and what to do, so it fails the node as it is."""
    try:
        yield
    except ConfigError as exc:
        raise knext.InvalidParametersError(str(exc)) from exc
