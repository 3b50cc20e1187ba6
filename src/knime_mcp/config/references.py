"""How a setting names a secret, and how a secret written out instead is spotted.

The bottom of :mod:`knime_mcp.config`: a setting may name a secret only by a ``${VAR}`` environment reference
(:data:`ENV_REF`) or a KNIME credential name, because settings are saved in clear, in workflows, tables and command
lines. The ``literal_secret_*`` functions find a header, stdio environment entry or URL query parameter whose secret
is written out, so that :class:`~knime_mcp.config.spec.ServerSpec` and the CLI can refuse it. Resolving a reference to
its value is :mod:`knime_mcp.config.resolve`, above the spec.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import parse_qsl, urlsplit

from knime_mcp.redaction import CREDENTIAL_VALUE, is_secret_parameter

__all__ = ["ENV_REF", "INPUT_REF", "literal_secret_env", "literal_secret_headers", "literal_secret_query"]

ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
"""A ``${VAR}`` environment reference, the one way a setting may name a secret."""

INPUT_REF = re.compile(r"\$\{input:([^}]*)\}")
"""VS Code's ``${input:ID}``: in a stdio server's environment, the password of the KNIME credential ``ID``."""


_CREDENTIAL_HEADER = re.compile(
    r"authorization|cookie|token|secret|passw|api[-_]?key|auth|credential|session|signature|(?:^|[-_])key$"
    r"|(?:^|[-_])(?:access|private|client|subscription)[-_]?key",
    re.IGNORECASE,
)
"""Header names whose values are credentials (``X-Access-Key``, ``Private-Token``, ``X-Goog-Api-Key``, …)."""


_CREDENTIAL_ENV = re.compile(
    r"(?:^|_)(?:token|secret|passphrase|key|apikey|credentials?|auth|cookie|session)s?(?:$|_)|passw(?:or)?d",
    re.IGNORECASE,
)
"""Environment variable names whose values are credentials: ``API_KEY``, ``GITHUB_TOKEN``,
``AWS_SECRET_ACCESS_KEY``, ``PGPASSWORD``."""


def literal_secret_headers(headers: Mapping[str, str]) -> list[str]:
    """The headers holding a secret written out instead of referenced as ``${VAR}`` (a secret that would be kept in
    settings, tables and command lines): a credential header without a reference, or a value that is plainly a
    credential whatever the header's name."""
    return [
        name
        for name, value in headers.items()
        if not ENV_REF.search(value) and (_CREDENTIAL_HEADER.search(name) or CREDENTIAL_VALUE.match(value.strip()))
    ]


def literal_secret_query(target: str) -> list[str]:
    """The query parameters of a URL holding a secret written out instead of referenced as ``${VAR}`` (a secret that
    would be kept in settings, tables and logs): a secret-looking name
    (:func:`~knime_mcp.redaction.is_secret_parameter`) with a value, or a value plainly a credential whatever its
    name."""
    return [
        name
        for name, value in parse_qsl(urlsplit(target).query, keep_blank_values=True)
        if value and not ENV_REF.search(value) and (is_secret_parameter(name) or CREDENTIAL_VALUE.match(value))
    ]


def literal_secret_env(env: Mapping[str, str]) -> list[str]:
    """The stdio environment entries whose name marks a credential and whose value is written out instead of
    referenced as ``${VAR}`` or a credential's ``${input:ID}``; empty values are no secret."""
    return [
        name
        for name, text in env.items()
        if text and not ENV_REF.search(text) and not INPUT_REF.search(text) and _CREDENTIAL_ENV.search(name)
    ]
