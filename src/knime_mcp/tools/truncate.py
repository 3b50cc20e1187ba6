"""The output cap: how much of a tool result's text reaches a model.

A tool may return megabytes; a model's context holds far less, and paying for it helps nobody. The agent caps the
text it hands to a model with :func:`cap_text`; the full result stays in the output table or the
tool-call log, and the note appended to the cut text says so. Images count too (:func:`cap_image`): a model is sent
at most :data:`MAX_IMAGES_PER_RESULT` images per result, each at most :data:`MAX_IMAGE_SIDE` pixels on its longest
side and :data:`MAX_IMAGE_BYTES` long, downscaled and re-encoded when it is larger, or else left out with a note.

    text, truncated = cap_text(result.text)            # at most 100,000 UTF-8 bytes, note included
    capped = cap_image(part)                           # the image as sent, smaller, or None with the reason
"""

from __future__ import annotations

import base64
import binascii
import io
from dataclasses import replace
from typing import TYPE_CHECKING, NamedTuple

from knime_mcp.errors import ConfigError

if TYPE_CHECKING:
    from PIL.Image import Image

    from knime_mcp.tools.results import ImagePart

__all__ = [
    "DEFAULT_LIMIT_BYTES",
    "MAX_DECODED_PIXELS",
    "MAX_IMAGES_PER_RESULT",
    "MAX_IMAGE_BYTES",
    "MAX_IMAGE_SIDE",
    "MIN_LIMIT_BYTES",
    "CappedImage",
    "cap_image",
    "cap_text",
]

DEFAULT_LIMIT_BYTES = 100_000
"""The default cap: 100 KB of UTF-8 text."""

MIN_LIMIT_BYTES = 1_000
"""The smallest cap accepted: room for the note and some text."""

_NOTE_BUDGET = 256
"""Bytes kept free for the note; the longest note (two 20-digit sizes) is well below it."""


def cap_text(text: str, limit_bytes: int = DEFAULT_LIMIT_BYTES) -> tuple[str, bool]:
    """``text`` unchanged if its UTF-8 form fits ``limit_bytes``, else its start plus a note; and whether it was cut.

    The cut never splits a character, and the capped text including the note is at most ``limit_bytes`` long.
    """
    if limit_bytes < MIN_LIMIT_BYTES:
        raise ConfigError(
            f"The output cap of {limit_bytes:,} bytes is too small.",
            hint=f"Set the output cap to at least {MIN_LIMIT_BYTES:,} bytes.",
        )
    encoded = text.encode("utf-8", errors="surrogatepass")
    if len(encoded) <= limit_bytes:
        return text, False
    kept = encoded[: limit_bytes - _NOTE_BUDGET].decode("utf-8", errors="ignore")
    kept_bytes = len(kept.encode("utf-8"))
    note = (
        f"\n\n[Output truncated: showing the first {kept_bytes:,} of {len(encoded):,} bytes; "
        f"{len(encoded) - kept_bytes:,} bytes were cut. The full result is in the output table or the tool-call log.]"
    )
    return kept + note, True


MAX_IMAGES_PER_RESULT = 4
"""Images of one tool result sent to the model; the others are named in a note. A model bills every image, and a
tool answering with a gallery of screenshots rarely needs more than the first few seen."""

MAX_IMAGE_BYTES = 5_000_000
"""Bytes (decoded, not base64) of one image sent to the model: the smallest per-image limit of the major chat APIs.
A larger image is downscaled and re-encoded; one that still does not fit is left out with a note."""

MAX_IMAGE_SIDE = 2048
"""Pixels of the longest side of an image sent to the model; the major chat APIs scale larger images down to about
this size anyway, so sending more only costs bytes and memory."""

MAX_DECODED_PIXELS = 50_000_000
"""Pixels (width times height) of the largest image decoded to be downscaled, about 200 MB as RGBA. A larger image
is left out with a note without being decoded, so that no tool can make the run's memory balloon."""


class CappedImage(NamedTuple):
    """What of one image reaches the model."""

    image: ImagePart | None
    """The image to send (the one given when it fits, else a downscaled copy), or None when it is left out."""

    note: str
    """What was done to it, or why it is left out, for the text the model reads; empty when sent as it is."""


def cap_image(image: ImagePart) -> CappedImage:
    """``image`` as it is when it fits :data:`MAX_IMAGE_BYTES` and :data:`MAX_IMAGE_SIDE`, else downscaled to fit.

    Decodes this one image only (callers go through a result's images one by one), and never one larger than
    :data:`MAX_DECODED_PIXELS`. Data Pillow cannot read is sent as it is if it is small enough: whether it is an
    image is for the model's API to judge, as before there was a cap.
    """
    from PIL import Image as PILImage
    from PIL import UnidentifiedImageError

    try:
        data = base64.b64decode("".join(image.data.split()), validate=True)
    except binascii.Error:
        return _unreadable(image, len(image.data) * 3 // 4)
    size = len(data)
    try:
        with PILImage.open(io.BytesIO(data)) as decoded:
            width, height = decoded.size
            if size <= MAX_IMAGE_BYTES and max(width, height) <= MAX_IMAGE_SIDE:
                return CappedImage(image, "")
            if width * height > MAX_DECODED_PIXELS:
                return CappedImage(None, f"{width:,} x {height:,} pixels is too large to be scaled down for the model")
            decoded.thumbnail((MAX_IMAGE_SIDE, MAX_IMAGE_SIDE))
            encoded, mime_type = _encode_small(decoded)
            scaled = decoded.size
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, PILImage.DecompressionBombError):
        return _unreadable(image, size)
    if encoded is None:
        return CappedImage(None, f"even scaled down it exceeds {MAX_IMAGE_BYTES:,} bytes")
    note = f"re-encoded from {size:,} to {len(encoded):,} bytes"
    if scaled != (width, height):
        note = f"scaled down from {width:,} x {height:,} to {scaled[0]:,} x {scaled[1]:,} pixels, {note}"
    return CappedImage(replace(image, data=base64.b64encode(encoded).decode("ascii"), mime_type=mime_type), note)


def _unreadable(image: ImagePart, size: int) -> CappedImage:
    """Data Pillow cannot read: sent as it is if small enough, else left out (it cannot be scaled down)."""
    if size <= MAX_IMAGE_BYTES:
        return CappedImage(image, "")
    return CappedImage(None, f"its {size:,} bytes exceed {MAX_IMAGE_BYTES:,} and it cannot be read to be scaled down")


def _encode_small(image: Image) -> tuple[bytes | None, str]:
    """The image as PNG (lossless, best for charts and screenshots) or, when that is too large, as JPEG (photos and
    noise); None when neither fits :data:`MAX_IMAGE_BYTES`."""
    buffer = io.BytesIO()
    (image if image.mode in ("1", "L", "LA", "P", "RGB", "RGBA") else image.convert("RGBA")).save(buffer, "PNG")
    if buffer.tell() <= MAX_IMAGE_BYTES:
        return buffer.getvalue(), "image/png"
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, "JPEG", quality=85)
    return (buffer.getvalue() if buffer.tell() <= MAX_IMAGE_BYTES else None), "image/jpeg"
