"""Test server: one tool, `picture`, that returns a small picture in the image format a row asks for, as MCP servers
in the wild do (screenshots as JPEG, charts as PNG, animations as GIF), or image content that is no image at all.

`format` is a Pillow format name (png, jpeg, gif, webp, bmp, tiff), `cmyk` (a JPEG in CMYK, as print software
writes them), `svg` (vector text, which no raster reader opens) or `broken` (a PNG cut short after its header).
Each result also carries a line of text naming the format. Runs over stdio.
"""

from __future__ import annotations

import base64
import io

from mcp.server.mcpserver import MCPServer
from mcp_types import ImageContent, TextContent
from PIL import Image

_SVG = b'<svg xmlns="http://www.w3.org/2000/svg" width="4" height="3"><rect width="4" height="3"/></svg>'


def _picture(fmt: str) -> tuple[bytes, str]:
    """The image data and the MIME type the server declares for it."""
    if fmt == "svg":
        return _SVG, "image/svg+xml"
    if fmt == "broken":
        return _encoded("png", "RGB", (64, 64))[:60], "image/png"
    if fmt == "cmyk":
        return _encoded("jpeg", "CMYK"), "image/jpeg"
    return _encoded(fmt, "RGBA" if fmt in ("png", "webp") else "RGB"), f"image/{fmt}"


def _encoded(fmt: str, mode: str, size: tuple[int, int] = (4, 3)) -> bytes:
    buffer = io.BytesIO()
    Image.new(mode, size, "blue" if mode != "CMYK" else (255, 0, 0, 0)).save(buffer, format=fmt.upper())
    return buffer.getvalue()


def main() -> None:
    server = MCPServer("knime-mcp-image-test")

    @server.tool(structured_output=False)
    def picture(format: str) -> list[TextContent | ImageContent]:
        """Return a 4 x 3 picture in the given format (png, jpeg, gif, webp, bmp, tiff, cmyk, svg or broken)."""
        data, mime_type = _picture(format)
        return [
            TextContent(type="text", text=f"a {format} picture"),
            ImageContent(type="image", data=base64.b64encode(data).decode(), mime_type=mime_type),
        ]

    server.run("stdio")


if __name__ == "__main__":
    main()
