"""Test set-up: the KNIME API, the real one when importable, else the headless host.

The server fixtures are plugins named in pyproject.toml (fixtures.python_servers, fixtures.npm_servers)."""

from __future__ import annotations

import os
import tempfile

import pytest

import knext_bootstrap  # noqa: F401  (must come first: installs the knext backends before nodes are imported)
from knime_mcp.seal import KEY_FILE_ENV

_SEAL_KEY_FOLDER = tempfile.TemporaryDirectory(prefix="knime-mcp-seal-")
os.environ[KEY_FILE_ENV] = os.path.join(_SEAL_KEY_FOLDER.name, "seal.key")
"""Seals made in the tests, also by CLI children, use a key of their own, never the one in the user's home; set at
import, before any test module builds a tool."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
