"""Parameters: the credential settings' choices (a KNIME credential chosen by *name*; its secret is read at execution
time, see ``nodes.knime_io.credentials``)."""

from __future__ import annotations

import knime.extension as knext

__all__ = ["NO_CREDENTIAL", "chosen_credential", "credential_names"]

NO_CREDENTIAL = "<none>"
"""The choice of no credential (as the empty setting of earlier settings)."""


def credential_names(ctx: knext.DialogCreationContext) -> list[str]:
    """No credential, then the workflow's credentials. KNIME makes the first choice the default of a parameter whose
    default is empty, for every node of that kind the process creates afterwards: without a first choice of no
    credential, an optional one (an OAuth sign-in's client secret, a key's passphrase) would silently be the first
    credential of the workflow and go to any server. (KNIME refuses an empty choice.)"""
    return [NO_CREDENTIAL, *ctx.get_credential_names()]


def chosen_credential(value: str) -> str | None:
    """The credential a setting names; None for no credential."""
    return None if value in ("", NO_CREDENTIAL) else value
