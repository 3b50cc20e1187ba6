"""The Resource Reader's core: listing and reading resources of the npm server-everything, without KNIME."""

from __future__ import annotations

import pyarrow as pa
import pytest

from knime_mcp import ServerSpec
from knime_mcp.catalog.resource_reader import CONTENT_COLUMNS, LISTING_COLUMNS, ReaderOptions, read_resources_sync
from knime_mcp.errors import ConfigError, ResourceError

TEXT_TEMPLATE = "demo://resource/dynamic/text/{resourceId}"


def _read(spec: ServerSpec, **options: object) -> tuple[pa.Table, pa.Table, int]:
    """The listing, every contents batch as one table, and the number of batches."""
    batches: list[pa.RecordBatch] = []
    summary = read_resources_sync(spec, batches.append, options=ReaderOptions(**options))  # type: ignore[arg-type]
    return summary.listing, pa.Table.from_batches(batches), len(batches)


def test_the_listing_holds_every_resource_and_both_templates_with_their_kind(everything_spec: ServerSpec) -> None:
    listing, contents, batches = _read(everything_spec)
    rows = listing.to_pylist()
    assert listing.column_names == [name for name, _ in LISTING_COLUMNS]
    assert [row["Kind"] for row in rows] == ["resource"] * 7 + ["template"] * 2
    assert TEXT_TEMPLATE in {row["URI"] for row in rows if row["Kind"] == "template"}
    assert contents.num_rows == 0 and batches == 1 and contents.column_names == [name for name, _ in CONTENT_COLUMNS]


def test_reading_every_listed_resource_gives_its_text_in_listing_order(everything_http_url: str) -> None:
    listing, contents, _ = _read(ServerSpec(target=everything_http_url), mode="listed", concurrency=3)
    listed = [row["URI"] for row in listing.to_pylist() if row["Kind"] == "resource"]
    assert contents.column("Source").to_pylist() == listed
    assert all(contents.column("Text").to_pylist()) and not any(contents.column("Error").to_pylist())


def test_template_rows_are_read_and_a_missing_argument_or_unknown_uri_is_its_rows_error(
    everything_http_url: str,
) -> None:
    # Given rows for the text template, one without the argument, one out of the server's range
    rows = pa.table({"<RowID>": ["a", "b", "c", "d"], "resourceId": ["1", None, "0", "2"]})
    batches: list[pa.RecordBatch] = []
    options = ReaderOptions(mode="template", template=TEXT_TEMPLATE)
    # When they are read
    summary = read_resources_sync(
        ServerSpec(target=everything_http_url), batches.append, batches=[rows], options=options
    )
    out = pa.Table.from_batches(batches).to_pylist()
    # Then every row is there, in order, the bad ones with their error
    assert [row["Source"] for row in out] == [
        "demo://resource/dynamic/text/1",
        TEXT_TEMPLATE,
        "demo://resource/dynamic/text/0",
        "demo://resource/dynamic/text/2",
    ]
    assert out[0]["Text"].startswith("Resource 1:") and out[0]["Error"] is None
    assert "needs the argument 'resourceId'" in out[1]["Error"]
    assert "has no resource at 'demo://resource/dynamic/text/0'" in out[2]["Error"]
    assert out[3]["Text"].startswith("Resource 2:") and (summary.reads, summary.errors) == (4, 2)


def test_binary_contents_become_base64_and_over_the_limit_an_error(everything_http_url: str) -> None:
    rows = pa.table({"uri": ["demo://resource/dynamic/blob/1", "demo://resource/dynamic/blob/2"]})
    small: list[pa.RecordBatch] = []
    read_resources_sync(
        ServerSpec(target=everything_http_url),
        small.append,
        batches=[rows],
        options=ReaderOptions(mode="column", uri_column="uri", max_bytes=10),
    )
    errors = pa.Table.from_batches(small)["Error"].to_pylist()
    assert len(errors) == 2 and all("more than the limit of 10 bytes" in error for error in errors)
    big: list[pa.RecordBatch] = []
    read_resources_sync(
        ServerSpec(target=everything_http_url),
        big.append,
        batches=[rows],
        options=ReaderOptions(mode="column", uri_column="uri"),
    )
    (first, _) = pa.Table.from_batches(big).to_pylist()
    import base64

    assert base64.b64decode(first["Data (base64)"]).startswith(b"Resource 1:") and first["Size"] > 10
    assert first["Text"] is None and first["Image"] is None


def test_fail_mode_stops_at_the_first_failed_row_naming_it(everything_http_url: str) -> None:
    rows = pa.table({"uri": ["demo://resource/dynamic/text/1", "demo://no/such/thing"]})
    with pytest.raises(ResourceError, match=r"^Row 2: The server has no resource at 'demo://no/such/thing'"):
        read_resources_sync(
            ServerSpec(target=everything_http_url),
            lambda batch: None,
            batches=[rows],
            options=ReaderOptions(mode="column", uri_column="uri", on_error="fail"),
        )


def test_many_rows_are_written_in_equal_batches_in_row_order(everything_http_url: str) -> None:
    ids = [str(1 + n % 100) for n in range(150)]
    batches: list[pa.RecordBatch] = []
    summary = read_resources_sync(
        ServerSpec(target=everything_http_url),
        batches.append,
        batches=[pa.table({"resourceId": ids[:100]}), pa.table({"resourceId": ids[100:]})],
        options=ReaderOptions(mode="template", template=TEXT_TEMPLATE, concurrency=8),
        total_rows=150,
    )
    uris = pa.Table.from_batches(batches)["URI"].to_pylist()
    assert uris == [f"demo://resource/dynamic/text/{n}" for n in ids] and summary.errors == 0
    # And every batch but the last has the same size, as KNIME's batch tables require
    assert [batch.num_rows for batch in batches] == [64, 64, 22]


def test_settings_that_cannot_work_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="column that holds the URIs"):
        ReaderOptions(mode="column")
    with pytest.raises(ConfigError, match="Concurrency"):
        ReaderOptions(concurrency=0)
