"""Masking of secrets in the log records of the libraries below the wire layer: the MCP SDK logs every message it
sends and receives at DEBUG (tool-call arguments included) and the URL it connects to, httpx logs every request's
URL at INFO, and httpcore its failures at DEBUG. A URL may carry a resolved ``${VAR}`` token in its query.

A filter on those loggers masks, as :func:`knime_mcp.redaction.redact_text` does, every secret-looking ``key: value``
pair and URL query parameter in each record's message and traceback before any handler sees it; the records stay,
so DEBUG logging keeps its use. Python consults a logger's filters only for records logged to that very logger, not
for its children's, so the filter is added to every logger of these libraries: :func:`mask_library_logs` runs as
each transport opens, which covers SDK modules imported lazily (OAuth) too, and costs a length check when no new
logger appeared.
"""

from __future__ import annotations

import logging

from knime_mcp.redaction import redact_text

__all__ = ["LIBRARY_LOGGERS", "mask_library_logs"]

LIBRARY_LOGGERS = ("mcp", "httpx2", "httpcore2", "httpx", "httpcore")
"""The loggers (and their children) whose records may quote arguments or URLs."""


class _MaskingFilter(logging.Filter):
    """Rewrites a record's message and traceback with secret-looking values masked; never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        masked = redact_text(text)
        if masked != text:
            record.msg, record.args = masked, None
        if record.exc_info and not record.exc_text:
            record.exc_text = redact_text(logging.Formatter().formatException(record.exc_info))
        return True


_FILTER = _MaskingFilter()
_known = 0
"""How many loggers existed when the filter was last added, so that a call with none new returns at once."""


def mask_library_logs() -> None:
    """Add the masking filter to every logger of :data:`LIBRARY_LOGGERS` that lacks it."""
    global _known
    loggers = logging.root.manager.loggerDict
    if len(loggers) == _known:
        return
    for name, logger in list(loggers.items()):
        if isinstance(logger, logging.Logger) and name.split(".", 1)[0] in LIBRARY_LOGGERS:
            if _FILTER not in logger.filters:
                logger.addFilter(_FILTER)
    _known = len(loggers)
