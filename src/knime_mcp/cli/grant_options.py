"""The command line's options of the JWT bearer grants: workload identity (``--token-file``) and enterprise identity
by ID-JAG (``--identity-assertion``, ``--idp-token-endpoint``, ``--idp-client-id``, ``--idp-client-secret``).

Outside KNIME there are no credentials, so the identity assertion and the identity provider's secret are ``${VAR}``
references only.
"""

from __future__ import annotations

import argparse

from knime_mcp.errors import UsageError

__all__ = ["add_grant_options", "grant_secrets", "grant_settings"]

_ID_JAG_OPTIONS = {
    "identity_assertion": "--identity-assertion",
    "idp_token_endpoint": "--idp-token-endpoint",
    "idp_client_id": "--idp-client-id",
    "idp_client_secret": "--idp-client-secret",
}


def add_grant_options(options: argparse.ArgumentParser) -> None:
    group = options.add_argument_group("OAuth by a platform's or an identity provider's token (JWT bearer grant)")
    group.add_argument(
        "--token-file",
        metavar="PATH",
        help="--auth oauth-workload-identity: the file the platform writes this workload's identity token to (a "
        "path or '${VAR}' holding one, e.g. '${AZURE_FEDERATED_TOKEN_FILE}'), read for every token request",
    )
    group.add_argument(
        "--identity-assertion",
        metavar="'${VAR}'",
        help="--auth oauth-id-jag: the ID token from your organisation's identity provider, as an environment "
        "reference",
    )
    group.add_argument(
        "--idp-token-endpoint",
        metavar="URL",
        help="--auth oauth-id-jag: the identity provider's token endpoint, where the ID token is exchanged for an "
        "ID-JAG",
    )
    group.add_argument("--idp-client-id", help="--auth oauth-id-jag: the client id at the identity provider, if any")
    group.add_argument(
        "--idp-client-secret",
        metavar="'${VAR}'",
        help="--auth oauth-id-jag: the client secret at the identity provider, if any, as an environment reference",
    )


def grant_settings(kind: str | None, args: argparse.Namespace) -> dict[str, str | None]:
    """The :class:`~knime_mcp.config.AuthRef` settings these options give for ``--auth`` ``kind``; an option for
    another kind is a UsageError (a secret written out is refused with the others', see :func:`grant_secrets`)."""
    if args.token_file is not None and kind != "oauth-workload-identity":
        raise UsageError("--token-file goes with --auth oauth-workload-identity.")
    given = [option for name, option in _ID_JAG_OPTIONS.items() if getattr(args, name) is not None]
    if kind != "oauth-id-jag":
        if given:
            raise UsageError(f"{given[0]} goes with --auth oauth-id-jag.")
        return {"token_file": args.token_file} if kind == "oauth-workload-identity" else {}
    if args.identity_assertion is None or args.idp_token_endpoint is None:
        raise UsageError("--auth oauth-id-jag needs --identity-assertion '${VAR}' and --idp-token-endpoint URL.")
    return {
        "assertion": args.identity_assertion,
        "idp_token_endpoint": args.idp_token_endpoint,
        "idp_client_id": args.idp_client_id,
        "idp_secret": args.idp_client_secret,
    }


def grant_secrets(args: argparse.Namespace) -> tuple[tuple[str, str | None], ...]:
    """The options that hold a secret, which must be ``${VAR}`` references, with their values."""
    return ("--identity-assertion", args.identity_assertion), ("--idp-client-secret", args.idp_client_secret)
