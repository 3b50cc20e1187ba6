"""Test set-up: the KNIME API, the real one when importable, else the headless host.

The server fixtures are plugins named in pyproject.toml (fixtures.python_servers, fixtures.npm_servers)."""

from __future__ import annotations

import pytest

import knext_bootstrap  # noqa: F401  (must come first: installs the knext backends before nodes are imported)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
