"""Parameters: the *Team seal key (credential)* setting of the nodes that seal tools tables (the MCP and HTTP Tool
Providers) and of those that trust sealed tables (the Agent Prompter, the Agent Chat, the MCP Tool Caller): a KNIME
credential whose password is a key the team's machines share, so that a table listed on one is trusted on the others
(KNIME Hub executors), without an environment variable on each. The key is read at execution time
(``nodes.knime_io.team_seal``)."""

from __future__ import annotations

import knime.extension as knext

from knime_mcp.seal import SHARED_KEY_ENV

__all__ = ["TEAM_SEAL_KEY_LABEL", "team_seal_key_parameter"]

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
