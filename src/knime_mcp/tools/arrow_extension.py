"""The "MCP Tool" Arrow extension type: a column of MCP tools that survives IPC streams, Parquet and pandas.

Registered with pyarrow on import, safely again on a reload. Its storage is the struct of
:mod:`knime_mcp.tools.table_layout`; its cells, chunks and pandas columns decode through
:mod:`knime_mcp.tools.table_reading`. KNIME tables cannot hold it (a pure-Python extension cannot add a column type):
they hold JSON text instead (:func:`knime_mcp.tools.arrow.tools_to_table`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import pyarrow as pa

from knime_mcp.tools.table_layout import EXTENSION_NAME, STORAGE, TOOL_COLUMN
from knime_mcp.tools.table_reading import decode_row, decode_struct, tools_of
from knime_mcp.tools.tool import MCPTool

__all__ = ["MCPToolArray", "MCPToolScalar", "MCPToolType", "register_mcp_tool_type"]


class MCPToolType(pa.ExtensionType):
    """The Arrow type of a column of MCP tools."""

    def __init__(self) -> None:
        super().__init__(STORAGE, EXTENSION_NAME)

    def __arrow_ext_serialize__(self) -> bytes:
        return b""

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type: pa.DataType, serialized: bytes) -> MCPToolType:
        return cls()

    def __arrow_ext_class__(self) -> type[MCPToolArray]:
        return MCPToolArray

    def __arrow_ext_scalar_class__(self) -> type[MCPToolScalar]:
        return MCPToolScalar

    def to_pandas_dtype(self) -> Any:
        return _pandas_dtype()()


class MCPToolArray(pa.ExtensionArray):
    """A chunk of an "MCP Tool" column."""

    def to_tools(self) -> list[MCPTool]:
        return decode_struct(self.storage, TOOL_COLUMN)


class MCPToolScalar(pa.ExtensionScalar):
    """One cell of an "MCP Tool" column; ``as_py()`` is the MCPTool."""

    def as_py(self, **kwargs: Any) -> MCPTool | None:
        if self.value is None:
            return None
        return decode_row(self.value.as_py(), TOOL_COLUMN)


def register_mcp_tool_type() -> None:
    """Register the extension type with pyarrow, replacing an earlier registration (a module reload's)."""
    try:
        pa.unregister_extension_type(EXTENSION_NAME)
    except KeyError:
        pass  # Nothing registered yet: the usual case.
    pa.register_extension_type(MCPToolType())


register_mcp_tool_type()


@cache
def _pandas_dtype() -> type:
    """A pandas dtype whose columns hold MCPTool objects; pandas is imported on first conversion.

    Its array is a small ExtensionArray of its own: pandas unwraps its numpy-backed one into a plain block, which
    pandas before 2.1 then rejects for one column."""
    import numpy as np
    import pandas as pd
    from pandas.api.extensions import ExtensionArray, ExtensionDtype, take

    class MCPToolDtype(ExtensionDtype):
        name = EXTENSION_NAME
        type = MCPTool

        @classmethod
        def construct_array_type(cls) -> type:
            return MCPToolPandasArray

        def __from_arrow__(self, array: pa.Array | pa.ChunkedArray) -> MCPToolPandasArray:
            return MCPToolPandasArray._from_sequence(tools_of(array, TOOL_COLUMN))

    class MCPToolPandasArray(ExtensionArray):
        def __init__(self, cells: np.ndarray) -> None:
            self._cells = cells

        @classmethod
        def _from_sequence(cls, scalars: Sequence[Any], *, dtype: Any = None, copy: bool = False) -> MCPToolPandasArray:
            cells = np.empty(len(scalars), dtype=object)
            cells[:] = list(scalars)
            return cls(cells)

        @classmethod
        def _from_factorized(cls, values: np.ndarray, original: MCPToolPandasArray) -> MCPToolPandasArray:
            return cls._from_sequence(values)

        @classmethod
        def _concat_same_type(cls, to_concat: Sequence[MCPToolPandasArray]) -> MCPToolPandasArray:
            return cls(np.concatenate([array._cells for array in to_concat]))

        @property
        def dtype(self) -> MCPToolDtype:
            return MCPToolDtype()

        @property
        def nbytes(self) -> int:
            return self._cells.nbytes

        def __len__(self) -> int:
            return len(self._cells)

        def __getitem__(self, item: Any) -> Any:
            cells = self._cells[item]
            return type(self)(cells) if isinstance(cells, np.ndarray) else cells

        def __eq__(self, other: Any) -> np.ndarray:  # type: ignore[override]
            others = other._cells if isinstance(other, MCPToolPandasArray) else other
            return np.asarray(self._cells == others, dtype=bool)

        def isna(self) -> np.ndarray:
            return pd.isna(self._cells)

        def take(
            self, indices: Sequence[int], *, allow_fill: bool = False, fill_value: Any = None
        ) -> MCPToolPandasArray:
            return type(self)(take(self._cells, indices, allow_fill=allow_fill, fill_value=fill_value))

        def copy(self) -> MCPToolPandasArray:
            return type(self)(self._cells.copy())

    return MCPToolDtype
