"""Where KNIME's own Python sources are: copies of knime-python outside this repository, used as test data only.

``KNIME_PYTHON_SOURCES`` names the folders, separated by ``os.pathsep`` (a relative path counts from the repository
root); by default ``../shared/knime-python`` (master) and ``../shared/knime-python-5.5.3`` (the release
``pixi.toml`` targets) next to the repository: checkouts of github.com/knime/knime-python at master and at the tag
``analytics-platform/5.5.3``. ``tests/run.py`` runs one real leg per folder, each with the variable naming that
folder alone. Its README lists the five plug-in folders whose ``src/main/python`` go on ``sys.path``, as KNIME puts
them there for a Python node process.
"""

from __future__ import annotations

import os
from pathlib import Path

API_ENV = "KNIME_MCP_TEST_API"
"""Set to ``real`` to run the tests on these sources (``tests/knext_bootstrap.py``); ``stand-in`` is the default."""
SOURCES_ENV = "KNIME_PYTHON_SOURCES"
REPO = Path(__file__).resolve().parents[2]
PLUGINS = (
    "org.knime.python3.nodes",
    "org.knime.python3",
    "org.knime.python3.views",
    "org.knime.python3.arrow",
    "org.knime.python3.arrow.types",
)


DEFAULT_SOURCES = ("../shared/knime-python", "../shared/knime-python-5.5.3")


def sources_dirs() -> list[Path]:
    """The knime-python folders named by ``KNIME_PYTHON_SOURCES``, else :data:`DEFAULT_SOURCES`."""
    named = os.environ.get(SOURCES_ENV)
    folders = [folder for folder in named.split(os.pathsep) if folder] if named else DEFAULT_SOURCES
    return [(REPO / folder).resolve() for folder in folders]


def sources_dir() -> Path:
    """The one folder a real leg runs on: the first of :func:`sources_dirs` (``tests/run.py`` names one per leg)."""
    return sources_dirs()[0]


def python_paths(root: Path) -> list[Path]:
    """The folders KNIME puts on ``sys.path``, in the README's order."""
    return [root / plugin / "src" / "main" / "python" for plugin in PLUGINS]
