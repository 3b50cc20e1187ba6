"""The MCP Tool Provider's table keeps each tool's MCP App: the *App* column and the MCP Tool cell, against
tests/servers/app_server.py over stdio, run through execute as KNIME runs it."""

from __future__ import annotations

import shlex
import sys

import knime.extension as knext
import pandas as pd
import pytest

import node_host
from fixtures.python_servers import SERVERS_DIR
from knime_mcp.seal import is_sealed_here
from knime_mcp.tools.arrow import tools_from_frame
from node_contexts import ConfigureContext, ExecuteContext

pytestmark = pytest.mark.knime_node


def _provider(server: str):  # type: ignore[no-untyped-def]
    import extension

    node = extension.MCPToolProvider()
    node.server.server = server
    node.pasted_config = ""
    return node


def test_the_provider_table_has_each_tools_app_uri_and_its_cells_keep_the_app() -> None:
    node = _provider(shlex.join([sys.executable, str(SERVERS_DIR / "app_server.py")]))
    (schema,) = node_host.configure_node(node, ConfigureContext())
    assert schema["App"].ktype == knext.string()
    (table,) = node_host.execute_node(node, ExecuteContext())
    frame = table.to_pandas()
    apps = dict(zip(frame["Name"], frame["App"], strict=True))
    assert apps["show_chart"] == apps["refresh_chart"] == "ui://charts/chart.html"
    assert pd.isna(apps["plain"]) and pd.isna(apps["web_view"])  # missing cells
    tools = {tool.name: tool for tool in tools_from_frame(frame)}
    assert tools["refresh_chart"].app_only and not tools["show_chart"].app_only
    assert tools["show_chart"].app_uri == "ui://charts/chart.html" and is_sealed_here(tools["show_chart"].server)
