"""The *Team seal key (credential)* setting of the nodes that seal tools tables (the MCP and HTTP Tool Providers)
and of those that trust sealed tables (the Agent Prompter, the Agent Chat, the MCP Tool Caller): a KNIME credential
whose password is a key the team's machines share, so that a table listed on one is trusted on the others (KNIME Hub
executors), without an environment variable on each. The key reaches the core explicitly, for the node's work only
(:func:`knime_mcp.seal.team_seal_key`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import knime.extension as knext

from knime_mcp.errors import ConfigError
from knime_mcp.seal import MAKE_A_KEY, SHARED_KEY_ENV, seal_key_problem, team_seal_key

__all__ = ["TEAM_SEAL_KEY_LABEL", "team_seal", "team_seal_key_parameter"]

TEAM_SEAL_KEY_LABEL = "Team seal key (credential)"


def team_seal_key_parameter() -> knext.StringParameter:
    return knext.StringParameter(
        TEAM_SEAL_KEY_LABEL,
        "The name of a credentials flow variable whose password is the seal key your team shares (64 or more "
        "random hexadecimal characters, e.g. from 'openssl rand -hex 32'; all zeros or a repeated pattern is "
        "refused): tools tables that an MCP or HTTP Tool Provider "
        "listed with the same key on any machine (a KNIME Hub executor, a colleague's KNIME) are trusted here as if "
        "listed here. "
        f"Empty: the environment variable {SHARED_KEY_ENV} where it is set, else this machine's own key.",
        "",  # a name typed, not chosen: KNIME's choice lists default to their first entry, a key nobody chose
        since_version="0.5.0",
        is_advanced=True,
    )


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
