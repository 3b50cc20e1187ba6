"""KNIME I/O: the team's seal key for a node's work, read from the credential the *Team seal key (credential)*
setting names (``nodes.parameters.team_seal``). The key reaches the core explicitly, for the node's work only
(:func:`knime_mcp.seal.team_seal_key`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import knime.extension as knext

from knime_mcp.errors import ConfigError
from knime_mcp.seal import MAKE_A_KEY, seal_key_problem, team_seal_key
from nodes.parameters.team_seal import TEAM_SEAL_KEY_LABEL

__all__ = ["team_seal"]


@contextmanager
def team_seal(ctx: knext.ExecutionContext, credential: str) -> Iterator[None]:
    """The node's work with the team's key of ``credential`` (nothing changes without one); a credential that is not
    there, or empty, is a ConfigError rather than tables silently counting as data."""
    if not credential:
        yield
        return
    if credential not in ctx.get_credential_names():
        raise ConfigError(
            f"The team seal key credential {credential!r} is not available.",
            hint=f"Connect a credentials flow variable named {credential!r} to the node, or clear "
            f"'{TEAM_SEAL_KEY_LABEL}'.",
        )
    key = ctx.get_credentials(credential).password
    if not key:
        raise ConfigError(f"The team seal key credential {credential!r} has an empty password.")
    if (problem := seal_key_problem(key)) is not None:
        raise ConfigError(
            f"The password of the team seal key credential {credential!r} is not a usable seal key ({problem}).",
            hint=f"Give the credential of '{TEAM_SEAL_KEY_LABEL}' a key of 64 or more random hexadecimal characters, "
            f"the same on each of the team's machines. {MAKE_A_KEY}",
        )
    with team_seal_key(key):
        yield
