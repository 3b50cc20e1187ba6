"""Many servers, each failing alone: ``list_servers_tools`` lists real servers at once (the demo server, a Python SDK
server, server-everything), leaves out one that cannot be reached, signs in wrongly, times out or is no MCP server,
names it with its reason, and fails only when every server fails or ``strict`` asks; an agent run whose server dies
mid-run keeps the other servers' tools working."""

from __future__ import annotations

import shlex
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from langchain_core.messages import AIMessage
from pydantic import Field

from fixtures.processes import stop as stop_process
from fixtures.python_servers import DEMO_COMMAND, SERVERS_DIR, RunningServer, running_server
from knime_mcp.calls.listing import ServerFailure, ToolListing, list_servers_tools
from knime_mcp.config import AuthRef, ServerSpec, Timeouts
from knime_mcp.errors import ServerAuthError, ServerConnectError
from scripted_model import ScriptedChatModel, calls, run_scripted, tool_texts

GATHERING = SERVERS_DIR / "gathering_list_server.py"
WRONG_TOKEN = "wrong-token-canary-4b7e"


def closed_port_url() -> str:
    """An http URL on 127.0.0.1 where nothing listens: a port just bound and closed again."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/mcp"


def gathering(folder: Path, count: int, name: str, *wait: str) -> ServerSpec:
    """A stdio server whose tool list answers only once ``count`` servers sharing ``folder`` are listing at once
    (``wait``: ``--wait SECONDS`` for the others, instead of its generous default)."""
    command = [sys.executable, str(GATHERING), "--folder", str(folder), "--count", str(count), "--name", name, *wait]
    return ServerSpec(target=shlex.join(command), transport="stdio")


def listed(servers: dict[str | None, ServerSpec], **options: Any) -> ToolListing:
    async def listing() -> ToolListing:
        return await list_servers_tools(servers, credentials=lambda name: ("", WRONG_TOKEN), **options)

    return anyio.run(listing)


def keys_of(listing: ToolListing) -> list[str]:
    """The servers the listing's tools come from, in table order, each once."""
    return list(dict.fromkeys(tool.name.split("_", 1)[0] for tool in listing.tools))


@pytest.fixture
def healthy(demo_http_url: str, paged_server_url: str, everything_stdio_command: list[str]) -> dict[str, ServerSpec]:
    """Three real servers: the demo server (FastMCP, Streamable HTTP), a low-level Python SDK server (paged) and
    server-everything (TypeScript SDK, stdio)."""
    return {
        "demo": ServerSpec(target=demo_http_url),
        "paged": ServerSpec(target=paged_server_url),
        "everything": ServerSpec(target=shlex.join(everything_stdio_command), transport="stdio"),
    }


@pytest.fixture
def broken(auth_server_url: str, not_mcp_server_url: str, fake_hang_url: str) -> dict[str, ServerSpec]:
    """Servers that fail: nothing listening, a wrong bearer token, a web site that is no MCP server, and a listener
    that never answers (the fake, for a time-out no real server shows) with a short connect timeout."""
    return {
        "down": ServerSpec(target=closed_port_url()),
        "locked": ServerSpec(target=auth_server_url, auth=AuthRef(kind="bearer", credential="token")),
        "website": ServerSpec(target=not_mcp_server_url),
        "silent": ServerSpec(target=fake_hang_url, timeouts=Timeouts(connect=3.0)),
    }


def test_servers_are_listed_at_once_so_servers_that_each_wait_for_the_others_all_answer(tmp_path: Path) -> None:
    # Given four servers whose tool lists answer only once all four are being listed together (listed one after
    # another, the first would wait for the others in vain and fail)
    servers: dict[str | None, ServerSpec] = {name: gathering(tmp_path, 4, name) for name in ("a", "b", "c", "d")}
    # When they are listed
    listing = listed(servers)
    # Then every one answered, and the table keeps the servers' order
    assert not listing.failed and [tool.name for tool in listing.tools] == [
        "a_a_here",
        "b_b_here",
        "c_c_here",
        "d_d_here",
    ]


def test_at_most_the_given_number_of_servers_are_listed_at_once(tmp_path: Path) -> None:
    # Given three servers that each answer only once all three are being listed together, waiting 3 s for that (no
    # third can arrive while two are listed at once, so the wait is no race)
    servers: dict[str | None, ServerSpec] = {name: gathering(tmp_path, 3, name, "--wait", "3") for name in "abc"}
    # When at most two may be listed at once
    listing = listed(servers, servers_at_once=2)
    # Then the first two waited for a third in vain, and the third, listed after them, found them all
    assert [failure.key for failure in listing.failed] == ["a", "b"]
    assert all("only 2 of 3 listings arrived together" in failure.reason for failure in listing.failed)
    assert [tool.name for tool in listing.tools] == ["c_c_here"]


def test_failing_servers_are_left_out_named_with_their_reasons_and_the_others_listed_in_order(
    healthy: dict[str, ServerSpec], broken: dict[str, ServerSpec]
) -> None:
    # Given three real servers with four failing ones among them
    servers: dict[str | None, ServerSpec] = {
        "down": broken["down"], "demo": healthy["demo"], "locked": broken["locked"], "paged": healthy["paged"],
        "website": broken["website"], "everything": healthy["everything"], "silent": broken["silent"],
    }  # fmt: skip
    # When they are listed
    listing = listed(servers)
    # Then the healthy servers' tools are there, in the servers' order
    assert keys_of(listing) == ["demo", "paged", "everything"]
    assert "demo_echo" in {tool.name for tool in listing.tools} and len(listing.tools) > 25
    # And each failing server is named, in order, with the reason its own listing gives, which says what to do
    failed = {failure.key: failure for failure in listing.failed}
    assert list(failed) == ["down", "locked", "website", "silent"]
    assert failed["down"].reason.startswith("Could not connect") and "Hint:" in failed["down"].reason
    assert isinstance(failed["locked"].error, ServerAuthError) and "401" in failed["locked"].reason
    assert failed["website"].reason.startswith("The server answered HTTP 404: this URL does not speak MCP.")
    assert failed["silent"].reason.startswith("No MCP handshake within the connect timeout of 3 s.")
    # And no secret is in what is said
    assert WRONG_TOKEN not in " ".join(str(failure) for failure in listing.failed)


def test_strict_fails_at_the_first_failing_server_naming_it(
    healthy: dict[str, ServerSpec], broken: dict[str, ServerSpec]
) -> None:
    # Given a healthy server and one with nothing listening, named by its key
    servers: dict[str | None, ServerSpec] = {
        "demo": healthy["demo"],
        "down": ServerSpec(target=closed_port_url(), name="down"),
    }
    # When they are listed strictly, Then the listing fails with that server's own error, naming it
    with pytest.raises(ServerConnectError, match=r"Could not connect.*\[server: down\]"):
        listed(servers, strict=True)


def test_when_every_server_fails_the_listing_fails_naming_each_with_its_reason(broken: dict[str, ServerSpec]) -> None:
    servers: dict[str | None, ServerSpec] = {"down": broken["down"], "locked": broken["locked"]}
    with pytest.raises(ServerConnectError) as caught:
        listed(servers)
    said = str(caught.value)
    down, locked = said.removeprefix("None of the 2 servers listed its tools. ").split(" | ")
    assert down.startswith("down: Could not connect") and "Hint: Check that the server is running" in down
    assert locked.startswith("locked: The server refused the credentials (HTTP 401).") and WRONG_TOKEN not in said


def test_one_server_that_fails_fails_the_listing_with_its_own_error_as_before() -> None:
    with pytest.raises(ServerConnectError, match="Could not connect") as caught:
        listed({None: ServerSpec(target=closed_port_url())})
    assert not str(caught.value).startswith("None of")


def test_progress_is_one_fraction_of_the_servers_done(healthy: dict[str, ServerSpec]) -> None:
    reports: list[tuple[float, str]] = []
    servers: dict[str | None, ServerSpec] = {"demo": healthy["demo"], "down": ServerSpec(target=closed_port_url())}
    listing = listed(servers, progress=lambda fraction, message: reports.append((fraction, message)))
    assert [failure.key for failure in listing.failed] == ["down"]
    assert reports == [
        (0.0, "Listing the tools of 2 servers"),
        (0.5, "Listed 1 of 2 servers"),
        (1.0, "Listed 2 of 2 servers"),
    ]


def test_servers_given_as_pairs_may_share_no_key_and_a_failure_is_named_by_its_address(demo_http_url: str) -> None:
    # Given two servers named on a command line, which have no key
    down = closed_port_url()
    servers = [(None, ServerSpec(target=demo_http_url)), (None, ServerSpec(target=down))]
    # When they are listed, Then the tools keep their own names and the failure names the server's address
    listing = anyio.run(lambda: list_servers_tools(servers))
    assert "echo" in {tool.name for tool in listing.tools}
    assert [failure.key for failure in listing.failed] == [down]
    assert isinstance(listing.failed[0], ServerFailure) and str(listing.failed[0]).startswith(f"{down}: Could not")


# -- an agent run whose server dies mid-run ----------------------------------------------------------------------


class StoppingModel(ScriptedChatModel):
    """A scripted model that stops a server's process just before its ``stop_before``-th request."""

    stop_before: int = 1
    process: Any = Field(default=None, exclude=True)

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        if len(self.requests) == self.stop_before and self.process is not None:
            stop_process(self.process)
        return super()._generate(messages, stop, run_manager, **kwargs)


@pytest.fixture
def doomed_server(tmp_path: Path) -> Iterator[RunningServer]:
    """The demo server over Streamable HTTP in a process of this test's own, for it to stop."""
    with running_server([*DEMO_COMMAND, "--transport", "streamable-http", "--port", "0"], tmp_path / "log") as server:
        yield server


def test_a_server_that_dies_mid_run_fails_its_calls_clearly_and_the_other_servers_tools_keep_working(
    doomed_server: RunningServer, demo_stdio_command: list[str]
) -> None:
    # Given the tools of two servers, one of which will stop after the model's first turn
    servers: dict[str | None, ServerSpec] = {
        "doomed": ServerSpec(target=doomed_server.url, name="doomed"),
        "steady": ServerSpec(target=shlex.join(demo_stdio_command), transport="stdio", name="steady"),
    }
    tools = listed(servers).tools
    both = (("doomed_echo", {"text": "to doomed"}), ("steady_echo", {"text": "to steady"}))
    model = StoppingModel(
        messages=iter([calls(*((f"a{i}", *call) for i, call in enumerate(both))),
                       calls(*((f"b{i}", *call) for i, call in enumerate(both))), AIMessage("Done.")]),
        process=doomed_server.process,
    )  # fmt: skip
    # When the agent runs, and the doomed server's process is stopped before the model's second turn
    run = run_scripted(model, tools)
    # Then the dead server's call failed with a clear error for the model, naming it, and the other's went through
    assert [(entry.tool, entry.status) for entry in run.log] == [
        ("doomed_echo", "ok"), ("steady_echo", "ok"), ("doomed_echo", "connection_error"), ("steady_echo", "ok"),
    ]  # fmt: skip
    texts = tool_texts(run)
    assert "to steady" in texts[3] and "doomed" in texts[2] and "Could not connect" in texts[2]
    assert run.failure is None and run.conversation.new_messages[-1].content == "Done."
