"""The OAuth token store refuses a folder or file that someone else could have written, and follows no planted link.

Another local user who can write to the token folder could plant a sign-in whose authorization server metadata
sends the refresh token (or the client secret) to a server of theirs, or a link that makes knime-mcp read or
overwrite another file. Each test builds the hostile folder in a temporary directory of its own.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from knime_mcp import auth as oauth
from knime_mcp.errors import ConfigError
from knime_mcp.mcp.client import McpClient

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions and owners"),
]

SERVER = "http://127.0.0.1:9/mcp"
"""A server nothing listens at: the store is judged before anything connects."""

PLANTED = {
    "server": SERVER,
    "tokens": {"access_token": "planted-token", "token_type": "Bearer", "refresh_token": "planted-refresh"},
    "authorization_server": {
        "issuer": "http://127.0.0.1:9",
        "authorization_endpoint": "http://127.0.0.1:9/authorize",
        "token_endpoint": "http://127.0.0.1:9/token",
    },
}
"""A sign-in someone else wrote, naming an authorization server of theirs."""


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The token folder, made by this user as knime-mcp makes it (0700)."""
    folder = tmp_path / "oauth"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv(oauth.OAUTH_DIR_ENV, str(folder))
    return folder


def _store() -> oauth.TokenStore:
    return oauth.token_store(SERVER, oauth.OAuthClient())


async def test_a_token_folder_others_can_write_to_is_refused_with_what_to_do(folder: Path) -> None:
    # Given a token folder anyone on the machine can write to, holding a planted sign-in
    folder.chmod(0o777)
    _store().path.write_text(json.dumps(PLANTED))
    # When a run reads or writes its sign-in, then both are refused, naming the folder and how to fix it
    with pytest.raises(ConfigError) as reading:
        await _store().get_tokens()
    with pytest.raises(ConfigError):
        _store().forget_tokens()
    assert str(folder) in reading.value.message and "others can write to it" in reading.value.message
    assert "chmod 700" in (reading.value.hint or "")
    assert json.loads(_store().path.read_text()) == PLANTED


async def test_a_token_file_others_can_write_to_is_refused(folder: Path) -> None:
    path = _store().path
    path.write_text(json.dumps(PLANTED))
    path.chmod(0o666)
    with pytest.raises(ConfigError, match="others can write to it"):
        await _store().get_tokens()


async def test_a_token_folder_of_another_user_is_refused(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a token folder that belongs to another user (as seen by this process)
    monkeypatch.setattr(os, "getuid", lambda: os.stat(folder).st_uid + 1)
    # When a run reads its sign-in, then it is refused, saying so
    with pytest.raises(ConfigError, match="belongs to another user"):
        await _store().get_tokens()


async def test_a_link_planted_in_place_of_a_token_file_is_neither_read_nor_followed_when_writing(
    folder: Path, tmp_path: Path
) -> None:
    # Given a link in place of the token file, pointing at a file elsewhere that holds a planted sign-in
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps(PLANTED))
    _store().path.symlink_to(elsewhere)
    # When a run reads its sign-in, or forgets it, then it is refused, saying so, and the other file is untouched
    with pytest.raises(ConfigError) as reading:
        await _store().get_tokens()
    with pytest.raises(ConfigError):
        _store().forget_tokens()
    assert "symbolic link" in reading.value.message and "knime-mcp logout" in (reading.value.hint or "")
    assert json.loads(elsewhere.read_text()) == PLANTED


async def test_a_client_connecting_with_a_refused_token_folder_fails_before_connecting(folder: Path) -> None:
    # Given a token folder others can write to
    folder.chmod(0o770)
    from knime_mcp.config import AuthRef, ServerSpec

    spec = ServerSpec(target=SERVER, auth=AuthRef(kind="oauth"))
    # When a run connects with OAuth, then it fails with the store's error, not as a connection problem
    with pytest.raises(ConfigError, match="others can write to it"):
        async with McpClient(spec) as client:
            await client.list_tools()


def test_logout_with_a_token_folder_others_can_write_to_fails_with_the_reason(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from knime_mcp.cli.main import main

    folder.chmod(0o777)
    _store().path.write_text(json.dumps(PLANTED))
    assert main(["logout", SERVER]) == 3
    assert "others can write to it" in capsys.readouterr().err


def test_a_store_made_by_knime_mcp_itself_is_accepted(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given no token folder yet
    monkeypatch.setenv(oauth.OAUTH_DIR_ENV, str(tmp_path / "new" / "oauth"))
    store = _store()
    # When a sign-in is kept and forgotten, then the folder and file knime-mcp makes pass its own checks
    store._write(tokens=PLANTED["tokens"])
    assert store.has_tokens()
    store.forget_tokens()
    assert not store.has_tokens() and oct(store.path.parent.stat().st_mode & 0o777) == "0o700"
