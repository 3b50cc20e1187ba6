"""JSON text as JSON defines its numbers, for what a table's cells, settings and command lines hold as arguments.

Python's parser also takes ``NaN`` and ``Infinity``, reads ``1e999`` as an infinity (which the SDK then sends as
null), reads integers no double holds (which most tools cannot) and fails with a plain ValueError past 4,300 digits
(which would stop a whole run instead of failing a row). Layer: values, no I/O; the Tool Caller's cells, every JSON
object setting (:func:`knime_mcp.calls.rows.json_object`) and the CLI's ``--args`` read JSON through it.

    strict_json('{"a": 1}')          # {"a": 1}
    strict_json("[1e999]")           # NotAJsonNumber: 1e999, a number beyond the range of a double
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

__all__ = ["NotAJsonNumber", "strict_json"]


class NotAJsonNumber(ValueError):
    """A number in JSON text that JSON cannot carry: ``NaN``, ``Infinity``, or one beyond the range of a double."""


def strict_json(text: str) -> Any:
    """JSON text parsed, with :class:`NotAJsonNumber` naming the first number JSON cannot carry; malformed text
    raises :class:`json.JSONDecodeError`."""
    return json.loads(text, parse_constant=_no_constant, parse_float=_double, parse_int=_integer)


def _no_constant(name: str) -> Any:
    raise NotAJsonNumber(f"{name}, which is not a JSON number")


def _double(text: str) -> float:
    if math.isinf(number := float(text)):
        raise NotAJsonNumber(f"{_shortened(text)}, a number beyond the range of a double")
    return number


def _integer(text: str) -> int:
    try:
        number = int(text)
    except ValueError:  # more digits than Python reads
        number = None
    if number is None or abs(number) > sys.float_info.max:
        raise NotAJsonNumber(f"{_shortened(text)}, a number beyond the range of a double")
    return number


def _shortened(text: str) -> str:
    return text if len(text) <= 24 else f"{text[:20]}... ({len(text):,} characters)"
