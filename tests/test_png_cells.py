"""Images for KNIME's PNG image cells: the core's PNG conversion, and the Tool Caller's core against a server that
sends images in many formats. The node's PNG image cells, on both hosts, are checked in tests/test_caller_node.py."""

from __future__ import annotations

import base64
import io
import shlex
import sys
from collections.abc import Callable

import pyarrow as pa
import pytest
from PIL import Image

from fixtures.python_servers import SERVERS_DIR
from knime_mcp.caller.table import CallerOptions, call_table_sync
from knime_mcp.config import ServerSpec
from knime_mcp.errors import ToolCallError
from knime_mcp.mcp.sync import SyncMcpClient
from knime_mcp.seal import seal_spec
from knime_mcp.tools.images import ImageError, to_png
from knime_mcp.tools.results import ImagePart
from knime_mcp.tools.tool import MCPTool

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _image(fmt: str, mode: str = "RGB", size: tuple[int, int] = (5, 4)) -> ImagePart:
    buffer = io.BytesIO()
    Image.new(mode, size).save(buffer, format=fmt)
    return ImagePart(base64.b64encode(buffer.getvalue()).decode(), f"image/{fmt.lower()}")


def _decoded(png: bytes) -> Image.Image:
    assert png.startswith(PNG_SIGNATURE)
    return Image.open(io.BytesIO(png))


# -- the core: any image becomes PNG ---------------------------------------------------------------------------------


def test_png_data_is_passed_on_as_it_came() -> None:
    image = _image("PNG", "RGBA")
    assert to_png(image) == image.bytes


@pytest.mark.parametrize(
    ("fmt", "mode"),
    [("JPEG", "RGB"), ("JPEG", "CMYK"), ("GIF", "P"), ("WEBP", "RGBA"), ("BMP", "RGB"), ("TIFF", "CMYK")],
)
def test_other_image_formats_become_png_of_the_same_size_and_colour(fmt: str, mode: str) -> None:
    image = _image(fmt, mode, (7, 3))
    png = _decoded(to_png(image))
    assert (png.format, png.size) == ("PNG", (7, 3))
    assert png.convert("RGBA").getpixel((6, 2)) == Image.open(io.BytesIO(image.bytes)).convert("RGBA").getpixel((6, 2))


@pytest.mark.parametrize("fmt", ["PNG", "JPEG"])
def test_line_wrapped_base64_as_encodebytes_writes_it_is_read_too(fmt: str) -> None:
    image = _image(fmt, size=(64, 64))
    wrapped = ImagePart(base64.encodebytes(image.bytes).decode(), image.mime_type)
    assert "\n" in wrapped.data.strip()  # more than one line
    assert _decoded(to_png(wrapped)).size == (64, 64)
    assert to_png(wrapped) == to_png(image)


@pytest.mark.parametrize(
    ("data", "mime_type", "reason"),
    [
        ("not base64!", "image/png", "not valid base64"),
        (base64.b64encode(b"plain text").decode(), "image/png", "in no image format that can be read"),
        (base64.b64encode(b'<svg xmlns="http://www.w3.org/2000/svg"/>').decode(), "image/svg+xml", "no image format"),
        (_image("PNG", size=(64, 64)).data[:60], "image/png", "damaged or too large"),
    ],
)
def test_data_that_is_no_readable_image_raises_an_image_error_that_says_why(
    data: str, mime_type: str, reason: str
) -> None:
    with pytest.raises(ImageError, match=reason) as caught:
        to_png(ImagePart(data, mime_type))
    assert mime_type in str(caught.value)


@pytest.mark.parametrize("data", ["QUJD\u00e9", "\u00e9\u00e9\u00e9\u00e9"])
def test_image_data_that_is_not_even_ascii_raises_an_image_error_too(data: str) -> None:
    # Given image data with characters outside ASCII (Python's decoder refuses them with a plain ValueError)
    # When it is converted, Then it is an ImageError, which fails that row only, not an error that stops the run
    with pytest.raises(ImageError, match=r"^its data \(image/png\) is not valid base64"):
        to_png(ImagePart(data, "image/png"))


def _with_bad_image_data_checksum(png: bytes) -> bytes:
    """``png`` with the checksum of its first IDAT chunk flipped; Pillow decodes it without noticing."""
    start = png.index(b"IDAT") - 4
    end = start + 12 + int.from_bytes(png[start : start + 4], "big")
    return png[: end - 1] + bytes([png[end - 1] ^ 0xFF]) + png[end:]


@pytest.mark.parametrize(
    "damage",
    [
        lambda png: png + b"<html><script>alert(1)</script></html>",
        lambda png: png + _image("JPEG").bytes,
        _with_bad_image_data_checksum,
    ],
    ids=["text after the end", "another file after the end", "wrong checksum"],
)
def test_png_data_with_unchecked_bytes_is_written_anew_so_the_cell_holds_a_well_formed_png(
    damage: Callable[[bytes], bytes],
) -> None:
    # Given PNG data that Pillow decodes, but with bytes after its end or a wrong checksum
    clean = _image("PNG", "RGBA", (6, 5)).bytes
    damaged = damage(clean)
    assert Image.open(io.BytesIO(damaged)).convert("RGBA").getpixel((5, 4)) == (0, 0, 0, 0)
    # When it is converted
    png = to_png(ImagePart(base64.b64encode(damaged).decode(), "image/png"))
    # Then the result is a PNG written anew from the pixels: none of the unchecked bytes, the same picture
    assert png != damaged and png.endswith(b"IEND\xaeB`\x82") and png.count(b"IEND") == 1
    assert to_png(ImagePart(base64.b64encode(png).decode(), "image/png")) == png  # well-formed: passed on as it is
    assert _decoded(png).convert("RGBA").tobytes() == Image.open(io.BytesIO(clean)).convert("RGBA").tobytes()


# -- the Tool Caller against a server that sends images in many formats ---------------------------------------------


@pytest.fixture(scope="module")
def picture() -> MCPTool:
    """tests/servers/image_server.py's `picture` tool, over stdio, sealed as the MCP Tool Provider seals it."""
    spec = seal_spec(ServerSpec(target=shlex.join([sys.executable, str(SERVERS_DIR / "image_server.py")])))
    with SyncMcpClient(spec) as client:
        (tool,) = client.list_tools()
    return tool


def _call(tool: MCPTool, formats: list[str], on_error: str) -> pa.Table:
    written: list[pa.RecordBatch] = []
    batches = [pa.record_batch({"format": formats})]
    call_table_sync(tool, batches, written.append, options=CallerOptions(on_error=on_error))  # type: ignore[arg-type]
    return pa.Table.from_batches(written)


def test_the_image_column_holds_png_for_every_format_a_server_sends(picture: MCPTool) -> None:
    formats = ["png", "jpeg", "gif", "webp", "bmp", "tiff", "cmyk"]
    out = _call(picture, formats, "fail")
    assert out.schema.field("Image").type == pa.large_binary()
    assert [_decoded(png).size for png in out.column("Image").to_pylist()] == [(4, 3)] * len(formats)
    assert not any(out.column("Is error").to_pylist())


def test_an_image_that_cannot_be_read_is_that_rows_error_and_its_text_is_kept(picture: MCPTool) -> None:
    out = _call(picture, ["svg", "jpeg", "broken"], "column").to_pylist()
    assert [row["Is error"] for row in out] == [True, False, True]
    assert [row["Image"] is None for row in out] == [True, False, True]
    assert [row["Result"] for row in out] == ["a svg picture", "a jpeg picture", "a broken picture"]
    assert "returned an image that cannot be stored" in out[0]["Error"] and "image/svg+xml" in out[0]["Error"]
    assert "damaged" in out[2]["Error"]


def test_in_fail_mode_an_unreadable_image_fails_the_run_at_its_row_with_a_hint(picture: MCPTool) -> None:
    with pytest.raises(ToolCallError, match=r"^Row 2: Tool 'picture' returned an image") as caught:
        _call(picture, ["png", "svg"], "fail")
    assert "error column" in (caught.value.hint or "")
