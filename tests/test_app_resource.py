"""Reading an MCP App's `ui://` resource and vetting what it may run with: against the published
`@modelcontextprotocol/server-basic-vanillajs` and `server-map` and tests/servers/app_server.py (honest and hostile
`_meta.ui`, an oversized app, a text that is no HTML), over stdio."""

from __future__ import annotations

import html
import shlex
import sys

import pytest

from fixtures.npm_servers import app_server_command
from fixtures.python_servers import SERVERS_DIR
from knime_mcp import McpClient, ResourceError, ServerSpec
from knime_mcp.mcp.app_resource import MAX_APP_BYTES, AppResource, app_policy, read_app_resource, vetted_csp

pytestmark = pytest.mark.anyio

APP_SERVER = ServerSpec(target=shlex.join([sys.executable, str(SERVERS_DIR / "app_server.py")]), name="charts")
NO_DOMAINS_POLICY = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; "
    "font-src data:; media-src data: blob:; connect-src 'none'; frame-src 'none'; base-uri 'none'; "
    "form-action 'none'; object-src 'none'"
)


async def _read(spec: ServerSpec, uri: str) -> AppResource:
    async with McpClient(spec) as client:
        return await read_app_resource(client, uri)


async def test_the_basic_vanillajs_app_reads_as_html_under_a_policy_that_reaches_nothing() -> None:
    spec = ServerSpec(target=shlex.join(app_server_command("basic-vanillajs")), name="basic")
    app = await _read(spec, "ui://get-time/mcp-app.html")
    assert app.uri == "ui://get-time/mcp-app.html" and app.server == "basic"
    assert "<html" in app.html.lower() and app.size == len(app.html.encode()) and 1_000 < app.size < MAX_APP_BYTES
    assert app.policy == NO_DOMAINS_POLICY
    assert app.permissions == {} and app.allow == "" and app.prefers_border is None
    meta = f'<meta http-equiv="Content-Security-Policy" content="{html.escape(NO_DOMAINS_POLICY)}">'
    assert app.document.lower().startswith("<!doctype html>" + meta.lower())
    assert app.document.replace(meta, "", 1) == app.html


async def test_the_map_app_keeps_its_declared_map_and_cdn_domains_in_the_policy() -> None:
    spec = ServerSpec(target=shlex.join(app_server_command("map")), name="map")
    app = await _read(spec, "ui://cesium-map/mcp-app.html")
    domains = ["https://*.openstreetmap.org", "https://cesium.com", "https://*.cesium.com"]
    assert app.csp == {"connectDomains": domains, "resourceDomains": domains, "frameDomains": [], "baseUriDomains": []}
    assert f"connect-src {' '.join(domains)};" in app.policy
    assert f"script-src 'unsafe-inline' {' '.join(domains)};" in app.policy


async def test_an_honest_app_gets_its_domains_permissions_and_border_as_declared() -> None:
    app = await _read(APP_SERVER, "ui://charts/chart.html")
    assert app.csp == {
        "connectDomains": ["https://api.example.com", "wss://live.example.com:8443"],
        "resourceDomains": ["https://*.cdn.example.com", "http://localhost:5173"],
        "frameDomains": [],
        "baseUriDomains": [],
    }
    assert app.policy == app_policy(app.csp)
    assert "connect-src https://api.example.com wss://live.example.com:8443;" in app.policy
    assert "img-src data: blob: https://*.cdn.example.com http://localhost:5173;" in app.policy
    assert app.permissions == {"geolocation": {}, "clipboardWrite": {}}
    assert app.allow == "geolocation; clipboard-write"
    assert app.prefers_border is True
    as_dict = app.to_dict()
    assert as_dict.keys() == {"uri", "server", "document", "csp", "permissions", "allow", "prefers_border", "size"}
    assert as_dict["document"] == app.document and as_dict["size"] == app.size


async def test_hostile_csp_entries_and_permissions_never_reach_the_policy() -> None:
    app = await _read(APP_SERVER, "ui://charts/hostile.html")
    assert app.csp == {
        "connectDomains": ["https://api.example.com"],
        "resourceDomains": [],
        "frameDomains": ["https://frames.example.com"],
        "baseUriDomains": [],
    }
    assert app.policy == NO_DOMAINS_POLICY.replace(
        "connect-src 'none'; frame-src 'none'",
        "connect-src https://api.example.com; frame-src https://frames.example.com",
    )
    assert app.permissions == {"camera": {}} and app.allow == "camera"
    assert app.prefers_border is None


def test_domain_vetting_keeps_plain_origins_only() -> None:
    kept = ["https://a.example", "https://*.b.example:443", "wss://c.example", "http://127.0.0.1:8080", "https://d/"]
    dropped = ["https://*", "https://*.com", "http://e.example", "ws://f.example", "https://g.example/x", "*", 7]
    vetted = vetted_csp({"connectDomains": kept + dropped, "frameDomains": "https://h.example"})
    assert vetted["connectDomains"] == [*kept[:4], "https://d"]
    assert vetted["frameDomains"] == [] and vetted["resourceDomains"] == [] and vetted["baseUriDomains"] == []
    assert vetted_csp(None) == vetted_csp("'unsafe-eval'") == {key: [] for key in vetted}


async def test_an_app_read_without_its_ui_settings_takes_them_from_its_resources_list_entry() -> None:
    app = await _read(APP_SERVER, "ui://charts/listed.html")
    assert app.prefers_border is False and app.policy == NO_DOMAINS_POLICY and "chart" in app.html


async def test_an_app_larger_than_the_limit_is_refused_with_its_size() -> None:
    with pytest.raises(ResourceError) as refused:
        await _read(APP_SERVER, "ui://charts/huge.html")
    assert refused.value.message.startswith("The server's app resource 'ui://charts/huge.html' is 5,000,001 bytes")
    assert "more than 5,000,000" in str(refused.value) and refused.value.server == "charts"
    assert refused.value.hint


async def test_a_resource_that_is_not_html_or_not_there_or_not_ui_is_refused_saying_so() -> None:
    async with McpClient(APP_SERVER) as client:
        with pytest.raises(ResourceError) as text:
            await read_app_resource(client, "ui://charts/notes.txt")
        with pytest.raises(ResourceError) as missing:
            await read_app_resource(client, "ui://charts/nothing.html")
        with pytest.raises(ResourceError) as web:
            await read_app_resource(client, "https://charts.example.com/chart.html")
    assert "is text/plain, not HTML" in text.value.message
    assert "has no resource at 'ui://charts/nothing.html'" in missing.value.message
    assert "not an app's resource" in web.value.message and "ui://" in web.value.message
