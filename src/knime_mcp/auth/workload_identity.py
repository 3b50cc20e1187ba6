"""Workload identity: the JWT bearer grant's assertion is a token the platform writes to a file.

A Kubernetes projected service account token, a cloud's federated token (``AZURE_FEDERATED_TOKEN_FILE``,
``AWS_WEB_IDENTITY_TOKEN_FILE``) or a KNIME Hub executor's identity token: the platform rotates the file, so it is
read again for every token request, and a token that has already expired is reported here rather than sent.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import jwt

from knime_mcp.auth.jwt_bearer import AssertionSource
from knime_mcp.config import expand_path
from knime_mcp.errors import ServerAuthError

__all__ = ["token_file_source"]

_SETTING_HINT = "Check the 'Token file' setting (--token-file): it names the file the platform writes the token to"


def token_file_source(setting: str, *, server: str) -> AssertionSource:
    """The assertion source that reads the token file ``setting`` names (a path, or ``${VAR}`` holding one) anew for
    each token request; the audience is the platform's to set, so it is not checked here."""

    async def read(_audience: str, _resource: str) -> str:
        path, shown = expand_path(setting, server=server)
        return read_token_file(Path(path), server=server, shown=shown)

    return read


def read_token_file(path: Path, *, server: str, shown: str | None = None) -> str:
    """The token in ``path``, if it is there, readable, a JWT and not expired; ``shown``: how messages name the file
    (the setting as written, :func:`~knime_mcp.config.expand_path`), else by its path."""

    def refuse(what: str, hint: str) -> ServerAuthError:
        named = shown or str(path)
        return ServerAuthError(f"The workload identity token file {named} {what}.", server=server, hint=hint)

    try:
        token = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        raise refuse("does not exist", f"{_SETTING_HINT}, e.g. the projected volume's path on Kubernetes.") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not text"
        raise refuse(f"cannot be read ({reason})", "Let the user running KNIME read the file.") from None
    if not token:
        raise refuse("is empty", "Wait until the platform has written the token, or check the path.")
    try:
        claims = jwt.decode(token, options={"verify_signature": False, "verify_exp": False})
    except jwt.PyJWTError:
        raise refuse("does not hold a JWT", f"{_SETTING_HINT}: a JWT, not a key or a configuration.") from None
    expiry = claims.get("exp")
    if isinstance(expiry, int | float) and expiry < time.time():
        when = datetime.fromtimestamp(expiry, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        raise refuse(
            f"holds a token that expired at {when}",
            "The platform renews the token before it expires: check that the file is projected by the platform "
            "(not copied once) and that this machine's clock is right.",
        )
    return token
