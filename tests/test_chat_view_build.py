"""The Agent Chat page's committed files (src/nodes/chat_view) are what frontend/chat_view's sources build to, with
the lockfile's dependencies, installed with ``npm ci`` on first use (as the npm test peers are)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from fixtures.npm_install import npm_ci
from view_harness import PAGE_DIR, PAGE_FILES, page_files

FRONTEND = Path(__file__).resolve().parent.parent / "frontend" / "chat_view"


def test_the_committed_page_is_what_the_sources_build_to(tmp_path: Path) -> None:
    npm_ci(FRONTEND, (FRONTEND / "node_modules").is_dir)
    subprocess.run(["node", "build.mjs", str(tmp_path)], cwd=FRONTEND, check=True, capture_output=True, timeout=120)
    assert page_files(tmp_path) == PAGE_FILES, "the built files are not the committed ones: run build.sh"
    for name in PAGE_FILES:
        assert (tmp_path / name).read_bytes() == (PAGE_DIR / name).read_bytes(), f"{name} differs: run build.sh"
