"""The MCP Resource Reader's behaviour: list a server's resources and templates, and read contents, many at once.

Layer: above :class:`~knime_mcp.mcp.client.McpClient` (one session, its concurrency limit); below the KNIME node and
Python users, who hand in what to read (every listed resource, a column of URIs, or a template filled from each row
of a table) and take Arrow: the listing as one table, the contents in batches handed to a sink, so contents of any
size never sit in memory at once. No KNIME import: an image is PNG bytes in a binary column
(:mod:`knime_mcp.tools.images` converts it, as for the Tool Caller), which the node writes as PNG image cells; other
binary contents are base64 text.

A read that fails as asked (an unknown URI, a template argument missing from the row, binary contents over the size
limit, a timeout) is an error of its row in ``column`` mode, and the run goes on; in ``fail`` mode it ends the run.
A server that cannot be reached ends the run either way.

    summary = read_resources_sync(spec, contents.append, options=ReaderOptions(mode="listed"))
    summary.listing                # the resources and templates, as an Arrow table
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Literal, get_args

import anyio

from knime_mcp.calls.rows import InputBatches, OnError, check_on_error
from knime_mcp.columns import ROW_ID_COLUMN, ColumnKind, arrow_type, row_label
from knime_mcp.config import CredentialLookup, ServerSpec
from knime_mcp.errors import ConfigError, ResourceError, ToolError
from knime_mcp.mcp.client import McpClient
from knime_mcp.mcp.resources import MCPResource, MCPResourceTemplate, ResourceContent, fill_template
from knime_mcp.mcp.session import server_client
from knime_mcp.mcp.sync import ProgressCallback, run_sync
from knime_mcp.tools.images import ImageError, to_png
from knime_mcp.tools.results import ImagePart

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "CONTENT_COLUMNS",
    "DEFAULT_MAX_BYTES",
    "LISTING_COLUMNS",
    "ReadMode",
    "ReadSummary",
    "ReaderOptions",
    "listing_table",
    "read_resources",
    "read_resources_sync",
]


ReadMode = Literal["none", "listed", "column", "template"]
"""What to read: nothing (list only), every listed resource, the URIs in a column, or a template filled per row."""

LISTING_COLUMNS: tuple[tuple[str, ColumnKind], ...] = (
    ("Kind", "string"),
    ("URI", "string"),
    ("Name", "string"),
    ("Title", "string"),
    ("Description", "string"),
    ("MIME type", "string"),
    ("Size", "long"),
    ("Annotations", "string"),
)
"""One row per resource (kind ``resource``, its URI) and per template (kind ``template``, its URI template); the size
in bytes where the server states it, the annotations (audience, priority, last modified) as JSON text."""

CONTENT_COLUMNS: tuple[tuple[str, ColumnKind], ...] = (
    ("Source", "string"),
    ("URI", "string"),
    ("MIME type", "string"),
    ("Text", "string"),
    ("Image", "image"),
    ("Data (base64)", "string"),
    ("Size", "long"),
    ("Error", "string"),
)
"""One row per content item a read returned (a read may return several), or one row for a failed read: the URI read
(for a template whose filling failed, the template), the item's own URI, its MIME type, its text, an image as PNG,
any other binary contents as base64, the size in bytes (text as UTF-8), and the read's error."""

DEFAULT_MAX_BYTES = 10_000_000
"""Binary contents larger than this (decoded) fail their read instead of filling memory and the table."""

DEFAULT_CONCURRENCY = 4
_BATCH_ROWS = 64
"""Reads run concurrently a batch of this many at a time, and every contents batch but the last has this many rows
(KNIME's batch tables require equal sizes, while a read may give several rows)."""


@dataclass(frozen=True, kw_only=True)
class ReaderOptions:
    """What the Resource Reader reads and how: one value for the node, the CLI and Python users.

    ReaderOptions(mode="template", template="demo://resource/dynamic/text/{resourceId}", on_error="column")
    """

    mode: ReadMode = "none"
    uri_column: str | None = None
    """``column`` mode: the input column that holds the URIs."""
    template: str = ""
    """``template`` mode: the URI template whose variables same-named input columns fill; empty: the server's only
    template."""
    max_bytes: int | None = DEFAULT_MAX_BYTES
    """Binary contents larger than this fail their read; None: no limit but the transport's."""
    concurrency: int = DEFAULT_CONCURRENCY
    """Reads in flight at once, all over the one session."""
    on_error: OnError = "column"
    """``column``: a failed read is an error row and the run goes on. ``fail``: the first failed read ends the run."""

    def __post_init__(self) -> None:
        if self.mode not in get_args(ReadMode):
            raise ConfigError(f"Unknown read mode {self.mode!r}; use one of {', '.join(get_args(ReadMode))}.")
        if self.mode == "column" and not self.uri_column:
            raise ConfigError("Choose the input column that holds the URIs to read.")
        if self.concurrency < 1:
            raise ConfigError(f"Concurrency must be at least 1, not {self.concurrency}.")
        if self.max_bytes is not None and self.max_bytes < 1:
            raise ConfigError("The size limit must be at least 1 byte.")
        check_on_error(self.on_error)

    @property
    def reads_rows(self) -> bool:
        """Whether the reads come from the rows of an input table."""
        return self.mode in ("column", "template")


@dataclass(frozen=True)
class ReadSummary:
    """What a run did: the listing (an Arrow table of :data:`LISTING_COLUMNS`), reads made, reads that failed."""

    listing: pa.Table
    reads: int
    errors: int


@dataclass(frozen=True)
class _Read:
    """One read to make: the URI, or why there is none (a template that could not be filled, a missing URI)."""

    label: str
    """The row in the input table, for a fail-fast error; empty for a listed resource (its error names the URI)."""
    source: str
    uri: str | None = None
    problem: ResourceError | None = None


def listing_table(resources: Sequence[MCPResource], templates: Sequence[MCPResourceTemplate]) -> pa.Table:
    """The resources, then the templates, as an Arrow table of :data:`LISTING_COLUMNS`."""
    import pyarrow as pa

    rows = [
        ("resource", r.uri, r.name, r.title, r.description, r.mime_type, r.size, _annotations(r)) for r in resources
    ] + [
        ("template", t.uri_template, t.name, t.title, t.description, t.mime_type, None, _annotations(t))
        for t in templates
    ]
    return pa.Table.from_batches([_batch(LISTING_COLUMNS, rows)])


def _annotations(row: MCPResource | MCPResourceTemplate) -> str | None:
    annotations = row.to_dict()["annotations"]
    return None if annotations is None else json.dumps(annotations, ensure_ascii=False)


def _batch(columns: Sequence[tuple[str, ColumnKind]], rows: Sequence[Sequence[Any]]) -> pa.RecordBatch:
    import pyarrow as pa

    arrays = [pa.array([row[i] for row in rows], arrow_type(kind)) for i, (_, kind) in enumerate(columns)]
    return pa.RecordBatch.from_arrays(arrays, names=[name for name, _ in columns])


def _listed_reads(resources: Sequence[MCPResource]) -> Iterator[list[_Read]]:
    reads = [_Read("", r.uri, r.uri) for r in resources]
    for start in range(0, len(reads), _BATCH_ROWS):
        yield reads[start : start + _BATCH_ROWS]


def _row_reads(batch: pa.RecordBatch | pa.Table, first_row: int, options: ReaderOptions, template: str) -> list[_Read]:
    """The reads of an input batch: a URI per row, or the template filled from the row's same-named columns (a
    missing value leaves its variable out, which the filling reports)."""
    reads = []
    for index, row in enumerate(batch.to_pylist()):
        label = row_label(first_row + index + 1, row)
        if options.mode == "column":
            uri = row.get(options.uri_column or "")
            problem = None if uri else ResourceError(f"The row has no URI in column {options.uri_column!r}.")
            reads.append(_Read(label, uri or "", uri or None, problem))
            continue
        values = {name: str(value) for name, value in row.items() if value is not None and name != ROW_ID_COLUMN}
        try:
            uri = fill_template(template, values)
            reads.append(_Read(label, uri, uri))
        except ResourceError as exc:
            reads.append(_Read(label, template, problem=exc))
    return reads


def _pick_template(templates: Sequence[MCPResourceTemplate], template: str) -> str:
    if template.strip():
        return template.strip()
    if len(templates) == 1:
        return templates[0].uri_template
    listed = ", ".join(repr(t.uri_template) for t in templates) or "none"
    raise ConfigError("Enter the URI template to fill.", hint=f"The server's templates: {listed}.")


class _Outcome:
    """The output rows of one read: one per content item, or one error row."""

    def __init__(self, read: _Read) -> None:
        self.read = read
        self.rows: list[tuple[Any, ...]] = []
        self.error: ToolError | None = read.problem

    def fail(self, error: ToolError) -> None:
        self.error = error
        self.rows = [(self.read.source, self.read.uri, None, None, None, None, None, str(error))]

    def add(self, contents: Sequence[ResourceContent]) -> None:
        """Text as it is, an image as PNG, other binary contents as base64; image data that cannot be read keeps its
        base64 and fails the read, with the reason."""
        for item in contents:
            text, png, data, problem = item.text, None, None, None
            if item.data is not None:
                data = base64.b64encode(item.data).decode("ascii")
                if (item.mime_type or "").startswith("image/"):
                    try:
                        png, data = to_png(ImagePart(data, item.mime_type or "image/png")), None
                    except ImageError as exc:
                        problem = f"The image at {item.uri!r} cannot be shown: {exc}."
                        self.error = self.error or ResourceError(problem)
            size = len(item.data) if item.data is not None else len((text or "").encode())
            self.rows.append((self.read.source, item.uri, item.mime_type, text, png, data, size, problem))


class _Reader:
    """The reads of one run over one client, batch by batch."""

    def __init__(
        self,
        client: McpClient,
        options: ReaderOptions,
        sink: Callable[[pa.RecordBatch], Awaitable[None]],
        progress: ProgressCallback | None,
        total: int | None,
    ) -> None:
        self.client, self.options, self.sink, self.progress, self.total = client, options, sink, progress, total
        self.reads = self.errors = 0
        self.pending: list[tuple[Any, ...]] = []
        """Output rows not yet written: fewer than a batch, after each read batch."""
        self.written = False

    async def flush(self, *, last: bool = False) -> None:
        """Write every full batch of the pending rows, and with ``last`` the rest (an empty batch if nothing was
        written at all, so the table still gets its columns)."""
        while len(self.pending) >= _BATCH_ROWS or (last and (self.pending or not self.written)):
            rows, self.pending = self.pending[:_BATCH_ROWS], self.pending[_BATCH_ROWS:]
            await self.sink(_batch(CONTENT_COLUMNS, rows))
            self.written = True

    async def read_batch(self, reads: Sequence[_Read]) -> None:
        outcomes = [_Outcome(read) for read in reads]
        limiter = anyio.CapacityLimiter(self.options.concurrency)
        async with anyio.create_task_group() as tasks:
            for outcome in outcomes:
                if outcome.error is None:
                    tasks.start_soon(self._read, outcome, limiter)
                else:
                    outcome.fail(outcome.error)
        failed = [(outcome.read, outcome.error) for outcome in outcomes if outcome.error is not None]
        if failed and self.options.on_error == "fail":
            read, error = failed[0]
            if not read.label:
                raise error
            raise type(error)(f"{read.label}: {error.message}", server=error.server, hint=error.hint) from error
        self.pending += [row for outcome in outcomes for row in outcome.rows]
        await self.flush()
        self.reads += len(reads)
        self.errors += len(failed)
        if self.progress is not None:
            fraction = min(self.reads / self.total, 1.0) if self.total else 0.0
            done = f"{self.reads:,} of {self.total:,}" if self.total else f"{self.reads:,}"
            self.progress(fraction, f"{done} resources read")

    async def _read(self, outcome: _Outcome, limiter: anyio.CapacityLimiter) -> None:
        async with limiter:
            try:
                contents = await self.client.read_resource(outcome.read.uri or "", max_bytes=self.options.max_bytes)
            except ToolError as exc:  # the read failed as asked; a lost server (ServerConnectError) ends the run
                outcome.fail(exc)
                return
        if any(item.data is not None and (item.mime_type or "").startswith("image/") for item in contents):
            # Decoding an image (and converting it to PNG) would hold up the other reads' I/O meanwhile.
            await anyio.to_thread.run_sync(outcome.add, contents)
        else:
            outcome.add(contents)


async def read_resources(
    spec: ServerSpec,
    sink: Callable[[pa.RecordBatch], Awaitable[None]],
    *,
    batches: Iterable[Any] = (),
    options: ReaderOptions | None = None,
    credentials: CredentialLookup | None = None,
    total_rows: int | None = None,
    progress: ProgressCallback | None = None,
    untrusted_hint: str | None = None,
    show_sign_in: Callable[[str], None] | None = None,
) -> ReadSummary:
    """List the resources and templates of the server (every page), then read what ``options.mode`` says, awaiting
    ``sink`` with each batch of :data:`CONTENT_COLUMNS`, in order, every batch but the last of equal size.
    ``batches``: the input rows (Arrow batches or tables, the RowID column first if any) for the ``column`` and
    ``template`` modes; they are read in a worker thread, as KNIME's table I/O blocks. A run that reads nothing hands
    ``sink`` one empty batch."""
    options = options or ReaderOptions()
    async with server_client(
        spec,
        credentials=credentials,
        untrusted_hint=untrusted_hint,
        show_sign_in=show_sign_in,
        max_concurrency=options.concurrency,
        progress=progress,
    ) as client:
        resources = await client.list_resources()
        templates = await client.list_resource_templates()
        listing = listing_table(resources, templates)
        total = len(resources) if options.mode == "listed" else total_rows
        reader = _Reader(client, options, sink, progress, total)
        async with aclosing(_reads(options, resources, templates, batches)) as batches_of_reads:
            async for reads in batches_of_reads:
                await reader.read_batch(reads)
        await reader.flush(last=True)
    return ReadSummary(listing, reader.reads, reader.errors)


async def _reads(
    options: ReaderOptions,
    resources: Sequence[MCPResource],
    templates: Sequence[MCPResourceTemplate],
    batches: Iterable[Any],
) -> AsyncIterator[list[_Read]]:
    """The reads to make, a batch at a time."""
    if options.mode == "listed":
        for reads in _listed_reads(resources):
            yield reads
    if not options.reads_rows:
        return
    template = _pick_template(templates, options.template) if options.mode == "template" else ""
    first_row = 0
    async for batch in InputBatches(batches, threaded=True):
        for start in range(0, batch.num_rows, _BATCH_ROWS):
            yield _row_reads(batch.slice(start, _BATCH_ROWS), first_row + start, options, template)
        first_row += batch.num_rows


def read_resources_sync(
    spec: ServerSpec,
    sink: Callable[[pa.RecordBatch], None],
    *,
    cancelled: Callable[[], bool] | None = None,
    progress: ProgressCallback | None = None,
    **kwargs: Any,
) -> ReadSummary:
    """Blocking :func:`read_resources` for the KNIME node and plain scripts: ``sink`` runs in a worker thread, one
    batch at a time and in order; ``cancelled`` is polled, and once true the reads in flight are cancelled and
    :class:`~knime_mcp.mcp.sync.CancelledByUser` is raised."""
    write = partial(anyio.to_thread.run_sync, sink)
    return run_sync(read_resources, spec, write, cancelled=cancelled, progress=progress, **kwargs)
