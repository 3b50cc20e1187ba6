"""Makes ``import knime.extension`` work in tests: KNIME's package when installed, else the headless host.

Imported first by ``tests/conftest.py``. Like KNIME's own test helper it then imports
``knime.extension.testing``, which installs the table and node backends, so it must run before the extension
module is imported. Finally it puts ``src/`` on ``sys.path``, as KNIME does with the folder of
``extension_module``, so ``import extension``, ``import nodes`` and ``import knime_mcp`` find the sources.
"""

from __future__ import annotations

import sys
from pathlib import Path

HOST_DIR = Path(__file__).resolve().parent / "knext_host"
SRC_DIR = Path(__file__).resolve().parent.parent / "src"


def _import_knext() -> bool:
    """Import ``knime.extension``; return whether the headless host had to stand in."""
    try:
        import knime.extension  # noqa: F401
    except ImportError:
        for name in [n for n in sys.modules if n == "knime" or n.startswith("knime.")]:
            del sys.modules[name]
        sys.path.insert(0, str(HOST_DIR))
        import knime.extension  # noqa: F401

        return True
    return False


USING_HOST: bool = _import_knext()
"""True when the tests run on ``tests/knext_host`` rather than KNIME's ``knime-extension`` package."""

import knime.extension.testing  # noqa: E402,F401

if str(SRC_DIR) not in sys.path:
    sys.path.insert(0, str(SRC_DIR))
