"""Images as PNG: what a KNIME image cell holds, made from whatever image an MCP server sends.

Layer: core, under the Tool Caller's result batches (:mod:`knime_mcp.caller.batches`), which keep the PNG bytes in a
plain binary Arrow column; the KNIME node turns that column into PNG image cells, since KNIME's Python tables have no
raw binary column. An image arrives as base64 in any format (PNG, JPEG, GIF, WebP, BMP, TIFF, ...): it is decoded in
full with Pillow, passed on as it is when it already is a well-formed PNG file (every chunk's checksum right, nothing
after its end), and converted to PNG otherwise (an animation keeps its first frame), so no unchecked bytes reach a
PNG cell. Data that is not such an image raises :class:`ImageError`, which the caller makes that row's error.

    png = to_png(result.images[0])
"""

from __future__ import annotations

import base64
import io
import zlib
from typing import TYPE_CHECKING

from knime_mcp.tools.results import ImagePart

if TYPE_CHECKING:
    from PIL.Image import Image

__all__ = ["ImageError", "to_png"]

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_PNG_MODES = frozenset({"1", "L", "LA", "I", "I;16", "P", "RGB", "RGBA"})
"""Pillow modes that PNG stores as they are; any other mode (CMYK, YCbCr, ...) is converted to RGB(A) first."""


class ImageError(ValueError):
    """Image data that cannot become a PNG image: not base64, in no format Pillow reads, or damaged."""


def to_png(image: ImagePart) -> bytes:
    """The image as PNG bytes. Pillow is imported here, on the first image, not with the caller."""
    from PIL import Image as PILImage
    from PIL import UnidentifiedImageError

    try:
        # Line-wrapped base64 (as base64.encodebytes writes it) is valid too: the MCP SDK accepts it.
        data = base64.b64decode("".join(image.data.split()), validate=True)
    except ValueError as exc:  # binascii.Error, or a plain ValueError for text that is not ASCII
        raise ImageError(f"its data ({image.mime_type}) is not valid base64: {exc}") from exc
    try:
        with PILImage.open(io.BytesIO(data)) as decoded:
            decoded.load()
            return data if decoded.format == "PNG" and _well_formed_png(data) else _encode_png(decoded)
    except UnidentifiedImageError as exc:
        raise ImageError(f"its data ({image.mime_type}) is in no image format that can be read") from exc
    except (OSError, ValueError, SyntaxError, PILImage.DecompressionBombError) as exc:
        raise ImageError(f"its data ({image.mime_type}) is damaged or too large: {exc}") from exc


def _well_formed_png(data: bytes) -> bool:
    """Whether ``data`` is PNG chunks and nothing else. Pillow reads a PNG without checking its image data's
    checksums or what follows its end, so bytes it decodes may still carry damage or a whole other file."""
    view = memoryview(data)
    position = len(_PNG_SIGNATURE)
    while data.startswith(_PNG_SIGNATURE) and position + 12 <= len(data):
        end = position + 12 + int.from_bytes(view[position : position + 4], "big")
        if end > len(data) or zlib.crc32(view[position + 4 : end - 4]) != int.from_bytes(view[end - 4 : end], "big"):
            return False
        if view[position + 4 : position + 8] == b"IEND":
            return end == len(data)
        position = end
    return False


def _encode_png(image: Image) -> bytes:
    if image.mode not in _PNG_MODES:
        image = image.convert("RGBA" if "A" in image.mode or "transparency" in image.info else "RGB")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()
