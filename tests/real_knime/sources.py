"""Where KNIME's own Python sources are: a copy of knime-python outside this repository, used as test data only.

``KNIME_PYTHON_SOURCES`` names the folder (a relative path counts from the repository root); by default it is
``../shared/knime-python`` next to the repository. Its README lists the five plug-in folders whose
``src/main/python`` go on ``sys.path``, as KNIME puts them there for a Python node process.
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


def sources_dir() -> Path:
    """The knime-python folder named by ``KNIME_PYTHON_SOURCES``, else ``<repo>/../shared/knime-python``."""
    return (REPO / os.environ.get(SOURCES_ENV, "../shared/knime-python")).resolve()


def python_paths(root: Path) -> list[Path]:
    """The folders KNIME puts on ``sys.path``, in the README's order."""
    return [root / plugin / "src" / "main" / "python" for plugin in PLUGINS]
