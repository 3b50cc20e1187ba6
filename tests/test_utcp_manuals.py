"""UTCP manuals as HTTP tools, through the Python API (`list_http_tools`) and the dispatcher, against real providers on
127.0.0.1: one built with the UTCP project's own `@utcp_tool` decorator (tests/servers/utcp_provider_server.py) and
hand-written manuals with a catcher on 127.0.0.2 (tests/servers/utcp_manual_server.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from fixtures.utcp_servers import caught
from knime_mcp.calls.dispatch import CallOutcome, Dispatcher
from knime_mcp.calls.listing import ToolListing, list_http_tools
from knime_mcp.calls.pool import ClientPool
from knime_mcp.config import AuthRef
from knime_mcp.errors import MASK, ConfigError
from knime_mcp.http.document import UtcpManual, parse_document
from knime_mcp.http.openapi import DocumentApiKey
from knime_mcp.mcp.sync import run_sync
from knime_mcp.seal import is_sealed_here
from knime_mcp.tools.tool import MCPTool

KEY_VARIABLE = "KNIME_MCP_TEST_UTCP_KEY"


@pytest.fixture()
def api_key(auth_token: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The provider's key, in the environment variable the person's authentication names."""
    monkeypatch.setenv(KEY_VARIABLE, auth_token)
    return auth_token


def _listing(source: str | None, **options: Any) -> ToolListing:
    return run_sync(list_http_tools, source, **options)


def _call(tool: MCPTool, arguments: dict[str, Any]) -> CallOutcome:
    async def go() -> CallOutcome:
        async with ClientPool(check_unsealed=True) as pool:
            return await Dispatcher(pool).call(tool, arguments)

    return run_sync(go)


def _named(listing: ToolListing) -> dict[str, MCPTool]:
    return {tool.name: tool for tool in listing.tools}


def _manual(base: str, path: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"{base}{path}", timeout=5) as response:
        return json.load(response)


_HEADER_KEY = DocumentApiKey(kind="header", secret=f"${{{KEY_VARIABLE}}}")


# -- a provider built with utcp's own library -------------------------------------------------------------------


def test_the_decorator_built_providers_tools_are_listed_sealed_with_the_key_header_the_manual_names(
    utcp_provider_url: str, api_key: str
) -> None:
    listing = _listing(f"{utcp_provider_url}/utcp", auth=_HEADER_KEY)
    tools = _named(listing)
    assert set(tools) == {"weather", "shout"}
    weather = tools["weather"]
    assert weather.kind_label == "HTTP" and weather.server.target == utcp_provider_url
    assert weather.server.auth.header == "X-Api-Key" and weather.server.auth.secret == f"${{{KEY_VARIABLE}}}"
    assert weather.server.display_name == f"UTCP manual {utcp_provider_url}/utcp"
    assert all(is_sealed_here(tool.server) for tool in listing.tools)
    assert weather.http is not None and weather.http.path == "/api/weather/{city}"
    assert weather.input_schema["required"] == ["city"]
    assert "null" not in json.dumps(weather.input_schema)  # the decorator writes every unused keyword as null
    assert weather.annotations.read_only and listing.notes == []


def test_a_tool_of_the_decorator_built_provider_is_called_with_the_persons_key(
    utcp_provider_url: str, api_key: str
) -> None:
    weather = _named(_listing(f"{utcp_provider_url}/utcp", auth=_HEADER_KEY))["weather"]
    outcome = _call(weather, {"city": "Konstanz", "units": "F"})
    assert outcome.ok and outcome.result is not None
    assert outcome.result.structured == {"city": "Konstanz", "units": "F", "temperature": 70}


def test_without_the_persons_key_a_note_says_so_the_manuals_variable_stays_unfilled_and_the_call_is_refused(
    utcp_provider_url: str, monkeypatch: pytest.MonkeyPatch, auth_token: str
) -> None:
    # The manual asks for $API_KEY: UTCP's own client would read it from the environment; knime-mcp never does.
    monkeypatch.setenv("API_KEY", auth_token)
    listing = _listing(f"{utcp_provider_url}/utcp")
    (note,) = listing.notes
    assert note.startswith("The UTCP manual asks a credential of every tool (api_key), but no authentication is set")
    shout = _named(listing)["shout"]
    outcome = _call(shout, {"text": "hi"})
    assert outcome.result is not None and outcome.result.is_error and "401" in outcome.record.error


def test_a_base_url_alone_finds_the_manual_at_utcp(utcp_provider_url: str, api_key: str) -> None:
    listing = _listing(None, base_url=utcp_provider_url, auth=_HEADER_KEY)
    assert set(_named(listing)) == {"weather", "shout"}
    assert all(is_sealed_here(tool.server) for tool in listing.tools)


# -- a hand-written manual: header fields, the body field, static headers, an API key in the query -------------------


def test_header_fields_static_headers_and_the_query_key_reach_the_api(utcp_manual_url: str, api_key: str) -> None:
    key = DocumentApiKey(kind="query", secret=f"${{{KEY_VARIABLE}}}")
    lookup = _named(_listing(f"{utcp_manual_url}/utcp", auth=key))["lookup"]
    assert lookup.server.auth.parameter == "key"  # the manual's var_name for its query key
    outcome = _call(lookup, {"item_id": "a/b", "trace": "t-1", "verbose": True})
    seen = outcome.result.structured if outcome.result else None
    assert outcome.ok and seen is not None
    assert seen["path"] == "/items/a/b"  # sent as a%2Fb, one segment
    assert seen["query"] == {"verbose": "true", "key": MASK}  # the key arrived; its echo is masked in the result
    assert seen["headers"]["trace"] == "t-1" and seen["headers"]["x-static"] == "kept"


def test_the_body_field_is_the_json_body_and_the_header_key_goes_where_the_manual_names_it(
    utcp_manual_url: str, api_key: str
) -> None:
    create = _named(_listing(f"{utcp_manual_url}/utcp", auth=_HEADER_KEY))["create"]
    assert create.annotations.destructive  # a POST
    outcome = _call(create, {"item": {"name": "lamp"}})
    seen = outcome.result.structured if outcome.result else None
    assert seen is not None and seen["method"] == "POST" and seen["body"] == {"name": "lamp"}
    assert seen["headers"]["x-key"] == MASK and seen["query"] == {}


def test_a_manual_file_with_a_base_url_gets_the_credential_and_is_sealed(
    utcp_manual_url: str, tmp_path: Path, api_key: str
) -> None:
    path = tmp_path / "manual.json"
    path.write_text(json.dumps(_manual(utcp_manual_url, "/utcp")), encoding="utf-8")
    bearer = AuthRef(kind="bearer", secret=f"${{{KEY_VARIABLE}}}")
    listing = _listing(str(path), base_url=utcp_manual_url, auth=bearer)
    assert set(_named(listing)) == {"lookup", "create"}
    assert all(is_sealed_here(tool.server) and tool.server.auth.kind == "bearer" for tool in listing.tools)
    outcome = _call(_named(listing)["lookup"], {"item_id": "7"})
    assert outcome.result is not None and outcome.result.structured["headers"]["authorization"] == f"Bearer {MASK}"


def test_a_manual_file_without_a_base_url_gives_no_credential(utcp_manual_url: str, tmp_path: Path) -> None:
    path = tmp_path / "manual.json"
    path.write_text(json.dumps(_manual(utcp_manual_url, "/utcp")), encoding="utf-8")
    with pytest.raises(ConfigError, match="The UTCP manual, read from a file, sends its requests to"):
        _listing(str(path), auth=AuthRef(kind="bearer", secret=f"${{{KEY_VARIABLE}}}"))


# -- what is left out, and the hostile manual ----------------------------------------------------------------------


def test_one_tool_of_another_type_leaves_the_others_with_a_note_naming_it_and_what_to_do(utcp_manual_url: str) -> None:
    listing = _listing(f"{utcp_manual_url}/mixed/utcp")
    assert set(_named(listing)) == {"lookup"}
    notes = "\n".join(listing.notes)
    assert "'run_script'" in notes and "'cli'" in notes and "never runs here" in notes
    assert "'ask_other'" in notes and "add the server in the MCP Tool Provider" in notes
    assert "'query_graph'" in notes and "'graphql'" in notes
    assert "'broken'" in notes and "url: Field required" in notes


def test_a_manual_naming_another_origin_for_the_credential_never_gives_it_there(
    utcp_manual_url: str, api_key: str
) -> None:
    listing = _listing(f"{utcp_manual_url}/hostile/utcp", auth=AuthRef(kind="bearer", secret=f"${{{KEY_VARIABLE}}}"))
    assert set(_named(listing)) == {"own_tool"}
    notes = "\n".join(listing.notes)
    assert "Left out GET /catch" in notes and "127.0.0.2" in notes and "a credential goes only" in notes
    assert "'steal_in_url'" in notes and "holds the variable $API_KEY" in notes
    assert "'steal_in_header'" in notes and "${API_KEY}" in notes
    assert "'oauth_tool'" in notes and "OAuth2" in notes and "nothing is sent there" in notes
    assert api_key not in notes
    assert caught(utcp_manual_url) == []  # the token URL and the other origin were never contacted


def test_without_a_credential_the_other_origins_tool_is_data_and_refused_at_a_local_address(
    utcp_manual_url: str, monkeypatch: pytest.MonkeyPatch, auth_token: str
) -> None:
    monkeypatch.setenv("hostile_API_KEY", auth_token)  # where UTCP's client would look for it
    listing = _listing(f"{utcp_manual_url}/hostile/utcp")
    steal = _named(listing)["steal_by_auth"]
    assert not is_sealed_here(steal.server) and steal.server.auth.kind == "none"
    assert any("count as data" in note for note in listing.notes)
    outcome = _call(steal, {})
    assert not outcome.ok and "127.0.0.2" in str(outcome.error)
    assert caught(utcp_manual_url) == []


def test_a_manual_from_data_is_read_only_from_a_public_address(utcp_manual_url: str) -> None:
    with pytest.raises(ConfigError, match="flow variable"):
        _listing(f"{utcp_manual_url}/utcp", untrusted_hint="It came from the flow variable 'manual'.")


def test_a_manual_over_the_largest_document_is_a_clean_error(utcp_manual_url: str) -> None:
    with pytest.raises(ConfigError, match="larger than .* MB, the most knime-mcp reads") as raised:
        _listing(f"{utcp_manual_url}/utcp", max_document_bytes=200)
    assert "--max-document-mb" in (raised.value.hint or "")


# -- reading the format -------------------------------------------------------------------------------------------


def _one_tool(template: dict[str, Any], **tool: Any) -> str:
    inputs = {"type": "object", "properties": {"q": {"type": "string"}}}
    return json.dumps(
        {"utcp_version": "1.2.0", "tools": [{"name": "t", "inputs": inputs, "tool_call_template": template, **tool}]}
    )


def test_a_manual_is_told_from_an_openapi_document_by_its_content() -> None:
    manual = parse_document(_one_tool({"call_template_type": "http", "url": "https://x.example.com/q"}), "'m.json'")
    assert isinstance(manual, UtcpManual) and manual.source == "'m.json'"
    with pytest.raises(ConfigError, match="neither an OpenAPI document .* nor a UTCP manual"):
        parse_document('{"tools": []}', "'m.json'")


@pytest.mark.parametrize(
    ("template", "said"),
    [
        ({"url": "https://x.example.com/q", "auth": {"auth_type": "api_key", "api_key": "k", "location": "cookie"}},
         "in a cookie"),
        ({"url": "https://x.example.com/q", "http_method": "POST", "content_type": "text/plain", "body_field": "q"},
         "sends its body as text/plain"),
        ({"url": "https://{region}.example.com/q"}, "placeholder outside its path"),
        ({"url": "ftp://x.example.com/q"}, "is not an http(s) URL"),
        ({"url": "/q"}, "is relative and the manual was read from a file"),
        ({"url": "https://x.example.com/q", "headers": {"Authorization": "Bearer sk-live-abcdefghijklmnopqrstuv"}},
         "secret"),
    ],
)  # fmt: skip
def test_a_tool_knime_mcp_cannot_call_as_the_manual_says_is_refused_naming_why(
    template: dict[str, Any], said: str, tmp_path: Path
) -> None:
    path = tmp_path / "manual.json"
    path.write_text(_one_tool({"call_template_type": "http", **template}), encoding="utf-8")
    with pytest.raises(ConfigError, match="None of the 1 tools of the UTCP manual") as raised:
        _listing(str(path))
    assert said in raised.value.message and "sk-live" not in raised.value.message


def test_reading_a_manual_leaves_the_root_logger_and_stdout_as_they_were(tmp_path: Path) -> None:
    # In a fresh process: utcp's import calls logging.basicConfig(INFO) and its plugin loader logs and prints.
    path = tmp_path / "manual.json"
    path.write_text(_one_tool({"call_template_type": "http", "url": "https://x.example.com/q"}), encoding="utf-8")
    code = (
        "import logging, sys\n"
        "from knime_mcp.calls.listing import list_http_tools\n"
        "from knime_mcp.mcp.sync import run_sync\n"
        "logging.getLogger().setLevel(logging.ERROR)\n"
        f"listing = run_sync(list_http_tools, {str(path)!r})\n"
        "root = logging.getLogger()\n"
        "print('RESULT', [t.name for t in listing.tools], root.handlers, logging.getLevelName(root.level))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "RESULT ['t'] [] ERROR"
    assert "INFO" not in done.stderr and "Registered" not in done.stderr


def test_a_key_name_left_to_a_manual_without_one_there_says_to_enter_it(tmp_path: Path) -> None:
    key = {"auth_type": "api_key", "api_key": "$K", "var_name": "key", "location": "query"}
    path = tmp_path / "manual.json"
    path.write_text(_one_tool({"call_template_type": "http", "url": "https://x.example.com/q", "auth": key}), "utf-8")
    with pytest.raises(
        ConfigError, match=r"no tool with an API key in the header.*only 'key' \(in the query\)"
    ) as raised:
        _listing(str(path), base_url="https://x.example.com", auth=DocumentApiKey(kind="header", secret="${K}"))
    assert raised.value.hint == "Enter the header name yourself."
