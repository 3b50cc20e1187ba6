"""Chooses the KNIME API the tests run on, before anything imports ``knime``: imported first by ``tests/conftest.py``.

- Default: the headless stand-in ``tests/knext_host``, always (even if some ``knime.extension`` is importable).
  Like KNIME's own test helper it imports ``knime.extension.testing``, which installs its table and node backends.
- ``KNIME_MCP_TEST_API=real``: KNIME's own, unmodified Python sources (``real_knime.sources``) with the driver of
  ``tests/real_knime``, which starts KNIME's node backend and loads the extension as KNIME does. Only tests marked
  ``knime_node`` run there (``tests/run.py``'s second leg). ``knime.extension.testing`` is imported only later (its
  contexts describe workflows): it installs its pandas-only backends only where none is set, and the driver has set
  KNIME's Arrow table backend and node backend by then.

Either way ``src/`` goes on ``sys.path``, as KNIME does with the folder of ``extension_module``, so ``import
extension``, ``import nodes`` and ``import knime_mcp`` find the sources.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from real_knime import sources

HOST_DIR = Path(__file__).resolve().parent / "knext_host"
SRC_DIR = Path(__file__).resolve().parent.parent / "src"

_API = os.environ.get(sources.API_ENV, "stand-in")
if _API not in ("stand-in", "real"):
    raise ValueError(f"{sources.API_ENV} must be 'stand-in' or 'real', not {_API!r}")
REAL_KNIME: bool = _API == "real"
"""True when the tests run on KNIME's real Python API, False on the headless stand-in."""


def _use_stand_in() -> None:
    for name in [n for n in sys.modules if n == "knime" or n.startswith("knime.")]:
        del sys.modules[name]
    sys.path.insert(0, str(HOST_DIR))
    import knime.extension.testing  # noqa: F401


def _use_real_knime() -> None:
    root = sources.sources_dir()
    if not root.is_dir():
        raise RuntimeError(f"KNIME's Python sources are not at {root}; set {sources.SOURCES_ENV}")
    sys.path[:0] = [str(path) for path in sources.python_paths(root)]
    from real_knime import driver

    driver.install()


if str(SRC_DIR) not in sys.path:
    sys.path.insert(0, str(SRC_DIR))
if REAL_KNIME:
    _use_real_knime()
else:
    _use_stand_in()


def knime_5_5() -> bool:
    """True on KNIME 5.5's released Python API (``tests/run.py``'s 5.5.3 leg), where a few behaviours differ from
    master's, which the stand-in follows: told by ``StringParameter.Choice``, which came after 5.5."""
    import knime.extension as knext

    return REAL_KNIME and not hasattr(knext.StringParameter, "Choice")
