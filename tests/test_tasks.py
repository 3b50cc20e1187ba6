"""Tools that run as MCP tasks, and call timeouts that progress extends, against server-everything (a real
third-party server) over stdio and Streamable HTTP."""

from __future__ import annotations

import shlex
import sys
from functools import partial
from pathlib import Path

import anyio
import mcp_types
import pytest
from langchain_core.messages import AIMessage

from fixtures.npm_servers import PEERS_DIR, NodePeers
from knime_mcp.calls.dispatch import Dispatcher
from knime_mcp.calls.pool import ClientPool
from knime_mcp.config import ServerSpec, Timeouts
from knime_mcp.errors import ToolCallError, ToolTimeoutError
from knime_mcp.mcp.client import McpClient
from knime_mcp.mcp.tasks import MAX_STATUS_CHARS, MIN_POLL_SECONDS

pytestmark = pytest.mark.anyio

RESEARCH = "simulate-research-query"
STAGES = ["Gathering sources...", "Analyzing content...", "Synthesizing findings...", "Generating report..."]


@pytest.fixture(params=["stdio", "streamable-http"])
def everything(request: pytest.FixtureRequest) -> ServerSpec:
    """server-everything over stdio (a process per client) or Streamable HTTP (one server for the session)."""
    if request.param == "stdio":
        return ServerSpec(target=shlex.join(request.getfixturevalue("everything_stdio_command")))
    return ServerSpec(target=request.getfixturevalue("everything_http_url"), transport="streamable-http")


def _task_server(peers: NodePeers, *options: str) -> list[str]:
    """The command line of the TypeScript SDK's task server (tests/peers/task_server.mjs) with ``options``."""
    return [peers.node, str(PEERS_DIR / "task_server.mjs"), *options]


def _task_server_spec(peers: NodePeers, *options: str, call: float | None = None) -> ServerSpec:
    """The task server with ``options``, over stdio, with a call timeout of ``call`` seconds if given."""
    timeouts = {"timeouts": {"call": call}} if call is not None else {}
    return ServerSpec.from_dict({"target": shlex.join(_task_server(peers, *options)), **timeouts})


async def _tasks_on_server(client: McpClient) -> list[mcp_types.Task]:
    """The server's own list of tasks (``tasks/list``), over the client's session."""
    session = client._keeper.current().client.session
    return (await session.send_request(mcp_types.ListTasksRequest(), mcp_types.ListTasksResult)).tasks


async def test_a_tool_that_requires_a_task_runs_to_its_report_with_each_stage_as_progress(
    everything: ServerSpec,
) -> None:
    # Given server-everything's simulate-research-query (taskSupport "required", four stages of a second)
    heard: list[tuple[float | None, float | None, str | None]] = []
    async with McpClient(everything) as client:
        tool = {tool.name: tool for tool in await client.list_tools()}[RESEARCH]
        # When it is called as the listing says
        result = await client.call_tool(
            RESEARCH, {"topic": "KNIME"}, task_support=tool.task_support, progress=lambda *p: heard.append(p)
        )
    # Then the task's result is the report, and the status messages polled (a stage lasts as long as the server's
    # poll interval, so a poll may skip one) reached the progress once each, in order, as statuses (no count)
    assert tool.task_support == "required"
    assert not result.is_error
    assert result.text.startswith("# Research Report: KNIME")
    messages = [message for _, _, message in heard]
    assert messages[0] == STAGES[0] and len(messages) >= 2
    assert messages == [stage for stage in STAGES if stage in messages]
    assert {(done, total) for done, total, _ in heard} == {(None, None)}


async def test_a_task_cut_off_by_cancelling_the_run_is_cancelled_on_the_server(everything: ServerSpec) -> None:
    # Given a research task under way
    async with McpClient(everything) as client:
        started = anyio.Event()
        before = {task.task_id for task in await _tasks_on_server(client)}
        async with anyio.create_task_group() as group:

            async def call() -> None:
                await client.call_tool(
                    RESEARCH, {"topic": "stop"}, task_support="required", progress=lambda *_: started.set()
                )

            group.start_soon(call)
            # When the run is cancelled at its first status message
            await started.wait()
            group.cancel_scope.cancel()
        # Then the server says the task was cancelled
        tasks = [task for task in await _tasks_on_server(client) if task.task_id not in before]
    assert [task.status for task in tasks] == ["cancelled"]


async def test_a_task_past_the_call_timeout_is_cancelled_on_the_server_and_reported_as_a_timeout(
    everything: ServerSpec,
) -> None:
    # Given a call timeout shorter than the task (four stages of a second) and no extension by progress
    spec = ServerSpec.from_dict({**everything.to_dict(), "timeouts": {"call": 1.5}})
    async with McpClient(spec) as client:
        before = {task.task_id for task in await _tasks_on_server(client)}
        # When it is called
        with pytest.raises(ToolTimeoutError) as caught:
            await client.call_tool(RESEARCH, {"topic": "slow"}, task_support="required")
        tasks = [task for task in await _tasks_on_server(client) if task.task_id not in before]
    # Then the call is a timeout that says so, and the task is cancelled on the server
    assert str(caught.value).startswith(f"Tool {RESEARCH!r} did not answer within 1.5 s; the call was cancelled.")
    assert [task.status for task in tasks] == ["cancelled"]


async def test_a_task_whose_creation_is_cut_off_is_cancelled_on_the_server_once_its_id_comes(
    npm_peers: NodePeers, tmp_path: Path
) -> None:
    # Given a server that starts the task at once but names it a second later
    marks = tmp_path / "marks.txt"
    spec = _task_server_spec(npm_peers, "--stage-ms", "60000", "--create-delay-ms", "1000", "--marks", str(marks))
    async with McpClient(spec) as client:
        async with anyio.create_task_group() as group:
            group.start_soon(partial(client.call_tool, "slow_report", {"topic": "cut"}, task_support="required"))
            # When the run is cancelled while the task's creation is under way (started on the server, not yet named)
            while "started" not in (marks.read_text() if marks.exists() else ""):
                await anyio.sleep(0.02)
            group.cancel_scope.cancel()
        # Then the client waited for the task's id and cancelled it: it does not run on for its two minutes
        assert marks.read_text().split() == ["started", "cancelled"]


def test_a_task_of_a_run_cancelled_in_knime_is_cancelled_on_the_server(npm_peers: NodePeers, tmp_path: Path) -> None:
    from knime_mcp.errors import CancelledByUser
    from knime_mcp.mcp.sync import run_sync

    # Given a node's run (its sessions in the run's pool) calling a task tool of a minute
    marks = tmp_path / "marks.txt"
    spec = _task_server_spec(npm_peers, "--stage-ms", "60000", "--marks", str(marks))

    async def run() -> None:
        async with ClientPool() as pool:
            client = await pool.client(spec)
            await client.call_tool("slow_report", {"topic": "knime"}, task_support="required")

    # When KNIME's cancel button is pressed once the task started
    with pytest.raises(CancelledByUser):
        run_sync(run, cancelled=lambda: marks.exists() and "started" in marks.read_text())
    # Then the task was cancelled on the server over the run's session, which outlived the call to say so
    assert marks.read_text().split() == ["started", "cancelled"]


async def test_new_task_statuses_extend_the_call_timeout_up_to_the_longest_call(everything: ServerSpec) -> None:
    # Given a call timeout of 1.5 s, shorter than the task but longer than a stage
    extended = ServerSpec.from_dict({**everything.to_dict(), "timeouts": {"call": 1.5, "progress_max": 30}})
    capped = ServerSpec.from_dict({**everything.to_dict(), "timeouts": {"call": 1.5, "progress_max": 2.5}})
    # When the longest call while progress is reported is 30 s, the task runs to its report
    async with McpClient(extended) as client:
        result = await client.call_tool(RESEARCH, {"topic": "long"}, task_support="required")
    assert result.text.startswith("# Research Report: long")
    # But when it is 2.5 s, the call stops there
    async with McpClient(capped) as client:
        with pytest.raises(ToolTimeoutError) as caught:
            await client.call_tool(RESEARCH, {"topic": "long"}, task_support="required")
    assert "within 1.5 s of its last progress report (at most 2.5 s in all)" in str(caught.value)


async def test_progress_notifications_extend_a_plain_call_up_to_the_longest_call(everything: ServerSpec) -> None:
    # Given trigger-long-running-operation, a plain call of 3 s that reports progress every 0.5 s
    arguments = {"duration": 3, "steps": 6}
    plain = ServerSpec.from_dict({**everything.to_dict(), "timeouts": {"call": 1.5}})
    extended = ServerSpec.from_dict({**everything.to_dict(), "timeouts": {"call": 1.5, "progress_max": 30}})
    capped = ServerSpec.from_dict({**everything.to_dict(), "timeouts": {"call": 1.5, "progress_max": 2}})
    # When the call timeout is final, the call times out
    async with McpClient(plain) as client:
        with pytest.raises(ToolTimeoutError):
            await client.call_tool("trigger-long-running-operation", arguments)
    # When progress extends it, the call outlives the call timeout
    async with McpClient(extended) as client:
        result = await client.call_tool("trigger-long-running-operation", arguments)
    assert result.text.startswith("Long running operation completed.")
    # And it still stops at the longest call
    async with McpClient(capped) as client:
        with pytest.raises(ToolTimeoutError) as caught:
            await client.call_tool("trigger-long-running-operation", arguments)
    assert "(at most 2 s in all)" in str(caught.value)


async def test_the_dispatcher_runs_a_listed_task_tool(everything: ServerSpec) -> None:
    # Given the research tool as listed
    async with McpClient(everything) as client:
        tool = {tool.name: tool for tool in await client.list_tools()}[RESEARCH]
    # When the dispatcher every node shares calls it
    async with ClientPool() as pool:
        outcome = await Dispatcher(pool).call(tool, {"topic": "dispatch"})
    # Then it ran as a task
    assert outcome.ok, outcome.record.error
    assert outcome.result is not None and outcome.result.text.startswith("# Research Report: dispatch")


async def test_a_timeout_is_reported_and_the_session_kept_when_the_server_refuses_to_cancel_the_ended_task(
    npm_peers: NodePeers,
) -> None:
    # Given a server slow to answer tasks/get, whose task ends while the client waits, so that the SDK's server
    # refuses the tasks/cancel that follows the call timeout ("Cannot cancel task in terminal status")
    spec = _task_server_spec(npm_peers, "--stage-ms", "10", "--get-delay-ms", "60000", call=3)
    async with McpClient(spec) as client:
        session = client._keeper.current()
        # When the task runs past the call timeout
        with pytest.raises(ToolTimeoutError) as caught:
            await client.call_tool("slow_report", {"topic": "late"}, task_support="optional", tasks=True)
        # Then the call is the timeout, the task stays completed (the cancel was refused), and the next call goes
        # over the same session (the stdio server was not restarted)
        assert str(caught.value).startswith("Tool 'slow_report' did not answer within 3 s; the call was cancelled.")
        assert [task.status for task in await _tasks_on_server(client)] == ["completed"]
        assert (await client.call_tool("slow_report", {"topic": "next"})).text == "Report on next"
        assert client._keeper.current() is session and session.lost is None


async def test_a_servers_long_status_message_reaches_progress_capped(npm_peers: NodePeers) -> None:
    # Given a task server whose status messages are 100,000 characters long
    spec = _task_server_spec(npm_peers, "--status-chars", "100000")
    heard: list[str | None] = []
    async with McpClient(spec) as client:
        # When its task runs
        result = await client.call_tool(
            "slow_report",
            {"topic": "long"},
            tasks=True,
            task_support="optional",
            progress=lambda *p: heard.append(p[2]),
        )
    # Then each status reaches the progress cut to its first KB, marked as cut
    assert result.text == "Report on long"
    assert heard and all(message and len(message) == MAX_STATUS_CHARS for message in heard)
    assert heard[0].startswith("Counting rows...xxx") and heard[0].endswith("x…")  # type: ignore[union-attr]


async def test_a_poll_interval_longer_than_the_call_timeout_still_polls_the_task_before_it(
    npm_peers: NodePeers,
) -> None:
    # Given a task that ends within a fraction of a second but asks to be polled once an hour, and a call timeout of 4 s
    spec = _task_server_spec(npm_peers, "--stage-ms", "10", "--poll-ms", "3600000", call=4)
    async with McpClient(spec) as client:
        # When it is called, the task is polled within the call timeout, and its result comes back
        result = await client.call_tool("slow_report", {"topic": "hourly"}, tasks=True, task_support="optional")
    assert result.text == "Report on hourly"


async def test_a_task_is_polled_at_the_servers_interval_however_long_its_status_stays_the_same(
    npm_peers: NodePeers, tmp_path: Path
) -> None:
    # Given a task of two 2 s stages that asks to be polled every 50 ms, and a server that notes each tasks/get
    polls = tmp_path / "polls.txt"
    spec = _task_server_spec(npm_peers, "--stage-ms", "2000", "--poll-ms", "50", "--polls", str(polls))
    async with McpClient(spec) as client:
        # When it runs to its report
        result = await client.call_tool("slow_report", {"topic": "paced"}, tasks=True, task_support="optional")
    # Then the server was polled at its pace throughout: 80 polls at 50 ms with no time spent answering, at least
    # 32 if each took 75 ms (a busy machine). Waits growing by half from 50 ms while a status stays the same can fit
    # at most 16 (eight in each 2 s stage, every sleep at least what was asked), whatever the load.
    assert result.text == "Report on paced"
    assert len(polls.read_text().splitlines()) >= 32


async def test_a_server_that_asks_to_be_polled_without_pause_is_polled_at_most_every_50_ms(
    npm_peers: NodePeers, tmp_path: Path
) -> None:
    # Given a task of two 250 ms stages whose pollInterval is 0
    polls = tmp_path / "polls.txt"
    spec = _task_server_spec(npm_peers, "--stage-ms", "250", "--poll-ms", "0", "--polls", str(polls))
    async with McpClient(spec) as client:
        # When it runs to its report
        started = anyio.current_time()
        result = await client.call_tool("slow_report", {"topic": "eager"}, tasks=True, task_support="optional")
        waited = anyio.current_time() - started
    # Then each poll came at least 50 ms after the one before (however slowly the machine ran), not back to back
    assert result.text == "Report on eager"
    assert 1 <= len(polls.read_text().splitlines()) <= waited / MIN_POLL_SECONDS + 1


def test_a_spec_without_the_longest_call_writes_the_json_it_wrote_before() -> None:
    spec = ServerSpec(target="http://127.0.0.1:1/mcp", timeouts=Timeouts(call=5))
    assert '"timeouts":{"call":5,"connect":30.0}' in spec.to_json()
    longer = ServerSpec(target="http://127.0.0.1:1/mcp", timeouts=Timeouts(call=5, progress_max=50))
    assert ServerSpec.from_json(longer.to_json()).timeouts.progress_max == 50


def test_the_agent_is_offered_a_task_tool_and_its_call_runs_as_a_task(everything_stdio_command: list[str]) -> None:
    from knime_mcp.calls.listing import list_server_tools
    from knime_mcp.mcp.sync import run_sync
    from scripted_model import calls, offered, run_scripted, scripted, tool_texts

    # Given server-everything's research tool, which runs only as a task
    spec = ServerSpec(target=shlex.join(everything_stdio_command))
    research = [tool for tool in run_sync(list_server_tools, spec).tools if tool.name == RESEARCH]
    model = scripted(calls(("c1", RESEARCH, {"topic": "agents"})), AIMessage("Done."))
    # When the model calls it
    run = run_scripted(model, research)
    # Then it was offered, its call ran as a task, and its report reached the conversation
    assert offered(model, 0) == [RESEARCH]
    assert [entry.status for entry in run.log] == ["ok"]
    assert "\n# Research Report: agents\n" in tool_texts(run)[0]


async def test_an_optional_task_tool_runs_plainly_unless_tasks_are_on(npm_peers: NodePeers) -> None:
    # Given a server (the TypeScript SDK's) whose slow_report may run as a task and reports a status per stage
    spec = _task_server_spec(npm_peers)
    async with McpClient(spec) as client:
        (tool,) = await client.list_tools()
        runs = {}
        for tasks in (False, True):
            heard: list[str | None] = []
            result = await client.call_tool(
                tool.tool_name,
                {"topic": "rows"},
                task_support=tool.task_support,
                tasks=tasks,
                progress=lambda _done, _total, message, heard=heard: heard.append(message),
            )
            runs[tasks] = (result.text, heard)
    # When tasks are off, the call is plain (no status reaches the progress); when on, it runs as a task
    assert tool.task_support == "optional"
    assert runs[False] == ("Report on rows", [])
    assert runs[True] == ("Report on rows", ["Counting rows...", "Writing the report..."])


@pytest.mark.parametrize("tasks", [False, True])
def test_the_agents_run_long_tools_as_tasks_runs_an_optional_task_tool_as_a_task(
    npm_peers: NodePeers, tasks: bool
) -> None:
    from knime_mcp.agent.loop import AgentConfig
    from knime_mcp.calls.listing import list_server_tools
    from knime_mcp.mcp.sync import run_sync
    from scripted_model import calls, run_scripted, scripted, tool_texts

    # Given a tool that may run as a task, whose stages show as progress only when it does
    spec = _task_server_spec(npm_peers)
    tools = run_sync(list_server_tools, spec).tools
    model = scripted(calls(("c1", "slow_report", {"topic": "rows"})), AIMessage("Done."))
    heard: list[str] = []
    # When the agent runs it with *Run long tools as tasks* on or off
    run = run_scripted(
        model, tools, config=AgentConfig(tasks=tasks), progress=lambda _fraction, message: heard.append(message)
    )
    # Then its report reaches the model either way, and its task's status reaches the progress only as a task
    assert "\nReport on rows\n" in tool_texts(run)[0]
    assert any(message.endswith("tool slow_report: Counting rows...") for message in heard) is tasks


async def test_a_tool_that_requires_a_task_on_a_server_without_tasks_is_refused_unsent() -> None:
    # Given a fake server that lists a tool requiring a task but does not declare the tasks capability
    fake = Path(__file__).parent / "fakes" / "fake_task_tool_without_tasks.py"
    async with McpClient(ServerSpec(target=shlex.join([sys.executable, str(fake)]))) as client:
        # When it is called as a tool that requires a task
        with pytest.raises(ToolCallError) as caught:
            await client.call_tool("research", {}, task_support="required")
    # Then it is refused, saying why, and never sent (the server would have answered "research ran")
    assert str(caught.value).startswith(
        "Tool 'research' runs only as an MCP task, but the server does not offer task calls "
        "(capability tasks.requests.tools.call)."
    )


def test_the_cli_runs_an_optional_tool_as_a_task_with_tasks_and_extends_its_timeout_with_progress_timeout(
    capsys: pytest.CaptureFixture[str], npm_peers: NodePeers
) -> None:
    from cli_runs import run_cli

    # Given the task server's slow_report, whose two stages take 0.6 s each, and a call timeout of 0.8 s
    server = _task_server(npm_peers, "--stage-ms", "600")
    call = ["call", "--call-timeout", "0.8", "--tasks", "--", *server, "--", "slow_report", "--args", '{"topic": "x"}']
    # When it is called with --tasks, its statuses are shown, but the whole task outlives the call timeout
    code, out, err = run_cli(capsys, *call)
    assert code != 0 and "Progress: Counting rows...\n" in err
    assert "did not answer within 0.8 s; the call was cancelled." in err
    # And with --progress-timeout each new status restarts the call timeout, so it runs to its report
    code, out, err = run_cli(capsys, "call", "--progress-timeout", "30", *call[1:])
    assert code == 0 and '"Report on x"' in out and "Progress: Writing the report...\n" in err, err


async def test_a_task_that_needs_input_gets_the_form_through_its_result_answered_by_the_runs_policy(
    everything_stdio_command: list[str],
) -> None:
    from knime_mcp.mcp.server_requests import FormAnswer, FormRequest, ServerRequests

    spec = ServerSpec(target=shlex.join(everything_stdio_command))
    arguments = {"topic": "python", "ambiguous": True}
    asked: list[str] = []

    async def person(form: FormRequest) -> FormAnswer:
        asked.append(form.message)
        return "accept", {"interpretation": "programming"}

    # Given an ambiguous research query, which goes input_required and asks for a form through tasks/result
    # When a person answers the form, the task resumes with the answer and completes
    async with McpClient(spec, requests=ServerRequests(forms=person)) as client:
        result = await client.call_tool(RESEARCH, arguments, task_support="required")
    assert asked and asked[0].startswith('The research query "python" could have multiple interpretations.')
    assert result.text.startswith("# Research Report: python (programming)")
    # But when nobody can fill it in (the default policy declines), the call fails saying so
    async with McpClient(spec) as client:
        with pytest.raises(ToolCallError) as caught:
            await client.call_tool(RESEARCH, arguments, task_support="required")
    assert str(caught.value).startswith(f"Tool {RESEARCH!r} asked for input, which knime-mcp declined")


def test_the_blocking_python_api_runs_a_listed_task_tool(everything_stdio_command: list[str]) -> None:
    from knime_mcp.mcp.sync import SyncMcpClient

    with SyncMcpClient(ServerSpec(target=shlex.join(everything_stdio_command))) as client:
        tool = {tool.name: tool for tool in client.list_tools()}[RESEARCH]
        result = client.call_tool(RESEARCH, {"topic": "sync"}, task_support=tool.task_support)
    assert result.text.startswith("# Research Report: sync")
