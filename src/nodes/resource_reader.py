"""MCP Resource Reader: a node that lists an MCP server's resources and templates, and reads their contents."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import knime.extension as knext

from nodes import CATEGORY
from nodes.knime_io.connection import check_servers, chosen_connection
from nodes.knime_io.errors import knime_errors
from nodes.knime_io.images import with_png_cells
from nodes.knime_io.tables import arrow_batches, knime_columns
from nodes.knime_io.warnings import add_warning
from nodes.parameters.auth import AuthSettings
from nodes.parameters.column_types import is_string_column
from nodes.parameters.server import (
    RowErrorOptions,
    ServerSettings,
    on_error,
    pasted_config_parameter,
    server_key_parameter,
)
from nodes.parameters.timeouts import TimeoutSettings

if TYPE_CHECKING:
    from knime_mcp.catalog.resource_reader import ReaderOptions
    from knime_mcp.columns import ColumnKind

LOGGER = logging.getLogger(__name__)


class ReadOptions(knext.EnumParameterOptions):
    NONE = ("List only", "Read no contents: the contents table stays empty.")
    LISTED = ("Every listed resource", "Read every resource the server lists (templates are listed, not filled).")
    COLUMN = ("URIs from a column", "Read the URI in the chosen column of the input table, one read per row.")
    TEMPLATE = (
        "Fill a template",
        "Fill the URI template with the values of the input table's columns named like its variables, one read per "
        "row.",
    )


_ROW_MODES = [ReadOptions.COLUMN.name, ReadOptions.TEMPLATE.name]


@knext.parameter_group(label="Contents")
class ContentSettings:
    read = knext.EnumParameter(
        "Read contents", "Which contents to read into the second output.", ReadOptions.NONE.name, ReadOptions
    )
    uri_column = knext.ColumnParameter(
        "URI column",
        "The input column that holds the URIs to read; none chosen: the first text column.",
        port_index=0,
        column_filter=is_string_column,
    ).rule(knext.OneOf(read, [ReadOptions.COLUMN.name]), knext.Effect.SHOW)
    template = knext.StringParameter(
        "URI template",
        "The resource template to fill, as the first output lists it (e.g. demo://resource/dynamic/text/{resourceId}); "
        "each of its variables takes the value of the input column of the same name. Empty: the server's only "
        "template.",
        "",
    ).rule(knext.OneOf(read, [ReadOptions.TEMPLATE.name]), knext.Effect.SHOW)
    max_bytes = knext.IntParameter(
        "Size limit (bytes)",
        "Binary contents larger than this (decoded; 10,000,000 bytes are 10 MB) fail their read, with the size in the "
        "'Error' column, instead of filling memory and the table.",
        10_000_000,
        min_value=1,
    )
    concurrency = knext.IntParameter(
        "Concurrency", "Reads in flight at once, all over one connection to the server.", 4, min_value=1, max_value=64
    )
    on_error = knext.EnumParameter(
        "Error handling",
        "What a failed read does (an unknown URI, a template variable without a value, contents over the size limit).",
        RowErrorOptions.COLUMN.name,
        RowErrorOptions,
    )


@knext.node(
    "MCP Resource Reader",
    knext.NodeType.SOURCE,
    "icons/resource_reader.png",
    category=CATEGORY,
    id="MCPResourceReader",
)
@knext.input_table(
    "URIs or template values",
    "Rows to read: a column of URIs, or columns named like the template's variables (only with those read modes).",
    optional=True,
)
@knext.output_table(
    "Resources",
    "One row per resource and per resource template of the server: kind (resource or template), URI or URI "
    "template, name, title, description, MIME type, size in bytes and annotations (JSON).",
)
@knext.output_table(
    "Contents",
    "One row per content item read, or per failed read: source URI, item URI, MIME type, text, image (a PNG image "
    "cell), other binary data (base64 text), size in bytes and error.",
)
class MCPResourceReader:
    """Lists the resources of an MCP server and reads their contents.

    Connects to a Model Context Protocol server as the **MCP Tool Provider** does (the same server, authentication
    and timeout settings, OAuth sign-in included, or a pasted configuration: of several servers in it, the *Server
    key* picks one) and lists its resources and resource templates, following pagination, in the first output:
    *Kind* (resource or template), *URI* (for a template, its URI template), *Name*, *Title*, *Description*, *MIME
    type*, *Size* (bytes, where the server states it) and *Annotations* (audience, priority, last modified, as
    JSON).

    With *Read contents* the node also reads contents into the second output: every listed resource, the URI in a
    column of the input table for each row, or a URI template filled from each row's columns named like its
    variables. A read may give several items; each is a row with *Source* (the URI read), *URI* (the item's), *MIME
    type*, *Text*, *Image* (a PNG image cell for image contents; JPEG, GIF, WebP and other formats are converted),
    *Data (base64)* (any other binary contents as base64 text, since KNIME's Python tables hold no raw binary
    column), *Size* (bytes) and *Error*. A read that fails (an unknown URI, a template
    variable the row has no value for, binary contents over the size limit) is one row with its error, and the node
    goes on, unless *Error handling* says to fail. Reads run several at a time over one connection, and contents are
    written batch by batch, in the order of the rows. Cancelling stops the reads in flight.
    """

    pasted_config = pasted_config_parameter("The node uses one server of it: the one the 'Server key' names.")
    server_key = server_key_parameter()
    server = ServerSettings()
    auth = AuthSettings()
    timeouts = TimeoutSettings()
    contents = ContentSettings()

    def configure(
        self, ctx: knext.ConfigurationContext, data: knext.Schema | None
    ) -> tuple[knext.Schema, knext.Schema]:
        from knime_mcp.catalog.resource_reader import CONTENT_COLUMNS, LISTING_COLUMNS

        with knime_errors():
            check_servers(ctx, self.pasted_config, self.server_key, self.server, self.auth, self.timeouts)
            self._options(data)
        return _schema(LISTING_COLUMNS), _schema(CONTENT_COLUMNS)

    def execute(
        self, ctx: knext.ExecutionContext, data: knext.Table | None
    ) -> tuple[knext.Table, knext.BatchOutputTable]:
        from knime_mcp.catalog.resource_reader import read_resources_sync

        output = knext.BatchOutputTable.create(row_ids="generate")
        with knime_errors():
            options = self._options(data.schema if data is not None else None)
            spec, connection = chosen_connection(
                ctx, self.pasted_config, self.server_key, self.server, self.auth, self.timeouts, LOGGER
            )
            summary = read_resources_sync(
                spec,
                lambda batch: output.append(with_png_cells(batch, ["Image"])),
                batches=arrow_batches(data) if data is not None and options.reads_rows else (),
                total_rows=data.num_rows if data is not None else None,
                options=options,
                **connection,
            )
        if summary.errors:
            add_warning(ctx, f"{summary.errors} of {summary.reads} reads failed; see the 'Error' column.")
        return knext.Table.from_pyarrow(summary.listing), output

    def _options(self, data: knext.Schema | None) -> ReaderOptions:
        """The core's options; a read mode that needs the input table, or a column it lacks, is a ConfigError."""
        from knime_mcp.catalog.resource_reader import ReaderOptions
        from knime_mcp.errors import ConfigError

        mode = self.contents.read
        column = self.contents.uri_column
        if mode in _ROW_MODES and data is None:
            raise ConfigError(
                f"'{ReadOptions[mode].label}' reads the rows of the input table.",
                hint="Connect a table to the node's input, or choose another 'Read contents'.",
            )
        if mode == ReadOptions.COLUMN.name and data is not None:
            texts = [c.name for c in data if is_string_column(c)]
            column = column or next(iter(texts), None)
            if column not in texts:
                raise ConfigError(
                    f"The input table has no text column {column!r}." if column else "The input has no text column.",
                    hint="Choose the column that holds the URIs.",
                )
        return ReaderOptions(
            mode=mode.lower(),  # type: ignore[arg-type]
            uri_column=column,
            template=self.contents.template,
            max_bytes=self.contents.max_bytes,
            concurrency=self.contents.concurrency,
            on_error=on_error(self.contents.on_error),
        )


def _schema(columns: tuple[tuple[str, ColumnKind], ...]) -> knext.Schema:
    return knext.Schema.from_columns(knime_columns(columns))
