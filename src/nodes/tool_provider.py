"""MCP Tool Provider: a source node that lists an MCP server's tools as a table."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

import knime.extension as knext

from nodes import CATEGORY
from nodes.knime_io.connection import check_servers, pasted_connection, server_connection
from nodes.knime_io.errors import knime_errors
from nodes.knime_io.team_seal import team_seal
from nodes.knime_io.tools_table import output_schema, tools_output
from nodes.knime_io.warnings import add_warning
from nodes.parameters.auth import AuthSettings
from nodes.parameters.catalog import CatalogOptions, CatalogSettings
from nodes.parameters.selection import SelectionSettings, selection_options
from nodes.parameters.server import ServerSettings, pasted_config_parameter
from nodes.parameters.team_seal import team_seal_key_parameter
from nodes.parameters.timeouts import TimeoutSettings

if TYPE_CHECKING:
    from knime_mcp.calls.listing import ServerFailure
    from knime_mcp.config import ServerSpec

LOGGER = logging.getLogger(__name__)


def failed_servers_warning(failed: Sequence[ServerFailure]) -> str:
    """The warning naming the servers of a pasted configuration that were left out, each with its reason."""
    said = " | ".join(str(failure) for failure in failed)
    return f"{len(failed)} server(s) left out (turn on 'Fail if any server fails' to fail instead): {said}"


@knext.node("MCP Tool Provider", knext.NodeType.SOURCE, "icons/provider.png", category=CATEGORY, id="MCPToolProvider")
@knext.output_table("Tools", "One row per tool of the server, with its MCP Tool value for agent and caller nodes.")
class MCPToolProvider:
    """Lists the tools of an MCP server as a table.

    Connects to a Model Context Protocol server over Streamable HTTP, SSE or stdio, lists all of its tools
    (following pagination) and outputs one row per tool. Connect the table to the **Agent Prompter** to offer
    the tools to a model, or to the **MCP Tool Caller** to call a tool for every row of a table.

    To try the nodes without a server of your own, enter `demo` as the *Server*: the demo MCP server bundled with
    this extension then starts over stdio with the extension's own Python (no installation, no network). Its tools
    show text (`echo`), numbers (`add`), structured results (`create_order`, `word_stats`), an enum
    (`convert_temperature`), a chart image (`render_chart`, for the Tool Caller's *Image* column), an error
    (`fail`), a slow reply (`sleep`) and a destructive tool (`delete_record`).

    The *MCP Tool* column holds each tool as JSON (a pure-Python extension cannot add a column type), including
    how to reach its server again and a seal that tells agent and caller nodes on this machine that a person chose
    that server; it never holds a secret. The seal also covers the tool's names, annotations and task support, so a
    tool edited there counts as data. A server address set by a flow variable counts as data: it may only be a public
    http(s) URL, is sent no credential, header or environment secret, and its tools are not sealed (agent and caller
    nodes check it again), unless you trust the flow variable (advanced setting). Tools left out and parameters
    dropped by the schema mode are listed in the *Notes* column and in the node's warning.

    *Destructive tools* judges tools by their MCP annotations, with the specification's defaults for a tool that has
    annotations (a tool not annotated read-only counts as destructive unless it says otherwise). Tools whose server
    sent no annotations (most FastMCP and mcp 1.x servers) are kept when destructive tools are left out, and named
    in the warning; *Treat unannotated tools as destructive* leaves them out too. A tool that can only run as an MCP
    task (execution.taskSupport "required") runs as one: the Agent Prompter and the Tool Caller poll it and show its
    status as progress.

    **OAuth.** For a server that asks for OAuth, choose *OAuth sign-in*: on the first execution the node opens the
    system browser to sign in, and its progress message ("Waiting for sign-in in the browser") and the KNIME log show
    the address, for when no browser opens; cancel stops the wait. The tokens are kept for each user in
    ~/.knime-mcp/oauth (never in the workflow) and refreshed, so later executions, and the Agent Prompter and Tool
    Caller downstream, need no sign-in. *Sign in again* forgets them first. *OAuth client credentials* gets a token
    without a person, for KNIME Hub executors and batch runs, with a client id and secret from a KNIME credential.

    **KNIME Tool column.** In a KNIME whose Python API has KNIME's unified Tool type (knime.types.tool.Tool, not in
    a release yet), a *KNIME Tool* column follows, holding each tool as KNIME's own MCP tool value (server URL, the
    server's name for the tool, description, parameter schema and, for a bearer token, the credential's name), so
    the table can be concatenated with KNIME workflow tools and fed to KNIME's own agent nodes. A tool that value
    cannot describe (a stdio server, OAuth, other authentication, extra headers, SSE, a task-only tool) gets a
    missing cell and is named in the warning. Without the type, the column is not there.

    **Tool ID, Kind and Tags.** *Tool ID* is the same for the same tool of the same server in every run and on every
    machine (a hash of the server's address and its own name for the tool); *Kind* is MCP (HTTP for the HTTP Tool
    Provider's tools); *Tags* lists the server's key in a pasted configuration (else the name prefix), the tags the
    configuration gives it ("tags": [...]), the *Tags* setting's, and read-only or destructive from the annotations.
    The agent nodes' *Only tools tagged* and the Tool Caller's *Tool tags* select tools by them.

    **App.** A tool whose server gives it an MCP App (an interactive view of its results) has the app's ui:// URI
    in *App* (missing otherwise), and its MCP Tool cell keeps it, so the Agent Chat shows the app under the tool's
    calls. A tool only its app may call is listed too (its cell says so); the agent nodes never offer it to the
    model.

    **Roots.** *Folders the server may see (stdio)* lists the folders a stdio server is told it may work in when it
    asks (MCP roots); they travel with the tools table, so the Tool Caller and Agent Prompter offer the same ones.
    Without folders, the server is offered none.

    **Server from the catalog.** Instead of typing a server, choose a *Preset* (a curated server shipped with the
    extension, pinned to a version) or a server of the *MCP Registry* by its name and version (kept, so the workflow
    runs the same server later). Its pinned package (npx, uvx or docker) or remote URL becomes the server; the inputs
    it declares come from *Environment (stdio)* and *Extra HTTP headers* lines (a secret as ${VARIABLE} or
    ${input:CREDENTIAL}), and a missing one is named. A registry entry is read when the node executes.

    **Several servers.** The servers of a pasted configuration are listed at once, so the node takes about as long
    as the slowest. A server that cannot be reached, fails to sign in, times out or lists nothing usable is left out,
    and the node's warning names it with the reason; the node fails only when every server fails, or at the first
    failure with *Fail if any server fails* (advanced).
    """

    pasted_config = pasted_config_parameter(
        "Every server in it is listed into the one table, each tool name prefixed by the server's key."
    )
    team_seal_key = team_seal_key_parameter()  # before the groups, as KNIME's node description lists it
    fail_on_server_failure = knext.BoolParameter(
        "Fail if any server fails",
        "With several servers (a pasted configuration): fail when any of them cannot be reached, fails to sign in, "
        "times out or lists nothing usable. Off: such a server is left out and the node's warning names it with the "
        "reason; the node fails only when every server fails.",
        False,
        since_version="0.5.0",
        is_advanced=True,
    )
    catalog = CatalogSettings()
    server = ServerSettings()
    auth = AuthSettings()
    timeouts = TimeoutSettings()
    selection = SelectionSettings()

    def configure(self, ctx: knext.ConfigurationContext) -> knext.Schema:
        with knime_errors():
            check_servers(ctx, self.pasted_config, None, self.server, self.auth, self.timeouts, self.catalog)
        return output_schema()

    def execute(self, ctx: knext.ExecutionContext) -> knext.Table:
        from knime_mcp.calls.listing import list_servers_tools
        from knime_mcp.config.pasted import pasted_tags
        from knime_mcp.mcp.sync import run_sync

        with knime_errors(), team_seal(ctx, self.team_seal_key):
            servers: dict[str | None, ServerSpec]
            if self.pasted_config.strip() and self.catalog.source == CatalogOptions.NONE.name:
                servers, connection = pasted_connection(
                    ctx, self.pasted_config, self.server, self.auth, self.timeouts, LOGGER
                )
            else:
                spec, connection = server_connection(ctx, self.server, self.auth, self.timeouts, LOGGER, self.catalog)
                servers = {None: spec}
            server_tags = pasted_tags(self.pasted_config) if self.pasted_config.strip() else None
            listing = run_sync(
                list_servers_tools, servers, strict=self.fail_on_server_failure, server_tags=server_tags,
                **selection_options(self.selection), **connection,
            )  # fmt: skip
            if listing.failed:
                add_warning(ctx, failed_servers_warning(listing.failed))
            return tools_output(ctx, listing.tools, listing.notes)  # sealed as the table is written
