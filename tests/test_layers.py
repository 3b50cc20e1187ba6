"""The core's architecture as docs/architecture.md draws it: layers that import only down, no import cycles
(import-linter's contracts in pyproject.toml), and no module past 400 lines. Each check is shown to fail on a core
that breaks it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "src"
CORE = SOURCES / "knime_mcp"
MAX_MODULE_LINES = 400


def lint_imports(sources: Path) -> subprocess.CompletedProcess[str]:
    """import-linter's check of pyproject.toml's contracts, over the core (and the nodes) found first in ``sources``."""
    command = [
        sys.executable,
        "-c",
        "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())",
        "--no-cache",
        "--no-logo",
        str(ROOT / "pyproject.toml"),
    ]
    env = {**os.environ, "PYTHONPATH": str(sources)}
    return subprocess.run(command, env=env, cwd=sources, capture_output=True, text=True, timeout=300)


def long_modules(sources: Path) -> dict[str, int]:
    """The modules under ``sources`` longer than :data:`MAX_MODULE_LINES`, with their lengths."""
    paths = sources.rglob("*.py")
    lengths = {path.relative_to(sources).as_posix(): len(path.read_text().splitlines()) for path in paths}
    return {path: lines for path, lines in lengths.items() if lines > MAX_MODULE_LINES}


@pytest.fixture
def core_copy(tmp_path: Path) -> Path:
    """A copy of the core to break, in a folder of its own."""
    shutil.copytree(CORE, tmp_path / "knime_mcp", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def add_import(core: Path, module: str, statement: str) -> None:
    path = core / "knime_mcp" / module
    path.write_text(path.read_text() + f"\n{statement}\n")


def test_the_core_keeps_its_layer_and_cycle_contracts() -> None:
    checked = lint_imports(SOURCES)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "5 kept, 0 broken" in checked.stdout


@pytest.mark.parametrize(
    ("module", "statement", "broken"),
    [
        ("tools/names.py", "from knime_mcp.calls.pool import ClientPool", "knime_mcp.tools.names -> knime_mcp.calls"),
        ("mcp/sync.py", "from knime_mcp.http.call import HttpToolClient", "knime_mcp.mcp.sync -> knime_mcp.http"),
        ("catalog/resource_reader.py", "import knime_mcp.caller.table", "knime_mcp.catalog.resource_reader ->"),
        ("net/breaker.py", "import knime_mcp.llm.chat_model", "knime_mcp.net.breaker -> knime_mcp.llm.chat_model"),
    ],
    ids=["values import calls", "mcp imports http", "one feature imports another", "net imports llm"],
)
def test_an_import_that_climbs_or_crosses_a_layer_breaks_the_contract(
    core_copy: Path, module: str, statement: str, broken: str
) -> None:
    add_import(core_copy, module, statement)
    checked = lint_imports(core_copy)
    assert checked.returncode != 0 and "faces BROKEN" in checked.stdout
    assert broken in checked.stdout


def test_two_modules_that_import_each_other_break_the_contract(core_copy: Path) -> None:
    add_import(core_copy, "tools/names.py", "import knime_mcp.tools.policy")
    add_import(core_copy, "tools/policy.py", "import knime_mcp.tools.names")
    checked = lint_imports(core_copy)
    assert checked.returncode != 0 and "No cycles are allowed in knime_mcp.tools" in checked.stdout


def test_a_new_module_has_to_take_its_place_in_the_layers(core_copy: Path) -> None:
    (core_copy / "knime_mcp" / "helpers.py").write_text('"""Anything."""\n')
    checked = lint_imports(core_copy)
    assert checked.returncode != 0 and "knime_mcp.helpers" in checked.stdout


def test_no_module_of_the_core_or_the_nodes_is_longer_than_400_lines() -> None:
    assert long_modules(SOURCES) == {}


def test_a_module_past_400_lines_is_named(core_copy: Path) -> None:
    add_import(core_copy, "seal.py", "\n" * MAX_MODULE_LINES)
    assert "knime_mcp/seal.py" not in long_modules(SOURCES)
    assert long_modules(core_copy)["knime_mcp/seal.py"] > MAX_MODULE_LINES
