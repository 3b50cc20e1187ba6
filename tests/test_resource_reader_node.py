"""The MCP Resource Reader node, run through configure and execute as KNIME runs it (Given/When/Then), on both hosts,
against the npm server-everything and the bundled demo server."""

from __future__ import annotations

import shlex
from typing import Any

import knime.extension as knext
import pandas as pd
import pyarrow as pa
import pytest

import node_host
from knime_mcp import ServerSpec
from knime_mcp.errors import CancelledByUser, ResourceError
from node_contexts import ConfigureContext, ExecuteContext

pytestmark = pytest.mark.knime_node

LISTING = ["Kind", "URI", "Name", "Title", "Description", "MIME type", "Size", "Annotations"]
CONTENTS = ["Source", "URI", "MIME type", "Text", "Image", "Data (base64)", "Size", "Error"]
TEXT_TEMPLATE = "demo://resource/dynamic/text/{resourceId}"


def _reader(server: str, **settings: object) -> Any:
    from nodes.resource_reader import MCPResourceReader

    node = MCPResourceReader()
    node.server.server = server
    # KNIME's real API keeps parameter-group values on the class: what an earlier test chose must not carry over.
    defaults = {
        "contents__read": "NONE", "contents__uri_column": None, "contents__template": "",
        "contents__max_bytes": 10_000_000, "contents__concurrency": 4, "contents__on_error": "COLUMN",
    }  # fmt: skip
    return node_host.set_parameters(node, **{**defaults, **settings})


def test_configure_gives_both_specs_without_connecting() -> None:
    (listing, contents) = node_host.configure_node(_reader("http://nonexistent.invalid/mcp"), ConfigureContext(), None)
    assert listing.column_names == LISTING and contents.column_names == CONTENTS
    assert listing["Size"].ktype == knext.int64() and str(contents["Image"].ktype) == "PNG Image"


def test_reading_rows_without_an_input_table_is_an_invalid_setting() -> None:
    node = _reader("http://nonexistent.invalid/mcp", contents__read="TEMPLATE")
    with pytest.raises(knext.InvalidParametersError, match="reads the rows of the input table"):
        node_host.configure_node(node, ConfigureContext(), None)


def test_a_uri_column_the_input_lacks_is_an_invalid_setting() -> None:
    node = _reader("http://nonexistent.invalid/mcp", contents__read="COLUMN", contents__uri_column="gone")
    data = knext.Schema.from_columns([knext.Column(knext.string(), "uri")])
    with pytest.raises(knext.InvalidParametersError, match="no text column 'gone'"):
        node_host.configure_node(node, ConfigureContext(), data)


def test_every_listed_resource_is_read_over_every_transport(everything_spec: ServerSpec) -> None:
    # Given a reader that reads every listed resource of server-everything
    node = _reader(everything_spec.target, contents__read="LISTED")
    ctx = ExecuteContext()
    # When it executes
    listing, contents = node_host.execute_node(node, ctx, None)
    listed, read = listing.to_pandas(), contents.to_pandas()
    # Then the listing holds the 7 documents and both templates, and every document's text was read, in order
    assert list(listed.columns) == LISTING and list(listed["Kind"]) == ["resource"] * 7 + ["template"] * 2
    assert TEXT_TEMPLATE in set(listed["URI"])
    assert list(read.columns) == CONTENTS and list(read["Source"]) == list(listed["URI"][:7])
    assert read["Text"].map(bool).all() and read["Error"].isna().all()
    assert not ctx.warnings and ctx.progress[-1] == (1.0, "7 of 7 resources read")


def test_template_rows_read_with_each_failure_in_its_row(everything_http_url: str) -> None:
    # Given rows for the text template, one without a value and one for an id the server does not serve
    node = _reader(everything_http_url, contents__read="TEMPLATE", contents__template=TEXT_TEMPLATE)
    data = node_host.source_table(pd.DataFrame({"resourceId": ["1", None, "0"]}))
    ctx = ExecuteContext()
    # When the reader executes
    _, contents = node_host.execute_node(node, ctx, data)
    read = contents.to_pandas()
    # Then every row is there in order, the failed ones with their error, and the node warns
    assert read["Text"].iloc[0].startswith("Resource 1:") and pd.isna(read["Error"].iloc[0])
    assert "needs the argument 'resourceId'" in read["Error"].iloc[1]
    assert "has no resource at 'demo://resource/dynamic/text/0'" in read["Error"].iloc[2]
    assert ctx.warnings == ["2 of 3 reads failed; see the 'Error' column."]


def test_binary_contents_are_base64_text_and_over_the_limit_an_error(everything_http_url: str) -> None:
    node = _reader(everything_http_url, contents__read="COLUMN", contents__max_bytes=1000)
    uris = ["demo://resource/dynamic/blob/1", "demo://resource/static/document/features.md"]
    _, contents = node_host.execute_node(node, ExecuteContext(), node_host.source_table(pd.DataFrame({"uri": uris})))
    read = contents.to_pandas()
    assert read["Error"].isna().all() and read["Data (base64)"].iloc[0] and pd.isna(read["Text"].iloc[0])
    assert read["Size"].iloc[0] > 0 and read["Text"].iloc[1]
    small = _reader(everything_http_url, contents__read="COLUMN", contents__max_bytes=10)
    _, contents = node_host.execute_node(small, ExecuteContext(), node_host.source_table(pd.DataFrame({"uri": uris})))
    assert "more than the limit of 10 bytes" in contents.to_pandas()["Error"].iloc[0]


def test_an_image_resource_is_a_png_image_cell(demo_stdio_command: list[str]) -> None:
    import PIL.Image

    # Given the demo server's chart template and two rows of bar heights
    node = _reader(shlex.join(demo_stdio_command), contents__read="TEMPLATE")
    data = node_host.source_table(pd.DataFrame({"values": ["3,1,2", "1"]}))
    # When the reader executes (the template is the server's only one)
    _, contents = node_host.execute_node(node, ExecuteContext(), data)
    read = contents.to_pandas()
    # Then each chart is a PNG image cell, 3 bars and 1 bar wide
    assert str(contents.schema["Image"].ktype) == "PNG Image" and read["Data (base64)"].isna().all()
    assert all(isinstance(image, PIL.Image.Image) for image in read["Image"])
    assert [image.size for image in read["Image"]] == [(26, 48), (10, 48)]


def test_fail_mode_fails_the_node_at_the_first_failed_row(everything_http_url: str) -> None:
    node = _reader(everything_http_url, contents__read="COLUMN", contents__on_error="FAIL")
    data = node_host.source_table(pd.DataFrame({"uri": ["demo://no/such/thing"]}))
    with pytest.raises(ResourceError, match=r"^Row 1 \(RowID Row0\): The server has no resource"):
        node_host.execute_node(node, ExecuteContext(), data)


def test_an_input_without_rows_reads_nothing_and_gives_the_configured_columns(everything_http_url: str) -> None:
    node = _reader(everything_http_url, contents__read="COLUMN")
    data = node_host.source_table(pa.table({"uri": pa.array([], pa.string())}))
    (_, spec) = node_host.configure_node(node, ConfigureContext(), data.schema)
    _, contents = node_host.execute_node(node, ExecuteContext(), data)
    assert [(c.name, c.ktype) for c in contents.schema] == [(c.name, c.ktype) for c in spec]
    assert contents.to_pandas().empty


def test_cancel_stops_the_reads_after_the_batch_in_flight(everything_http_url: str) -> None:
    # Given 5,000 template rows, and a cancel as soon as the first batch of reads is written
    node = _reader(everything_http_url, contents__read="TEMPLATE", contents__template=TEXT_TEMPLATE)
    data = node_host.source_table(pd.DataFrame({"resourceId": [str(1 + n % 100) for n in range(5000)]}))
    ctx = ExecuteContext(cancel_when=lambda: any("resources read" in (text or "") for _, text in ctx.progress))
    # When the node executes, Then it is cancelled long before every row is read
    with pytest.raises((CancelledByUser, node_host.NodeCanceled)):
        node_host.execute_node(node, ctx, data)
    assert "5,000 of 5,000" not in " ".join(text or "" for _, text in ctx.progress)
