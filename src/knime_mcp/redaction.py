"""Redaction of secret-looking tool-call arguments, wherever arguments are shown: the tool-call log's columns, the
errors that quote invalid arguments (the model's tool message, the Tool Caller's *Error* column, the CLI's
``Error:`` line), and the agent's run as the CLI prints it.

An argument is secret-looking when its key is (``password``, ``api_key``, ``auth_token``, ``session`` …); its whole
value is masked, nested objects included. Text that quotes arguments (a schema error's ``'hunter2' is not of type
'integer'``, the raw text of a model's malformed JSON) gets the same treatment: every value :func:`redact` hides is
masked in it, and so is every ``"key": value`` pair whose key looks secret, and every secret-looking query parameter
of a URL (``?access_token=…``, ``&X-Amz-Signature=…``), as libraries' logs and errors quote the URLs they fetch.

    redact({"user": "ann", "password": "hunter2"})              # {"user": "ann", "password": "***"}
    redact_text("password: 'hunter2' is too short", arguments)  # "password: *** is too short"
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from knime_mcp.errors import MASK, scrub

__all__ = ["CREDENTIAL_VALUE", "HIDDEN_VALUE", "is_secret_key", "is_secret_parameter", "redact", "redact_text"]

_SECRET_WORD = r"pass|secret|token|api[-_]?key|auth|credential|cookie|session"
"""What a secret-looking key holds somewhere in its name."""

_SECRET_KEY = re.compile(_SECRET_WORD, re.IGNORECASE)

_KEY_VALUE = re.compile(
    r"""(?P<key>(?<![\w-])(?P<quote>["']?)(?P<name>[\w-]{1,128})(?P=quote)\s*:\s*)"""
    r"""(?P<value>"(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?|-?\d[\d.eE+-]*)"""
)
"""A ``key: value`` pair with a quoted (perhaps cut off) or numeric value, as JSON, Python reprs and schema errors
write them; an unquoted word after the colon is prose, not a value. Masked when the key looks secret. A key starts
where a word does and is a bounded run, so that text of any length (a megabyte of base64 in a logged message) is
scanned in linear time: an unbounded run searched for a secret word inside it backtracked quadratically."""

CREDENTIAL_VALUE = re.compile(
    r"(?:bearer|basic|token|digest|negotiate|ntlm|bot|aws4-hmac-sha256)\s+\S"
    r"|(?:sk|pk|rk)-[\w-]{16,}|gh[pousr]_\w{20,}|github_pat_\w{20,}|glpat-[\w-]{16,}|xox[abpr]-[\w-]{10,}"
    r"|A[KS]IA[0-9A-Z]{16}|AIza[\w-]{35}|eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.",
    re.IGNORECASE,
)
"""Values that are plainly credentials whatever their header's or parameter's name: an authorization scheme with
its credentials, or a token in a well-known vendor format (OpenAI, GitHub, GitLab, Slack, AWS, Google, a JWT)."""

_KEY_PARAMETER = re.compile(r"[-_.]key$|(?:^|[-_.])(?:sig|signature|pwd)$", re.IGNORECASE)
"""Query parameter names that hold a credential without a secret word: ``access_key``, ``sig``,
``X-Amz-Signature``; a bare ``key`` is left alone, as it names a record or a cache entry as often as a secret."""

_QUERY_PAIR = re.compile(r"(?P<head>[?&;](?P<name>[\w.~%+-]+)=)(?P<value>[^&#\s\"'<>]+)")
"""A ``name=value`` pair of a URL's query as text quotes it; the value ends where the URL does."""

HIDDEN_VALUE = "its value does not fit (not shown, as it may be a secret)"
"""What a conversion error says instead of quoting the value of a secret-looking parameter or field."""

_MIN_BARE = 4
"""Values shorter than this are masked only where quoted: masking a bare ``1`` would garble every number."""


def is_secret_key(key: object) -> bool:
    """Whether an argument or field of this name holds a secret, so that its value is never shown."""
    return bool(_SECRET_KEY.search(str(key)))


def is_secret_parameter(name: str) -> bool:
    """Whether a URL query parameter of this name holds a secret, so that its value is never written out."""
    return is_secret_key(name) or bool(_KEY_PARAMETER.search(name))


def redact(arguments: Any) -> Any:
    """A copy of call arguments with the values of secret-looking keys replaced by ``***``, for logs, tables and
    terminals; arguments a model sent as text (malformed JSON) are masked as :func:`redact_text` does."""
    if isinstance(arguments, str):
        return redact_text(arguments)
    return _masked(arguments)


def _masked(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: MASK if is_secret_key(k) else _masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


def redact_text(text: str, arguments: Any = None) -> str:
    """``text`` with every value :func:`redact` hides from ``arguments`` masked, in any of the ways a message
    quotes it (as it is, as a Python repr, as JSON), and with every secret-looking ``"key": value`` pair and URL
    query parameter masked."""
    text = scrub(text, {form for value in _hidden(arguments) for form in _forms(value)})
    text = _KEY_VALUE.sub(_masked_pair, text) if ":" in text else text
    return _QUERY_PAIR.sub(_masked_parameter, text) if "=" in text else text


def _masked_pair(match: re.Match[str]) -> str:
    return match["key"] + MASK if is_secret_key(match["name"]) else match[0]


def _masked_parameter(match: re.Match[str]) -> str:
    secret = is_secret_parameter(match["name"]) or CREDENTIAL_VALUE.match(match["value"])
    return match["head"] + MASK if secret else match[0]


def _hidden(value: Any, secret: bool = False) -> Iterator[Any]:
    """The values, whole and their parts, that sit under a secret-looking key."""
    if secret:
        yield value
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from _hidden(item, secret or is_secret_key(key))
    elif isinstance(value, list):
        for item in value:
            yield from _hidden(item, secret)


def _forms(value: Any) -> Iterator[str]:
    """How messages write ``value``: its repr (as jsonschema does), its JSON, and as it is; forms that are not
    quoted only when long enough to mask safely."""
    forms = {repr(value), json.dumps(value, ensure_ascii=False, default=str), str(value)}
    quoted = isinstance(value, str) and value
    yield from (form for form in forms if len(form) >= _MIN_BARE or (quoted and form != value))
