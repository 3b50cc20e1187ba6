"""The node layer's plan (src/nodes), kept by import-linter's contracts in pyproject.toml: one module per node above
KNIME I/O (``nodes.knime_io``) above the parameters (``nodes.parameters``), no node module importing another, nothing
below a node importing one, and nothing of the core importing the node layer. Each is shown to fail on a copy of the
sources that breaks it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from test_layers import SOURCES, lint_imports


@pytest.fixture
def sources_copy(tmp_path: Path) -> Path:
    """A copy of the core and the nodes to break, in a folder of its own."""
    for package in ("knime_mcp", "nodes"):
        ignored = shutil.ignore_patterns("__pycache__", "chat_view")
        shutil.copytree(SOURCES / package, tmp_path / package, ignore=ignored)
    return tmp_path


def add_import(sources: Path, module: str, statement: str) -> None:
    path = sources / module
    path.write_text(path.read_text() + f"\n{statement}\n")


def test_the_node_layer_keeps_its_contracts() -> None:
    checked = lint_imports(SOURCES)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    # import-linter wraps a long contract name: the lines its verdict ends
    for verdict in ("each node on \nits own KEPT", "The core never imports the node layer KEPT", "rooms import each"):
        assert verdict in checked.stdout
    assert "BROKEN" not in checked.stdout


@pytest.mark.parametrize(
    ("module", "statement", "broken"),
    [
        ("nodes/parameters/tls.py", "import nodes.tool_caller", "nodes.parameters.tls -> nodes.tool_caller"),
        ("nodes/knime_io/tables.py", "import nodes.agent_chat", "nodes.knime_io.tables -> nodes.agent_chat"),
        ("nodes/parameters/agent.py", "import nodes.knime_io.errors", "nodes.parameters.agent -> nodes.knime_io"),
        ("nodes/tool_caller.py", "import nodes.tool_provider", "nodes.tool_caller -> nodes.tool_provider"),
    ],
    ids=["parameters import a node", "knime_io imports a node", "parameters import knime_io", "a node imports another"],
)
def test_an_import_that_climbs_or_crosses_the_node_layer_breaks_its_contract(
    sources_copy: Path, module: str, statement: str, broken: str
) -> None:
    add_import(sources_copy, module, statement)
    checked = lint_imports(sources_copy)
    assert checked.returncode != 0 and "its own BROKEN" in checked.stdout
    assert broken in checked.stdout


def test_the_core_importing_a_node_module_breaks_the_contract(sources_copy: Path) -> None:
    add_import(sources_copy, "knime_mcp/tools/names.py", "import nodes.knime_io.tables")
    checked = lint_imports(sources_copy)
    assert checked.returncode != 0 and "The core never imports the node layer BROKEN" in checked.stdout
    assert "knime_mcp.tools.names -> nodes.knime_io.tables" in checked.stdout


def test_a_new_module_beside_the_nodes_has_to_take_its_place_in_the_layers(sources_copy: Path) -> None:
    (sources_copy / "nodes" / "_helpers.py").write_text('"""Anything."""\n')
    checked = lint_imports(sources_copy)
    assert checked.returncode != 0 and "nodes._helpers" in checked.stdout


def test_two_modules_of_a_room_that_import_each_other_break_the_contract(sources_copy: Path) -> None:
    add_import(sources_copy, "nodes/parameters/timeouts.py", "import nodes.parameters.server")
    checked = lint_imports(sources_copy)
    assert checked.returncode != 0 and "No cycles are allowed in nodes.parameters" in checked.stdout
