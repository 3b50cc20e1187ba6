"""KNIME I/O: PNG image cells: the KNIME type of the core's image columns, and the step that fills them batch by batch.

The core keeps images as PNG bytes in a plain binary Arrow column (KNIME-free, and what the CLI writes to Parquet).
KNIME's Python tables refuse binary columns but have PNG image cells, ``knext.logical(PIL.Image.Image)`` (KNIME's
``PNGImageValueFactory``). The public way to fill such a column is a pandas column of PIL images typed with that
logical type, so only the image columns take that detour; every other column of a batch stays the Arrow it was.
"""

from __future__ import annotations

import io
from collections.abc import Collection
from typing import TYPE_CHECKING

import knime.extension as knext

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["png_image_type", "with_png_cells"]


def png_image_type() -> knext.KnimeType:
    """KNIME's PNG image cell type; Pillow is imported on first use, not when KNIME loads the extension."""
    import PIL.Image

    return knext.logical(PIL.Image.Image)


def with_png_cells(batch: pa.RecordBatch, columns: Collection[str]) -> pa.RecordBatch:
    """``batch`` with each of ``columns`` (PNG bytes, as the core writes them) as PNG image cells; missing values stay
    missing, and an empty or all-missing column still gets the image type."""
    import pyarrow as pa

    schema, arrays = batch.schema, list(batch.columns)
    for name in columns:
        index = schema.get_field_index(name)
        arrays[index] = _png_cells(arrays[index])
        schema = schema.set(index, schema.field(index).with_type(arrays[index].type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _png_cells(data: pa.Array) -> pa.Array:
    import pandas as pd
    import PIL.Image

    images = [None if png is None else PIL.Image.open(io.BytesIO(png)) for png in data.to_pylist()]
    cells = pd.Series(images, dtype=png_image_type().to_pandas())
    column = knext.Table.from_pandas(pd.DataFrame({"image": cells})).to_pyarrow().column("image")
    return column.combine_chunks()
