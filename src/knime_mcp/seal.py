"""Seals: a server spec's proof that a person named the server in settings on this machine.

Listing a server's tools seals their spec (:meth:`knime_mcp.mcp.client.McpClient.list_tools`): whoever made the client
chose the server, as a person does in the MCP Tool Provider's settings. The Agent Prompter and the Tool Caller read
tools from a table, which anyone can write, edit, or bring from another machine; a spec there without a fitting seal
is data, and the SSRF guard checks it before it is connected (:func:`knime_mcp.net.urlguard.check_server`).

A seal is an HMAC of the spec's identity under a key that stays on this machine: a file in the user's home, created
on first use, readable by the user alone. A team's machines (KNIME Hub executors, the desktops that build workflows
for them) may share one key instead, given in ``KNIME_MCP_SEAL_KEY``: where it is set, it is the one key that seals
and checks, so a table any of them made is trusted on all of them. A node may name the team's key in a KNIME
credential instead: :func:`team_seal_key` makes it the key within a block (and what :func:`knime_mcp.mcp.sync.run_sync`
runs from there), before the variable. A table holds a seal and nothing that names a key, so which key checks it is
never the table's choice.

    spec = seal_spec(ServerSpec(target="http://127.0.0.1:8000/mcp"))
    is_sealed_here(spec)                                             # True
    is_sealed_here(replace(spec, target="http://169.254.169.254/"))  # False: the seal no longer fits
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import logging
import os
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path

from knime_mcp.config import ServerSpec

__all__ = [
    "KEY_FILE_ENV",
    "SHARED_KEY_ENV",
    "is_sealed_here",
    "MAKE_A_KEY",
    "key_file",
    "seal_key_problem",
    "seal_spec",
    "team_seal_key",
    "tool_seal_checker",
    "tool_sealer",
]

logger = logging.getLogger(__name__)

KEY_FILE_ENV = "KNIME_MCP_SEAL_KEY_FILE"
"""Where the key lives instead of ``~/.knime-mcp/seal.key``, e.g. on a shared executor."""

SHARED_KEY_ENV = "KNIME_MCP_SEAL_KEY"
"""A key a team shares (hex, at least 32 bytes), used instead of the machine's own: never logged or shown."""

_KEY_BYTES = 32

_DISTINCT = 16
"""Fewest distinct byte values (and steps between neighbours) a shared key may have: 32 random bytes have about 30,
and fewer than 16 happens once in more than 10^12 keys; an all-zero, repeated or counting key has a handful."""

MAKE_A_KEY = 'Make one with: python -c "import secrets; print(secrets.token_hex(32))" (or openssl rand -hex 32).'
"""How to make a shared key, for every message that refuses one."""

_team_key: ContextVar[str | None] = ContextVar("knime_mcp_team_seal_key", default=None)
"""The team's key a node was given (a KNIME credential's password), for the work it does; never logged or shown."""


@contextmanager
def team_seal_key(material: str | None) -> Iterator[None]:
    """Within the block, ``material`` (the team's shared key as hex, e.g. a KNIME credential's password) seals and
    checks, instead of :data:`SHARED_KEY_ENV` or the machine's own key; None or empty: the key stays as it is. A
    context variable, not a global: nodes running at once may name other keys."""
    token = _team_key.set(material) if material else None
    try:
        yield
    finally:
        if token is not None:
            _team_key.reset(token)


def key_file() -> Path:
    return _key_file(os.environ.get(KEY_FILE_ENV), os.environ.get("HOME"))


@lru_cache(maxsize=4)
def _key_file(setting: str | None, home: str | None) -> Path:
    """Cached by what decides it: a table of thousands of tools checks a seal per tool."""
    return Path(setting or Path.home() / ".knime-mcp" / "seal.key")


def seal_spec(spec: ServerSpec) -> ServerSpec:
    """``spec`` with this machine's seal (the shared key's, where one is set); without a usable key it stays unsealed
    (its tools then count as data)."""
    key = _active_key()
    return dataclasses.replace(spec, seal=None if key is None else _mac(key, spec.identity))


def is_sealed_here(spec: ServerSpec) -> bool:
    if spec.seal is None:
        return False  # without reading (or creating) the key
    key = _active_key()
    return key is not None and _same(spec.seal, _mac(key, spec.identity))


def tool_sealer(spec: ServerSpec) -> Callable[[str], str | None]:
    """The seal a table keeps for each tool of ``spec``, by the tool's ``facts``: the fields that the tool policy
    reads (:attr:`knime_mcp.tools.tool.MCPTool.policy_facts`). It covers the server and the facts, so editing either in
    the table voids it; None unless ``spec`` itself is sealed here, as only a tool of a server a person chose is
    sealed. The key and the server's own seal are checked once, not per tool of a table of thousands."""
    mac = _tool_mac(spec)
    return mac if mac is not None and is_sealed_here(spec) else _no_seal


def tool_seal_checker(spec: ServerSpec) -> Callable[[str, object], bool]:
    """Whether a seal read from a table is this machine's seal (:func:`tool_sealer`) of a tool of ``spec`` with
    the given facts; made once for the tools of one server, which a table lists by the thousand."""
    mac = _tool_mac(spec)

    def fits(facts: str, seal: object) -> bool:
        return mac is not None and _same(seal, mac(facts))

    return fits


def _tool_mac(spec: ServerSpec) -> Callable[[str], str] | None:
    """The MAC of a tool of ``spec`` by its facts, the server's part of the message hashed once; None without a
    key."""
    key = _active_key()
    if key is None:
        return None
    # The message is "tool", the server's identity and the facts, a line each: an identity is JSON and cannot hold
    # a bare line break, so no spec and facts pair reads as another. Each tool's MAC continues from copies of the
    # hashes after the server's part.
    inner, outer = _hmac_pads(key)
    inner.update(f"tool\n{spec.identity}\n".encode())

    def mac(facts: str) -> str:
        message = inner.copy()
        message.update(facts.encode())
        digest = outer.copy()
        digest.update(message.digest())
        return digest.hexdigest()

    return mac


def _hmac_pads(key: bytes) -> tuple[hashlib._Hash, hashlib._Hash]:
    """HMAC-SHA256 (RFC 2104) as its inner and outer hashes after the padded key: what ``hmac.new`` computes, but
    copied and finished as plain hashes, which costs half of copying an ``hmac`` object per tool of a table."""
    block = hashlib.sha256().block_size
    padded = (hashlib.sha256(key).digest() if len(key) > block else key).ljust(block, b"\0")
    return hashlib.sha256(padded.translate(_INNER_PAD)), hashlib.sha256(padded.translate(_OUTER_PAD))


_INNER_PAD = bytes(byte ^ 0x36 for byte in range(256))
_OUTER_PAD = bytes(byte ^ 0x5C for byte in range(256))


def _no_seal(facts: str) -> None:
    return None


def _same(seal: object, expected: str) -> bool:
    """A seal read from a table may be any text (or no text at all), which must not fit and must not raise either:
    ``compare_digest`` takes text only when it is ASCII, as a seal is."""
    return isinstance(seal, str) and seal.isascii() and hmac.compare_digest(seal, expected)


def _mac(key: bytes, message: str) -> str:
    return hmac.digest(key, message.encode(), hashlib.sha256).hex()


def _active_key() -> bytes | None:
    """The team's shared key where one is given (:func:`team_seal_key`, else :data:`SHARED_KEY_ENV`; the machine's
    own file is then neither read nor created), else the machine's own; None without a usable one."""
    if team := _team_key.get():
        return _shared_key(team, "The team seal key credential")
    shared = os.environ.get(SHARED_KEY_ENV)
    return _shared_key(shared, SHARED_KEY_ENV) if shared else _key(key_file())


def seal_key_problem(material: str) -> str | None:
    """Why ``material`` (a team's shared key as hex) is no key to seal with, never quoting it; None for a good one.
    A key anyone could guess (all zeros, a byte or a short pattern repeated, counting) would let anyone seal a table."""
    try:
        key = bytes.fromhex(material.strip())
    except ValueError:
        return "it is not hexadecimal"
    if len(key) < _KEY_BYTES:
        return f"it is {len(key)} bytes long, expected at least {_KEY_BYTES}"
    steps = {(later - earlier) % 256 for earlier, later in zip(key, key[1:], strict=False)}
    if len(set(key)) < _DISTINCT or len(steps) < _DISTINCT:
        return "it repeats a few byte values (all zeros, a pattern repeated or counting), so it can be guessed"
    return None


@lru_cache(maxsize=4)
def _shared_key(material: str, source: str) -> bytes | None:
    """The key a team shares; an unusable one seals nothing rather than falling back to the machine's own key,
    whose seals would not travel. The warning names the ``source``, never its value."""
    if (problem := seal_key_problem(material)) is None:
        return bytes.fromhex(material.strip())
    logger.warning("%s is not a usable seal key (%s); tools tables will count as data. %s", source, problem, MAKE_A_KEY)
    return None


@lru_cache(maxsize=4)
def _key(path: Path) -> bytes | None:
    try:
        return _read_or_create(path)
    except (OSError, ValueError) as exc:
        logger.warning("No seal key at %s (%s); tools tables made here will count as data.", path, exc)
        return None


def _read_or_create(path: Path) -> bytes:
    """The key in ``path``; the first process to need it writes it whole under another name and links it into
    place, so a concurrent reader never sees half a key and two writers agree on the first."""
    if not path.exists():
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        draft = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
        with os.fdopen(os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as out:
            out.write(secrets.token_hex(_KEY_BYTES))
        try:
            os.link(draft, path)
        except FileExistsError:
            pass
        finally:
            draft.unlink()
    key = bytes.fromhex(path.read_text().strip())
    if len(key) < _KEY_BYTES:
        raise ValueError(f"the key is {len(key)} bytes long, expected {_KEY_BYTES}")
    return key
