"""Result batches: an input batch on its way through the Tool Caller, and the result columns appended to it.

Layer: under the engine (:mod:`knime_mcp.caller.table`), which schedules the calls; this module keeps one batch's
arguments and per-row results and turns them into Arrow. Row results come from the dispatcher's
:class:`CallOutcome`; a row whose arguments could not be built gets its :class:`ArgumentError` instead. The Arrow is
KNIME-free: the image column holds PNG bytes, which the KNIME node writes as PNG image cells.

    batch = PendingBatch(record_batch(frame), first_row=0, plan=plan)
    batch.finish(0, RowResult.from_outcome(outcome, partial(batch.label, 0)))
    batch.output(names)           # the input columns plus RESULT_COLUMNS
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import anyio

from knime_mcp.caller.arguments import ArgumentError, ArgumentPlan
from knime_mcp.calls.dispatch import CallOutcome
from knime_mcp.columns import ROW_ID_COLUMN, ColumnKind, row_label
from knime_mcp.errors import McpToolError, ToolCallError
from knime_mcp.tools.images import ImageError, to_png

if TYPE_CHECKING:
    import pyarrow as pa

    from knime_mcp.tools.results import ToolResult

__all__ = ["RESULT_COLUMNS", "PendingBatch", "RowResult", "record_batch", "result_columns"]

RESULT_COLUMNS: tuple[tuple[str, ColumnKind], ...] = (
    ("Result", "string"),
    ("Structured result", "string"),
    ("Image", "image"),
    ("Other content", "string"),
    ("Is error", "boolean"),
    ("Error", "string"),
    ("Duration (ms)", "double"),
)
"""The columns appended to every row: joined text content, structured content as JSON text, the first image as
PNG bytes (converted from other formats; Arrow type large_binary), every other content block as a JSON list
(embedded resources with their text or base64 blob, resource links, audio, further images), whether the row failed,
why, and how long the call took (retries included)."""

_FAIL_HINT = "Fix the row, or set the error handling to 'error column' to record failed rows and go on."
_IMAGE_HINT = (
    "The row's text and structured result are kept. Set the error handling to 'error column' to go on past such "
    "rows, or ask the server's maintainers for PNG, JPEG, GIF or WebP images."
)


def result_columns(input_columns: Sequence[str]) -> list[tuple[str, ColumnKind]]:
    """The result columns' names and kinds, renamed ``"Name (#1)"`` where an input column already has the name."""
    taken = set(input_columns)
    columns = []
    for name, kind in RESULT_COLUMNS:
        unique, number = name, 0
        while unique in taken:
            number += 1
            unique = f"{name} (#{number})"
        taken.add(unique)
        columns.append((unique, kind))
    return columns


class RowResult(NamedTuple):
    """One row's result columns, and the error that stops the run there in ``fail`` mode."""

    text: str | None
    structured: str | None
    image: bytes | None
    other: str | None
    is_error: bool
    error: str | None
    duration_ms: float | None
    failure: McpToolError | None

    @classmethod
    def from_outcome(cls, outcome: CallOutcome, label: Callable[[], str]) -> RowResult:
        """``label()`` names the row in error messages; only failed rows pay for it."""
        result, record = outcome.result, outcome.record
        if outcome.error is not None:
            # The dispatcher's hint for invalid arguments speaks to a model; a workflow builder fixes the row instead.
            hint = _FAIL_HINT if record.status == "invalid_arguments" else outcome.error.hint or _FAIL_HINT
            failure = _at_row(outcome.error, label(), hint)
            return cls(None, None, None, None, True, str(outcome.error), record.duration_ms, failure)
        assert result is not None, "an outcome without an error has a result"
        structured = None if result.structured is None else json.dumps(result.structured, ensure_ascii=False)
        image, image_error = _first_image(result, record.tool)
        other = _other_content(result)
        if result.is_error:
            message = f"{label()}: tool {record.tool!r} reported an error: {record.error}"
            failure = ToolCallError(message, server=record.server, hint=_FAIL_HINT)
            return cls(result.text, structured, image, other, True, record.error, record.duration_ms, failure)
        if image_error is not None:
            failure = ToolCallError(f"{label()}: {image_error}", server=record.server, hint=_IMAGE_HINT)
            return cls(result.text, structured, None, other, True, image_error, record.duration_ms, failure)
        return cls(result.text, structured, image, other, False, None, record.duration_ms, None)

    @classmethod
    def invalid(cls, error: ArgumentError, label: str) -> RowResult:
        """A row whose arguments could not be built: it is never sent."""
        failure = ToolCallError(f"{label}: {error}", hint=_FAIL_HINT)
        return cls(None, None, None, None, True, str(error), None, failure)


def _first_image(result: ToolResult, tool: str) -> tuple[bytes | None, str | None]:
    """The first image as PNG bytes, or why it cannot be stored (the row's error unless the tool reported one)."""
    if not result.images:
        return None, None
    try:
        return to_png(result.images[0]), None
    except ImageError as exc:
        return None, f"Tool {tool!r} returned an image that cannot be stored: {exc}."


def _other_content(result: ToolResult) -> str | None:
    """The content blocks Result and Image do not hold, as JSON (each block as the result's JSON form has it), so
    no kind of content vanishes: embedded resources (binary ones as base64), resource links, audio, further images."""
    from knime_mcp.tools.results import ImagePart, TextPart, part_to_dict

    first_image = next((p for p in result.content if isinstance(p, ImagePart)), None)
    other = [p for p in result.content if not isinstance(p, TextPart) and p is not first_image]
    if not other:
        return None
    return json.dumps([part_to_dict(p) for p in other], ensure_ascii=False)


def _at_row(error: McpToolError, label: str, hint: str) -> McpToolError:
    """The same error, of the same class with the same fields (so exit codes and handlers still apply), with the
    row leading its message. Built without ``__init__``, whose signature differs between the error classes."""
    labelled = type(error).__new__(type(error))
    labelled.__dict__.update(vars(error))
    labelled.message = f"{label}: {error.message}"
    labelled.args = (labelled.message,)
    labelled.hint = hint
    labelled.__cause__ = error
    return labelled


class PendingBatch:
    """One input batch on its way through: its arguments, and each row's result once its call is done."""

    def __init__(self, data: pa.RecordBatch, first_row: int, plan: ArgumentPlan) -> None:
        self.data = data
        self.first_row = first_row
        self.size = data.num_rows
        cells = {column: data.column(column).to_pylist() for column in plan.columns}
        self.arguments: list[dict[str, Any] | ArgumentError] = []
        for row in range(self.size):
            try:
                self.arguments.append(plan.build(cells, row))
            except ArgumentError as exc:
                self.arguments.append(exc)
        self.results: list[RowResult | None] = [None] * self.size
        self.unfinished = self.size
        self.watched = False
        """Whether the writer must hear of every finished row: set once the first failure lies in this batch."""
        self.changed = anyio.Event()

    def label(self, row: int) -> str:
        """How an error names the row: :func:`~knime_mcp.caller.arguments.row_label`, from this batch's RowID column."""
        names = self.data.schema.names
        row_id = {ROW_ID_COLUMN: self.data.column(ROW_ID_COLUMN)[row].as_py()} if ROW_ID_COLUMN in names else {}
        return row_label(self.first_row + row + 1, row_id)

    def finish(self, row: int, result: RowResult) -> None:
        self.results[row] = result
        self.unfinished -= 1
        if self.unfinished == 0 or self.watched:
            self.changed.set()

    def settled(self, stop: int | None) -> bool:
        """All rows done, or in ``fail`` mode all rows up to the first failure."""
        if self.unfinished == 0:
            return True
        if stop is None or not self.first_row <= stop < self.first_row + self.size:
            return False
        return all(result is not None for result in self.results[: stop - self.first_row + 1])

    def first_failure(self) -> McpToolError | None:
        return next((r.failure for r in self.results if r is not None and r.failure is not None), None)

    def output(self, names: Sequence[str]) -> pa.RecordBatch:
        import pyarrow as pa

        results: list[RowResult] = self.results  # type: ignore[assignment]  (settled: every row is done)
        arrays = [
            pa.array([r.text for r in results], pa.string()),
            pa.array([r.structured for r in results], pa.string()),
            pa.array([r.image for r in results], pa.large_binary()),
            pa.array([r.other for r in results], pa.string()),
            pa.array([r.is_error for r in results], pa.bool_()),
            pa.array([r.error for r in results], pa.string()),
            pa.array([r.duration_ms for r in results], pa.float64()),
        ]
        schema = self.data.schema
        for name, array in zip(names, arrays, strict=True):
            schema = schema.append(pa.field(name, array.type))
        return pa.RecordBatch.from_arrays([*self.data.columns, *arrays], schema=schema)


def record_batch(data: Any) -> pa.RecordBatch:
    """One RecordBatch per input batch, so output batches keep the input's sizes (KNIME requires equal sizes)."""
    import pyarrow as pa

    if isinstance(data, pa.RecordBatch):
        return data
    if isinstance(data, pa.Table):
        batches = data.combine_chunks().to_batches()
        return batches[0] if batches else pa.RecordBatch.from_pylist([], schema=data.schema)
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        return pa.RecordBatch.from_pandas(data, preserve_index=False)
    raise TypeError(f"Input batches must be pyarrow RecordBatches or Tables or pandas DataFrames, not {type(data)}")
