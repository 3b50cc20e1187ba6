"""The MCP Registry client, the presets and an entry as a server setup, against the stand-in registry
(`registry_url`: real entries recorded from the registry's repository, `tests/fixtures/registry/NOTE.md`)."""

from __future__ import annotations

import dataclasses
import json
import socket
from pathlib import Path

import anyio
import pytest

from knime_mcp.errors import ConfigError
from knime_mcp.net.http_pool import HttpPool
from knime_mcp.registry.catalog import check_remote, find_server, resolve_server, search_servers
from knime_mcp.registry.client import RegistryClient
from knime_mcp.registry.entries import read_entry
from knime_mcp.registry.presets import preset, presets
from knime_mcp.registry.setup import server_setup

AIRTABLE = "io.github.domdomegg/airtable-mcp-server"


def _find(name: str, version: str | None, registry: str) -> object:
    return anyio.run(lambda: find_server(name, version, registry_url=registry))


def test_a_search_lists_the_matching_presets_first_then_every_registry_page(registry_url: str) -> None:
    found = anyio.run(lambda: search_servers("time", registry_url=registry_url))
    assert found.registry_error is None
    assert [entry.name for entry in found.entries] == [
        "time", "io.github.domdomegg/time-mcp-nuget", "io.github.domdomegg/time-mcp-pypi"
    ]  # fmt: skip
    everything = anyio.run(lambda: search_servers("io.", registry_url=registry_url))
    listed = [entry for entry in everything.entries if not entry.is_preset]
    assert len(listed) > 3  # the stand-in serves 3 a page: the cursor was followed
    assert [entry.label for entry in listed if entry.name == AIRTABLE] == [f"{AIRTABLE}@1.7.3"]  # latest only
    assert all(entry.source == registry_url for entry in listed)


def test_a_search_stops_at_its_limit(registry_url: str) -> None:
    async def search() -> list[str]:
        async with HttpPool() as pool:
            return [entry.name for entry in await RegistryClient(pool, registry_url).search("", limit=4)]

    assert len(anyio.run(search)) == 4


def test_a_server_is_found_at_the_version_asked_for_or_its_latest(registry_url: str) -> None:
    assert _find(AIRTABLE, "1.7.2", registry_url).version == "1.7.2"
    assert _find(AIRTABLE, None, registry_url).version == "1.7.3"
    with pytest.raises(ConfigError, match="has no server .* at version 9.9.9"):
        _find(AIRTABLE, "9.9.9", registry_url)


def test_an_older_registry_that_serves_only_v0_is_read_there(older_registry_url: str) -> None:
    found = anyio.run(lambda: search_servers("airtable", registry_url=older_registry_url))
    assert found.registry_error is None and [entry.label for entry in found.entries] == [f"{AIRTABLE}@1.7.3"]
    assert _find(AIRTABLE, "1.7.2", older_registry_url).version == "1.7.2"


def test_an_unreachable_registry_is_named_and_the_presets_are_still_offered() -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}"
    found = anyio.run(lambda: search_servers("memory", registry_url=url))
    assert [entry.name for entry in found.entries] == ["memory"]
    assert found.registry_error and "127.0.0.1" in found.registry_error


def test_an_answer_of_10_mb_is_given_up_on_and_the_presets_are_still_offered(registry_url: str) -> None:
    found = anyio.run(lambda: search_servers("huge-answer", registry_url=registry_url))
    assert found.entries == () and "larger than 4 MB" in (found.registry_error or "")


def test_an_npm_entry_runs_pinned_through_npx_with_its_secret_as_a_reference(registry_url: str) -> None:
    setup = server_setup(_find(AIRTABLE, "1.7.2", registry_url))
    assert setup.config == {
        "command": "npx",
        "args": ["-y", "airtable-mcp-server@1.7.2"],
        "env": {"AIRTABLE_API_KEY": "${AIRTABLE_API_KEY}"},
    }
    (needed,) = setup.inputs
    assert (needed.name, needed.kind, needed.required, needed.secret) == (
        "AIRTABLE_API_KEY", "environment variable", True, True
    )  # fmt: skip
    assert setup.missing == ("AIRTABLE_API_KEY",) and setup.spec().target == "npx -y airtable-mcp-server@1.7.2"


def test_an_oci_entry_runs_through_docker_passing_its_environment(registry_url: str) -> None:
    entry = _find(AIRTABLE, "1.7.3", registry_url)
    setup = server_setup(dataclasses.replace(entry, packages=entry.packages[1:2]))
    assert setup.config["command"] == "docker"
    assert setup.config["args"] == [
        "run", "-i", "--rm", "-e", "AIRTABLE_API_KEY", "docker.io/domdomegg/airtable-mcp-server:1.7.3"
    ]  # fmt: skip


def test_a_pypi_entry_runs_pinned_through_uvx_with_its_defaults(registry_url: str) -> None:
    setup = server_setup(_find("io.github.example/weather-mcp", "0.5.0", registry_url), {"WEATHER_UNITS": "kelvin"})
    assert setup.config == {
        "command": "uvx",
        "args": ["weather-mcp-server==0.5.0"],
        "env": {"WEATHER_API_KEY": "${WEATHER_API_KEY}", "WEATHER_UNITS": "kelvin"},
    }
    assert [item.name for item in setup.inputs] == ["WEATHER_API_KEY", "WEATHER_UNITS"]


def test_a_remote_entry_fills_its_url_variables_and_references_its_secret_header(registry_url: str) -> None:
    setup = server_setup(_find("io.github.user/remote-weather", None, registry_url))
    assert setup.config == {
        "type": "streamable-http",
        "url": "https://api.example.com/mcp",
        "headers": {"Authorization": "${AUTHORIZATION}"},
    }
    assert setup.way == "remote streamable-http https://api.example.com/mcp"
    assert server_setup(setup.entry, {"host": "weather.example.org"}).config["url"] == "https://weather.example.org/mcp"
    (remote,) = setup.entry.remotes
    no_default = {**remote, "variables": {"host": {"description": "API host", "isRequired": True}}}
    with pytest.raises(ConfigError, match="needs a value for 'host'"):
        server_setup(dataclasses.replace(setup.entry, remotes=(no_default,)))


def test_an_entry_that_offers_no_runnable_way_says_which_ways_it_offers(registry_url: str) -> None:
    with pytest.raises(ConfigError, match=r"offers no way this project runs \(nuget\)"):
        server_setup(_find("io.github.domdomegg/time-mcp-nuget", None, registry_url))


def test_a_required_argument_without_a_value_is_named(registry_url: str) -> None:
    with pytest.raises(ConfigError, match="needs a value for 'allowed_directory'"):
        server_setup(preset("filesystem"))
    setup = server_setup(preset("filesystem"), {"allowed_directory": "/data"})
    assert setup.config["args"] == ["-y", "@modelcontextprotocol/server-filesystem@2026.8.31", "/data"]


def test_a_secret_given_written_out_is_refused_and_a_reference_is_kept(registry_url: str) -> None:
    entry = _find(AIRTABLE, None, registry_url)
    with pytest.raises(ConfigError, match="'AIRTABLE_API_KEY' is a secret and was given written out"):
        server_setup(entry, {"AIRTABLE_API_KEY": "patABCDEF.0123456789"})
    assert server_setup(entry, {"AIRTABLE_API_KEY": "${MY_KEY}"}).config["env"] == {"AIRTABLE_API_KEY": "${MY_KEY}"}


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("io.github.hostile/shell", 'npm package name "evil; touch'),
        ("io.github.hostile/option", 'npm package name "--registry='),
        ("io.github.hostile/range", 'version ">=0 --index-url'),
    ],
)
def test_a_package_name_or_version_that_is_not_plain_is_never_made_a_command(
    registry_url: str, name: str, said: str
) -> None:
    with pytest.raises(ConfigError, match="which is not a plain") as refused:
        anyio.run(lambda: resolve_server(name, registry_url=registry_url))
    assert said in str(refused.value)


def test_a_header_the_registry_fills_with_a_literal_secret_is_replaced_by_a_reference(registry_url: str) -> None:
    setup = server_setup(_find("io.github.hostile/literal-secret", None, registry_url))
    assert setup.config["headers"] == {"Authorization": "${AUTHORIZATION}"}
    assert "sk-live" not in json.dumps(setup.to_dict())


def test_a_remote_at_a_private_address_is_refused_from_a_public_registry_only(registry_url: str) -> None:
    local = anyio.run(lambda: resolve_server("io.github.hostile/metadata", registry_url=registry_url))
    assert local.config["url"] == "http://169.254.169.254/latest/mcp"  # a registry on this machine: its own network
    public = dataclasses.replace(local, entry=dataclasses.replace(local.entry, source="https://93.184.216.34"))
    with pytest.raises(ConfigError, match="169.254.169.254, a link-local address"):
        anyio.run(lambda: check_remote(public))


def test_every_preset_is_pinned_and_sets_up_with_its_required_arguments() -> None:
    names = [entry.name for entry in presets()]
    assert len(names) == len(set(names)) and {"filesystem", "github", "everything", "map"} <= set(names)
    for entry in presets():
        setup = server_setup(entry, {"allowed_directory": "/data", "database_url": "postgresql://me@db/shop"})
        pinned = setup.config["args"][1 if setup.config["command"] == "npx" else 0]
        assert pinned.endswith((f"@{entry.version}", f"=={entry.version}")), entry.name


def test_an_entry_in_the_registrys_first_snake_case_format_sets_up_the_same() -> None:
    path = Path(__file__).parent / "fixtures" / "registry" / "first-format-2025-07.json"
    brave, filesystem = (read_entry(item, source="preset") for item in json.loads(path.read_text())["servers"])
    assert brave.version == "1.0.2"
    setup = server_setup(brave)
    assert setup.config == {
        "command": "npx",
        "args": ["-y", "@modelcontextprotocol/server-brave-search@1.0.2"],
        "env": {"BRAVE_API_KEY": "${BRAVE_API_KEY}"},
    }
    assert server_setup(filesystem, {"target_dir": "/data"}).config["args"][-1] == "/data"
