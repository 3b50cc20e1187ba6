"""The bundled demo MCP server: a real server, shipped so that `knime-mcp tools` and the tests work offline.

Layer: a standalone program on the SDK's `MCPServer`; in the core only the CLI's `demo-server` command imports it.
Each tool shows one thing a client must handle: plain text, a wrapped scalar result, nested objects and arrays, an
enum, an image, structured output, an error result, a slow call and a destructive annotation. Its one prompt,
`review_chart`, shows what the npm server-everything's prompts do not: an image in a prompt message; its one resource
template, `demo://chart/{+values}`, an image resource (``demo://chart/3,1,2``: literal commas, or ``%2C``).

    python -m knime_mcp.demo_server                                   # stdio
    python -m knime_mcp.demo_server --transport streamable-http       # prints the URL it listens on
    python path/to/knime_mcp/demo_server.py                           # the same, run as a file

HTTP transports bind 127.0.0.1 only. With `--port 0` the kernel picks the port, and the first stdout line, `knime-mcp
demo server listening on http://127.0.0.1:PORT/mcp` (or `/sse`), tells the parent where to connect.
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__" and sys.path and os.path.realpath(sys.path[0]) == os.path.dirname(os.path.realpath(__file__)):
    # Run as a file, this folder comes first on the path, and its `mcp` package (knime-mcp's own) hides the SDK's.
    sys.path.pop(0)

import argparse
import signal
import socket
import struct
import zlib
from collections.abc import Callable, Sequence
from types import FrameType
from typing import Annotated, Literal

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.prompts.base import UserMessage
from mcp.server.mcpserver.utilities.types import Image
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["HOST", "build_server", "listening_socket", "main", "serve_http"]

HOST = "127.0.0.1"
"""Loopback only: the demo server is never reachable from another machine."""

TemperatureUnit = Literal["celsius", "fahrenheit", "kelvin"]

_GRACEFUL_SHUTDOWN_SECONDS = 2
"""A call in progress (a long `sleep`, say) holds its request open; shutdown stops waiting for it after this long."""

_READ_ONLY = ToolAnnotations(readOnlyHint=True, idempotentHint=True, destructiveHint=False, openWorldHint=False)
_CREATES = ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False)
_DESTRUCTIVE = ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=True, openWorldHint=False)


class Customer(BaseModel):
    name: Annotated[str, Field(min_length=1, description="Full name of the customer.")]
    email: Annotated[str, Field(pattern=r"^[^@\s]+@[^@\s]+$", description="E-mail address of the customer.")]


class OrderItem(BaseModel):
    sku: Annotated[str, Field(min_length=1, description="Stock keeping unit of the product.")]
    quantity: Annotated[int, Field(ge=1, description="How many units to order.")]


class Order(BaseModel):
    order_id: str = Field(description="Identifier derived from the order's content, so equal orders get equal ids.")
    customer: Customer
    items: list[OrderItem]
    total_quantity: int = Field(description="Sum of the item quantities.")
    note: str | None = None


class WordStats(BaseModel):
    words: int = Field(description="Number of whitespace-separated words.")
    unique_words: int = Field(description="Number of distinct words, ignoring case.")
    characters: int = Field(description="Number of characters, including whitespace.")
    longest_word: str = Field(description="The first of the longest words, or an empty string for empty text.")


def build_server() -> MCPServer:
    """The demo server with all its tools registered; `main()` serves it, or `mcp.Client(build_server())` in-process."""
    server = MCPServer(
        "knime-mcp-demo",
        title="knime-mcp demo server",
        instructions="Demo tools for trying out knime-mcp: text, arithmetic, orders, units, charts and failures.",
        log_level="WARNING",
    )

    @server.tool(title="Echo", annotations=_READ_ONLY, structured_output=False)
    def echo(text: Annotated[str, Field(description="The text to return.")]) -> str:
        """Return the given text unchanged."""
        return text

    @server.tool(title="Add two integers", annotations=_READ_ONLY)
    def add(
        a: Annotated[int, Field(description="The first addend.")],
        b: Annotated[int, Field(description="The second addend.")],
    ) -> int:
        """Add two integers and return their sum."""
        return a + b

    @server.tool(title="Create an order", annotations=_CREATES)
    def create_order(
        customer: Annotated[Customer, Field(description="Who places the order.")],
        items: Annotated[list[OrderItem], Field(min_length=1, description="The products and quantities to order.")],
        note: Annotated[str | None, Field(description="Optional delivery note.")] = None,
    ) -> Order:
        """Create an order for a customer from a list of items and return the order as structured data."""
        fingerprint = customer.model_dump_json() + "".join(item.model_dump_json() for item in items) + (note or "")
        return Order(
            order_id=f"ORD-{zlib.crc32(fingerprint.encode()):08X}",
            customer=customer,
            items=items,
            total_quantity=sum(item.quantity for item in items),
            note=note,
        )

    @server.tool(title="Convert a temperature", annotations=_READ_ONLY)
    def convert_temperature(
        value: Annotated[float, Field(description="The temperature to convert.")],
        from_unit: Annotated[TemperatureUnit, Field(description="The unit of `value`.")],
        to_unit: Annotated[TemperatureUnit, Field(description="The unit to convert to.")],
    ) -> float:
        """Convert a temperature between Celsius, Fahrenheit and Kelvin."""
        celsius = {"celsius": value, "fahrenheit": (value - 32) * 5 / 9, "kelvin": value - 273.15}[from_unit]
        result = {"celsius": celsius, "fahrenheit": celsius * 9 / 5 + 32, "kelvin": celsius + 273.15}[to_unit]
        return round(result, 6)

    @server.tool(title="Render a bar chart", annotations=_READ_ONLY)
    def render_chart(
        values: Annotated[
            list[Annotated[float, Field(ge=0)]],
            Field(min_length=1, max_length=64, description="Non-negative bar heights, one bar per value."),
        ],
    ) -> Image:
        """Render the values as a small PNG bar chart, scaled so that the largest value fills the height."""
        return Image(data=_bar_chart_png(values), format="png")

    @server.tool(title="Word statistics", annotations=_READ_ONLY)
    def word_stats(text: Annotated[str, Field(description="The text to analyse.")]) -> WordStats:
        """Count the words, distinct words and characters of a text and find its longest word."""
        words = text.split()
        return WordStats(
            words=len(words),
            unique_words=len({word.lower() for word in words}),
            characters=len(text),
            longest_word=max(words, key=len, default=""),
        )

    @server.tool(title="Always fail", annotations=_READ_ONLY)
    def fail(message: Annotated[str, Field(description="The error message to return.")]) -> str:
        """Always fail with the given message, to show how a tool error reaches the caller."""
        raise ToolError(message)

    @server.tool(title="Sleep", annotations=_READ_ONLY)
    async def sleep(
        seconds: Annotated[float, Field(ge=0, le=3600, description="How long to wait, in seconds.")],
    ) -> str:
        """Wait for the given number of seconds without blocking other calls, then say so."""
        await anyio.sleep(seconds)
        return f"Slept {seconds:g} s."

    @server.tool(title="Delete a record", annotations=_DESTRUCTIVE)
    def delete_record(record_id: Annotated[str, Field(min_length=1, description="The record to delete.")]) -> str:
        """Delete a record by id. The demo keeps no records, so nothing is lost; the annotation is what matters."""
        return f"Record {record_id} deleted."

    @server.resource("demo://chart/{+values}", title="Bar chart", mime_type="image/png")  # + lets commas in
    def chart(values: str) -> bytes:
        """A bar chart of the comma-separated non-negative bar heights, as a PNG image."""
        return _bar_chart_png([float(value) for value in values.split(",")])

    @server.prompt(title="Review a bar chart")
    def review_chart(
        values: Annotated[str, Field(description="Comma-separated non-negative bar heights, e.g. '3,1,2'.")],
    ) -> list[UserMessage]:
        """Ask for a review of a bar chart of the values, with the chart as an image."""
        heights = [float(value) for value in values.split(",")]
        return [
            UserMessage(f"Review this bar chart of {len(heights)} values: is anything unusual?"),
            UserMessage(Image(data=_bar_chart_png(heights), format="png")),
        ]

    return server


_CHART_HEIGHT = 48
_BAR_WIDTH = 6
_BAR_GAP = 2
_BACKGROUND_RGB = b"\xff\xff\xff"
_BAR_RGB = b"\xff\xd8\x00"


def _bar_chart_png(values: Sequence[float]) -> bytes:
    """An RGB bar chart; white background, one yellow bar per value."""
    top = max(values) or 1.0
    heights = [round(value / top * _CHART_HEIGHT) for value in values]
    width = _BAR_GAP + len(values) * (_BAR_WIDTH + _BAR_GAP)
    rows = []
    for level in range(_CHART_HEIGHT, 0, -1):
        row = bytearray(_BACKGROUND_RGB * width)
        for index, height in enumerate(heights):
            if height >= level:
                x = _BAR_GAP + index * (_BAR_WIDTH + _BAR_GAP)
                row[3 * x : 3 * (x + _BAR_WIDTH)] = _BAR_RGB * _BAR_WIDTH
        rows.append(bytes(row))
    return _encode_png(width, _CHART_HEIGHT, rows)


def _encode_png(width: int, height: int, rgb_rows: Sequence[bytes]) -> bytes:
    """A minimal PNG (8-bit RGB, no filtering), so the demo needs no imaging library."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"".join(b"\x00" + row for row in rgb_rows))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def main(argv: list[str] | None = None) -> int:
    """Run the demo server until its input closes (stdio) or it receives SIGTERM or SIGINT."""
    args = _parse_args(argv)
    server = build_server()
    if args.transport == "stdio":
        _handle_stop_signals(_exit_now)
        anyio.run(server.run_stdio_async)
    elif args.transport == "streamable-http":
        serve_http(server.streamable_http_app(host=HOST), "/mcp", port=args.port)
    else:
        serve_http(server.sse_app(host=HOST), "/sse", port=args.port)
    return 0


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m knime_mcp.demo_server",
        description="Run the knime-mcp demo MCP server. HTTP transports listen on 127.0.0.1 only.",
    )
    parser.add_argument("--transport", choices=["stdio", "sse", "streamable-http"], default="stdio")
    parser.add_argument(
        "--port", type=int, default=0, help="TCP port for the HTTP transports; 0 (the default) picks a free one."
    )
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error(f"--port must be between 0 and 65535, not {args.port}")
    return args


def serve_http(app: ASGIApp, path: str, *, port: int = 0, name: str = "knime-mcp demo server") -> None:
    """Serve an ASGI app on 127.0.0.1 until SIGTERM or SIGINT, after printing `<name> listening on <url>` to stdout.

    uvicorn's own graceful-exit handler takes the signals from the start, so a signal that arrives before uvicorn
    is up still ends the process cleanly. The test suite's variant servers start through this too.
    """
    serve_http_at(lambda url: app, path, port=port, name=name)


def serve_http_at(
    app_for: Callable[[str], ASGIApp], path: str, *, port: int = 0, name: str = "knime-mcp demo server"
) -> None:
    """:func:`serve_http` for an app that must know its own URL (e.g. to name itself in OAuth metadata): the socket
    is bound first, so ``app_for`` gets the URL with the real port even for `port=0`."""
    import uvicorn

    with listening_socket(port) as sock:
        url = f"http://{HOST}:{sock.getsockname()[1]}{path}"
        config = uvicorn.Config(
            _one_response(app_for(url)),
            log_level="warning",
            lifespan="on",
            timeout_graceful_shutdown=_GRACEFUL_SHUTDOWN_SECONDS,
        )
        server = uvicorn.Server(config)
        _handle_stop_signals(server.handle_exit)
        print(f"{name} listening on {url}", flush=True)
        server.run(sockets=[sock])


def _one_response(app: ASGIApp) -> ASGIApp:
    """Let the app send one complete response per request.

    The SDK's SSE endpoint (`MCPServer.sse_app`) sends an empty `Response()` after its event stream ends. When uvicorn
    stops an open stream at shutdown, the stream lacks its final chunk, so that second response would be logged as an
    ASGI error and the client would read a truncated body. Here the second response becomes the missing end instead.
    """

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        started = complete = False

        async def send_one_response(message: Message) -> None:
            nonlocal started, complete
            if complete:
                return
            if message["type"] == "http.response.start":
                if started:
                    message = {"type": "http.response.body", "body": b"", "more_body": False}
                started = True
            complete = message["type"] == "http.response.body" and not message.get("more_body", False)
            await send(message)

        await app(scope, receive, send_one_response)

    return guarded


def listening_socket(port: int = 0) -> socket.socket:
    """A TCP listener on 127.0.0.1, created with its protocol number; the test suite's plain servers use it too.

    asyncio sets TCP_NODELAY only on connections whose socket says IPPROTO_TCP; without it, Nagle's algorithm holds
    back each small SSE reply for about 40 ms. Whoever accepts connections by hand must set TCP_NODELAY on them.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((HOST, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def _handle_stop_signals(handler: Callable[[int, FrameType | None], None]) -> None:
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, handler)


def _exit_now(signum: int, frame: FrameType | None) -> None:
    """stdio: the SDK reads stdin in a worker thread that no signal interrupts, and the server holds nothing that
    needs closing, so end the process at once instead of waiting for the parent to close stdin."""
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    raise SystemExit(main())
