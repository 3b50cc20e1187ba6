"""PNG image cells: the one logical type of the host, as KNIME's ``PNGImageValueFactory`` for ``PIL.Image.Image``.

Mirrored: ``Table.from_pandas`` turns a column whose first present value is exactly a ``PIL.Image.Image`` (KNIME
looks up the exact class name, so a subclass such as the ``PngImageFile`` of ``PIL.Image.open`` is rejected there as
any unknown object is), or a column of dtype ``knext.logical(PIL.Image.Image).to_pandas()`` (which takes subclasses,
and also keeps the type without any image), into PNG cells. ``None`` (and NaN in an inferred column) is a missing
cell; any other value is saved as PNG, so one that is no image raises ``AttributeError`` (``... has no attribute
'save'``), for a typed column already when the column is made. ``to_pyarrow`` keeps the cells and
``from_pyarrow``/``BatchOutputTable.append`` take them back; ``to_pandas`` gives PIL images (``None`` for a missing
cell). A cell is stored as its PNG bytes in the Arrow extension column ``knext_host.png`` (KNIME keeps them in file
stores). Imported only when a table needs it, so pandas, pyarrow and Pillow load on first use.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from typing import Any

import numpy as np
import pyarrow as pa
from pandas.api.extensions import ExtensionArray, ExtensionDtype, take

EXTENSION_NAME = "knext_host.png"


class PngType(pa.ExtensionType):
    """The Arrow type of a PNG image column: the PNG bytes of each cell."""

    def __init__(self) -> None:
        super().__init__(pa.large_binary(), EXTENSION_NAME)

    def __arrow_ext_serialize__(self) -> bytes:
        return b""

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type: pa.DataType, serialized: bytes) -> PngType:
        return cls()


pa.register_extension_type(PngType())  # unregistered extension types are lost on some conversions (``pa.table``)


class PngDtype(ExtensionDtype):
    """The pandas dtype of a PNG image column: it keeps the type when no cell holds an image."""

    name = EXTENSION_NAME
    type = object
    na_value = None

    @classmethod
    def construct_array_type(cls) -> type[PngArray]:
        return PngArray


class PngArray(ExtensionArray):
    """PIL images (or ``None``) in a pandas column; becomes PNG cells in Arrow."""

    def __init__(self, values: Iterable[Any]) -> None:
        items = list(values)
        self._values = np.empty(len(items), dtype=object)
        for index, value in enumerate(items):  # one by one: numpy would unpack an image into its pixels
            self._values[index] = value

    @classmethod
    def _from_sequence(cls, scalars: Iterable[Any], *, dtype: Any = None, copy: bool = False) -> PngArray:
        items = list(scalars)
        for value in items:  # KNIME encodes each value as the column is made, so one that is no image fails here
            if value is not None:
                _png(value)
        return cls(items)

    def __getitem__(self, item: Any) -> Any:
        result = self._values[item]
        return type(self)(result) if isinstance(result, np.ndarray) else result

    def __len__(self) -> int:
        return len(self._values)

    @property
    def dtype(self) -> PngDtype:
        return PngDtype()

    @property
    def nbytes(self) -> int:
        return int(self._values.nbytes)

    def isna(self) -> np.ndarray:
        return np.array([value is None for value in self._values], dtype=bool)

    def take(self, indices: Any, *, allow_fill: bool = False, fill_value: Any = None) -> PngArray:
        return type(self)(take(self._values, indices, allow_fill=allow_fill, fill_value=fill_value))

    def copy(self) -> PngArray:
        return type(self)(self._values)

    @classmethod
    def _concat_same_type(cls, to_concat: Iterable[PngArray]) -> PngArray:
        return cls([value for array in to_concat for value in array._values])

    def __arrow_array__(self, type: Any = None) -> pa.ExtensionArray:
        return png_cells(self._values)


def png_cells(images: Iterable[Any]) -> pa.ExtensionArray:
    """PNG cells of PIL images (``None``: a missing cell); any other value raises as KNIME's ``save`` call does."""
    storage = pa.array([None if image is None else _png(image) for image in images], pa.large_binary())
    return pa.ExtensionArray.from_storage(PngType(), storage)


def images(cells: pa.Array | pa.ChunkedArray) -> PngArray:
    """The PIL images of PNG cells."""
    import PIL.Image

    storage = cells.storage if isinstance(cells, pa.ExtensionArray) else cells.combine_chunks().storage
    return PngArray(None if png is None else PIL.Image.open(io.BytesIO(png)) for png in storage.to_pylist())


def is_png_type(dtype: pa.DataType) -> bool:
    return isinstance(dtype, pa.ExtensionType) and dtype.extension_name == EXTENSION_NAME


def is_image(value: Any) -> bool:
    """Whether KNIME infers a PNG column from ``value``: by its exact class name, so not for a subclass."""
    return f"{type(value).__module__}.{type(value).__qualname__}" == "PIL.Image.Image"


def _png(image: Any) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()
