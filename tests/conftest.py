"""Test set-up: the KNIME API, the real one when importable, else the headless host.

The server fixtures are plugins named in pyproject.toml (fixtures.python_servers, fixtures.npm_servers)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from types import ModuleType

import pytest

import knext_bootstrap  # must come first: installs the knext backends before nodes are imported
from knime_mcp.auth.store import OAUTH_DIR_ENV
from knime_mcp.seal import KEY_FILE_ENV, SHARED_KEY_ENV

_USER_STATE = tempfile.TemporaryDirectory(prefix="knime-mcp-test-state-")
os.environ[KEY_FILE_ENV] = os.path.join(_USER_STATE.name, "seal.key")
os.environ[OAUTH_DIR_ENV] = os.path.join(_USER_STATE.name, "oauth")
os.environ.pop(SHARED_KEY_ENV, None)
"""Seals made in the tests, also by CLI children, use a key of their own, never the one in the user's home or a
team's shared key, and sign-ins a token folder of their own: one folder per test process (each xdist worker has
its own), set at import, before any test module builds a tool; a test that needs another folder sets its own."""


LAUNCHER_ONLY = "knime_launcher"
"""Marks checks of what only KNIME's own launcher builds (node descriptions, dialogs): the stand-in has no such
machinery, so they are collected on the real-API leg only and left out on the stand-in (deselected, not skipped)."""


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{LAUNCHER_ONLY}: needs KNIME's launcher; collected on the real-API leg only")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if knext_bootstrap.REAL_KNIME:
        return
    launcher_only = [item for item in items if item.get_closest_marker(LAUNCHER_ONLY)]
    if launcher_only:
        config.hook.pytest_deselected(items=launcher_only)
        items[:] = [item for item in items if not item.get_closest_marker(LAUNCHER_ONLY)]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def knime_tool_branch() -> Iterator[ModuleType]:
    """KNIME's unified Tool type of its mcp-tools branch, laid over the real sources for one test (the real-API leg
    only: mark the test ``knime_launcher``); yields the branch's ``knime.types.tool``."""
    from real_knime.tool_overlay import branch_tool_type

    with branch_tool_type() as module:
        yield module
