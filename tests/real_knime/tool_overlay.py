"""KNIME's unified Tool type, from its unreleased ``mcp-tools`` branch, laid over the real sources for one test.

The branch changes one Python module of knime-python, ``knime/types/tool.py`` (a ``Tool`` value with ToolType
WORKFLOW or MCP), and its ``plugin.xml`` registers ``ToolValueFactory`` for Java's
``org.knime.core.node.agentic.tool.ToolValueFactory``. :func:`branch_tool_type` does both in this process, for the
duration of a ``with`` block: a temporary folder holding the branch's ``knime/types/tool.py`` goes first on
``sys.path`` (``knime`` and ``knime.types`` are namespace packages, so their path follows), the module is imported
from there, and the value factory is registered with the node backend as KNIME's Java
side does for a declared ``PythonValueFactory``. Afterwards the released module and registrations come back, so the
other tests see the release again. Nothing of the branch is kept in the repository: ``tool.py`` is read from
``../shared/knime-python-mcp-tools`` (``KNIME_MCP_TOOL_OVERLAY`` names another file).

The Java data spec registered holds the fields the branch's ``tool.py`` writes
(:func:`real_knime.value_types.tool_factory`).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from real_knime import value_types
from real_knime.sources import REPO

OVERLAY_ENV = "KNIME_MCP_TOOL_OVERLAY"
DEFAULT_TOOL_PY = REPO.parent / "shared" / "knime-python-mcp-tools" / "tool.py"
_MODULE = "knime.types.tool"


def branch_tool_py() -> Path:
    """The branch's ``tool.py``: ``KNIME_MCP_TOOL_OVERLAY``, else the copy in ``../shared``."""
    path = Path(os.environ.get(OVERLAY_ENV) or DEFAULT_TOOL_PY)
    if not path.is_file():
        raise RuntimeError(f"KNIME's mcp-tools branch tool.py is not at {path}; set {OVERLAY_ENV}")
    return path


@contextmanager
def branch_tool_type(discriminator: str = "int") -> Iterator[ModuleType]:
    """Inside the block, ``knime.types.tool`` is the branch's module, registered as in a KNIME built from the branch
    (``discriminator``: see :func:`real_knime.value_types.tool_factory`); yields that module."""
    import knime.api.types as kt
    import knime.types

    from real_knime import driver

    released = sys.modules.get(_MODULE)
    bundles = (dict(kt._java_value_factory_to_bundle), dict(kt._python_type_to_bundle))
    cached = {key: bundle._value_factory for key, bundle in kt._java_value_factory_to_bundle.items()}
    with tempfile.TemporaryDirectory(prefix="knime-mcp-tool-overlay-") as folder:
        types = Path(folder) / "knime" / "types"  # namespace packages, like KNIME's: their path follows sys.path
        types.mkdir(parents=True)
        shutil.copyfile(branch_tool_py(), types / "tool.py")
        sys.path.insert(0, folder)
        sys.modules.pop(_MODULE, None)
        for bundle in kt._java_value_factory_to_bundle.values():
            bundle._value_factory = None  # made again from the module now in place
        try:
            import knime.types.tool as branch

            value_types.register_tool(driver.backend(), discriminator)
            yield branch
        finally:
            sys.path.remove(folder)
            kt._java_value_factory_to_bundle.clear()
            kt._java_value_factory_to_bundle.update(bundles[0])
            kt._python_type_to_bundle.clear()
            kt._python_type_to_bundle.update(bundles[1])
            for key, factory in cached.items():
                kt._java_value_factory_to_bundle[key]._value_factory = factory
            if released is None:
                sys.modules.pop(_MODULE, None)
                vars(knime.types).pop("tool", None)
            else:
                sys.modules[_MODULE] = released
                knime.types.tool = released  # type: ignore[attr-defined]


def tool_cells(table: Any, column: str = "KNIME Tool") -> list[Any]:
    """The cells of a KNIME Tool column of ``table`` (as a node received it), read through KNIME's Arrow backend:
    each a ``Tool`` decoded by KNIME's value factory, ``None`` for a missing cell (KNIME's ``decode`` takes none)."""
    data = table.to_pyarrow().column(column).combine_chunks()
    valid = iter(data.filter(data.is_valid()).to_pylist())
    return [next(valid) if present else None for present in data.is_valid().to_pylist()]


def tool_table(tools: list[Any], column: str = "KNIME Tool", **others: list[Any]) -> Any:
    """A table holding ``tools`` (``Tool`` values, ``None`` for a missing cell) in a KNIME Tool column, written as
    KNIME's Java side writes one, and ``others`` as plain columns."""
    import knime.extension as knext
    import pyarrow as pa
    from knime.types.tool import Tool, ToolValueFactory

    kind = knext.logical(Tool).to_pyarrow()
    factory = ToolValueFactory()
    storage = pa.array([None if tool is None else factory.encode(tool) for tool in tools], kind.storage_type)
    return pa.table({**others, column: pa.ExtensionArray.from_storage(kind, storage)})
