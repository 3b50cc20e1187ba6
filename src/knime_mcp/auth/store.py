"""Where OAuth tokens live between runs: one file per user, server and client, readable by the user alone.

The SDK's OAuth client keeps tokens through a :class:`mcp.client.auth.TokenStorage`; this one writes them under
``~/.knime-mcp/oauth/`` (``KNIME_MCP_OAUTH_DIR`` moves it), beside the seal key and never in settings, tables or
workflows. A folder or file that another user could have written (group- or world-writable, or owned by someone
else) is refused, and a symbolic link in place of a token file is never followed: a planted sign-in could name an
authorization server that collects the refresh token or the client secret. It also keeps what the SDK forgets
between runs: when the access token expires, and the authorization server's metadata, so that a later run refreshes
the token at the right endpoint before it expires instead of sending an expired token and being asked to sign in
again; and the issuer a client secret was first used with (:mod:`knime_mcp.auth.guard`).

    store = TokenStore.for_server("https://mcp.example.com/mcp", client="dynamic")
    provider = OAuthClientProvider(url, metadata, store, ...)
    store.attach(provider.context)
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import stat
import time
from pathlib import Path
from typing import Any

from mcp.client.auth.oauth2 import OAuthContext
from mcp.shared.auth import OAuthClientInformationFull, OAuthMetadata, OAuthToken, ProtectedResourceMetadata

from knime_mcp.errors import ConfigError

__all__ = ["OAUTH_DIR_ENV", "REFRESH_MARGIN_SECONDS", "TokenStore", "forget_server", "oauth_dir"]

OAUTH_DIR_ENV = "KNIME_MCP_OAUTH_DIR"
"""Where the token files live instead of ``~/.knime-mcp/oauth``, e.g. on a shared executor."""

REFRESH_MARGIN_SECONDS = 60.0
"""An access token this close to its expiry is refreshed before use rather than sent."""


def oauth_dir() -> Path:
    return Path(os.environ.get(OAUTH_DIR_ENV) or Path.home() / ".knime-mcp" / "oauth")


def forget_server(server: str) -> int:
    """Delete every stored sign-in (tokens and client registrations) for ``server``; how many there were."""
    forgotten = 0
    for path in oauth_dir().glob("*.json"):
        if TokenStore(path, server)._read():
            path.unlink(missing_ok=True)
            forgotten += 1
    return forgotten


class TokenStore:
    """The SDK's token storage, kept in one JSON file for a server and a client identity."""

    def __init__(self, path: Path, server: str) -> None:
        self.path = path
        self._server = server
        self._context: OAuthContext | None = None
        self._preset: OAuthClientInformationFull | None = None

    @classmethod
    def for_server(cls, server: str, *, client: str) -> TokenStore:
        """The store of ``server`` (its URL) for ``client`` (a client id, or "dynamic" for a registered one)."""
        digest = hashlib.sha256(f"{server}\n{client}".encode()).hexdigest()[:32]
        return cls(oauth_dir() / f"{digest}.json", server)

    def preset_client(self, client_info: OAuthClientInformationFull) -> None:
        """Use a pre-registered client: it is given each run (its secret from a KNIME credential), never stored."""
        self._preset = client_info

    def attach(self, context: OAuthContext) -> None:
        """Give the provider's context the metadata an earlier run discovered, and save what this run discovers."""
        self._context = context
        saved = self._read()
        if context.oauth_metadata is None and (metadata := saved.get("authorization_server")):
            context.oauth_metadata = OAuthMetadata.model_validate(metadata)
        if context.protected_resource_metadata is None and (resource := saved.get("protected_resource")):
            context.protected_resource_metadata = ProtectedResourceMetadata.model_validate(resource)

    async def get_tokens(self) -> OAuthToken | None:
        """The stored tokens; an access token that expires within :data:`REFRESH_MARGIN_SECONDS` is left out, so the
        SDK refreshes it first."""
        saved = self._read()
        if (tokens := saved.get("tokens")) is None:
            return None
        token = OAuthToken.model_validate(tokens)
        expires_at = saved.get("expires_at")
        if expires_at is None:
            return token
        remaining = expires_at - time.time()
        if remaining <= REFRESH_MARGIN_SECONDS:
            return token.model_copy(update={"access_token": "", "expires_in": 0})
        return token.model_copy(update={"expires_in": int(remaining)})

    async def set_tokens(self, tokens: OAuthToken) -> None:
        expires_at = time.time() + tokens.expires_in if tokens.expires_in is not None else None
        self._write(tokens=tokens.model_dump(mode="json", exclude_none=True), expires_at=expires_at)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        if self._preset is not None:
            return self._preset
        info = self._read().get("client")
        return None if info is None else OAuthClientInformationFull.model_validate(info)

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        if self._preset is not None:
            return
        self._write(client=client_info.model_dump(mode="json", exclude_none=True))

    def forget_tokens(self) -> None:
        """Drop the stored tokens and keep the client registration, so the next sign-in starts afresh as this client."""
        data = self._read()
        if data.pop("tokens", None) is not None:
            data.pop("expires_at", None)
            self._save(data)

    def has_tokens(self) -> bool:
        return "tokens" in self._read()

    def confirmed_issuer(self) -> str | None:
        """The authorization server this client's secret was first used with (:mod:`knime_mcp.auth.guard`)."""
        issuer = self._read().get("confirmed_issuer")
        return issuer if isinstance(issuer, str) else None

    def confirm_issuer(self, issuer: str) -> None:
        self._write(confirmed_issuer=issuer)

    def dpop_key(self) -> str | None:
        """The private key (PEM) the stored tokens are bound to (:mod:`knime_mcp.auth.dpop`); None: not bound."""
        key = self._read().get("dpop_key")
        return key if isinstance(key, str) else None

    def keep_dpop_key(self, pem: str | None) -> None:
        """Keep the key the tokens just received are bound to (None: they are not), so a later run can use them."""
        self._write(dpop_key=pem)

    def _read(self) -> dict[str, Any]:
        _check_owned(self.path.parent, "folder")
        try:
            handle = os.open(self.path, os.O_RDONLY | _NO_FOLLOW)
        except FileNotFoundError:
            return {}
        except OSError as exc:
            _check_not_link(self.path)
            raise ConfigError(f"The OAuth token file {self.path} cannot be read ({exc.strerror}).") from exc
        with os.fdopen(handle, "rb") as file:
            _check_owned(self.path, "file", os.fstat(file.fileno()))
            try:
                data = json.loads(file.read())
            except ValueError:
                return {}
        return data if isinstance(data, dict) and data.get("server") == self._server else {}

    def _write(self, **changes: Any) -> None:
        """Merge ``changes`` and the provider's discovered metadata into the file."""
        data = {**self._read(), **changes, "server": self._server}
        if self._context is not None:
            if self._context.oauth_metadata is not None:
                data["authorization_server"] = self._context.oauth_metadata.model_dump(mode="json", exclude_none=True)
            if self._context.protected_resource_metadata is not None:
                data["protected_resource"] = self._context.protected_resource_metadata.model_dump(
                    mode="json", exclude_none=True
                )
        self._save(data)

    def _save(self, data: dict[str, Any]) -> None:
        """Write the file whole under another name and move it into place, readable by the user alone."""
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        _check_owned(self.path.parent, "folder")
        _check_not_link(self.path)
        draft = self.path.with_name(f".{self.path.name}.{secrets.token_hex(8)}")
        with os.fdopen(os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="utf-8") as out:
            json.dump(data, out)
        os.replace(draft, self.path)


_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)
_OWNED = os.name == "posix"
"""Owners and write permissions are checked where the file system has them (not on Windows, whose user folders
other users cannot write to by default)."""
_REMOVE_HINT = "Remove it (`knime-mcp logout URL`, or delete the file) and sign in again."


def _check_not_link(path: Path) -> None:
    """Refuse a symbolic link in place of a token file: reading it would take a sign-in from elsewhere."""
    if path.is_symlink():
        raise ConfigError(
            f"The OAuth token file {path} is a symbolic link; knime-mcp does not follow links there, since a planted "
            "link could make it read or overwrite another file.",
            hint=_REMOVE_HINT,
        )


def _check_owned(path: Path, kind: str, status: os.stat_result | None = None) -> None:
    """Refuse a token folder or file (``kind``) that another user owns or may write to (a missing folder passes):
    whoever can write there can plant a sign-in that sends the tokens or the client secret to a server of theirs."""
    if not _OWNED:
        return
    if status is None:
        try:
            status = path.stat()
        except FileNotFoundError:
            return
    if status.st_uid != os.getuid():
        problem = "belongs to another user"
        hint = f"Use a token folder of your own ({OAUTH_DIR_ENV}), or have the file system's owner fix it."
    elif status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        problem = "others can write to it"
        mode = "700" if kind == "folder" else "600"
        hint = f"Make it yours alone (chmod {mode} {path}), and delete any sign-in in it you did not make."
    else:
        return
    raise ConfigError(f"The OAuth token {kind} {path} is refused: {problem}.", hint=hint)
