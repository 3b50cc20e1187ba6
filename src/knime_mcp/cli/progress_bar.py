"""The command line's progress bar: rows done (of the total, when known), the rate and the errors so far.

Drawn on a terminal only, with ``\\r`` updates at most :data:`REDRAW_SECONDS` apart, and ended with a newline; where
stderr is a pipe or a file, :func:`progress_bar` gives ``None`` and nothing is printed. Nothing here knows MCP: the
CLI feeds it the rows of each batch the Tool Caller writes.

    bar = progress_bar(sys.stderr, total=5000)
    bar.advance(rows=250, errors=1)   # [####----------------]   250 of 5,000 rows  410 rows/s  1 failed
    bar.close()
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

__all__ = ["REDRAW_SECONDS", "ProgressBar", "progress_bar"]

REDRAW_SECONDS = 0.1
"""At most about ten redraws a second: a fast tool must not spend its time writing to the terminal."""

_WIDTH = 20


def progress_bar(stream: TextIO, total: int | None) -> ProgressBar | None:
    """A bar on ``stream`` if it is a terminal, else None (a pipe or a log file gets no ``\\r`` noise)."""
    isatty = getattr(stream, "isatty", None)
    try:
        return ProgressBar(stream, total) if isatty is not None and isatty() else None
    except ValueError:  # a closed stream
        return None


class ProgressBar:
    """Counts rows and errors, and redraws one line in place at most every :data:`REDRAW_SECONDS`."""

    def __init__(self, stream: TextIO, total: int | None, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._stream, self._total, self._clock = stream, total, clock
        self._started = clock()
        self._drawn_at: float | None = None
        self._width = 0
        self.rows = self.errors = 0

    def advance(self, *, rows: int, errors: int = 0) -> None:
        self.rows += rows
        self.errors += errors
        now = self._clock()
        if self._drawn_at is None or now - self._drawn_at >= REDRAW_SECONDS:
            self._draw(now)

    def close(self) -> None:
        """Draw the final counts and end the line; a bar that never drew leaves no empty line behind."""
        if self.rows or self._drawn_at is not None:
            self._draw(self._clock())
            self._stream.write("\n")
            self._stream.flush()

    def line(self, now: float) -> str:
        elapsed = now - self._started
        rate = f"{self.rows / elapsed:,.0f} rows/s" if elapsed > 0 else ""
        failed = f"  {self.errors:,} failed" if self.errors else ""
        if self._total:
            done = min(self.rows / self._total, 1.0)
            filled = round(done * _WIDTH)
            bar = f"[{'#' * filled}{'-' * (_WIDTH - filled)}] "
            count = f"{self.rows:,} of {self._total:,} rows"
        else:
            bar, count = "", f"{self.rows:,} rows"
        return f"{bar}{count}  {rate}{failed}".rstrip()

    def _draw(self, now: float) -> None:
        text = self.line(now)
        # Pad over a longer line drawn before, e.g. when the rate got shorter.
        self._stream.write(f"\r{text.ljust(self._width)}")
        self._stream.flush()
        self._width, self._drawn_at = len(text), now
