"""One call of a program tool: the program started without a shell, its output read within bounds, its processes
ended with the call.

Layer: wire, beside :mod:`knime_mcp.mcp` and :mod:`knime_mcp.http`, below the dispatcher, which validates the arguments
against the tool's schema, applies the tool policy and approval, and refuses a program from data before it comes here
(:meth:`knime_mcp.calls.pool.ClientPool.check_program`).

- The program runs in a session (a process group) of its own; when the call ends (its timeout, a cancel, too much
  output, or the program's own exit) the whole group is killed, so a background child holding the output open
  cannot keep the call, or itself, alive. On Windows the program gets a process group of its own and is killed
  alone: its children are not (not tested on this project's Linux machines).
- Only ``PATH``, ``HOME``, ``LANG``, ``LC_ALL``, ``TMPDIR`` and ``SYSTEMROOT`` pass through from this process's
  environment, besides the program's own entries (``${VAR}`` references resolved here); stdin is closed.
- Exit 0: the output is the result (JSON also as structured content when it parses). Another exit: a tool error with
  the end of what the program wrote to stderr. Secret values the environment resolved are masked in both.

    result = await run_program(ProgramSpec(name="wc", command="wc", args=("-w", "{path}")), {"path": "a.txt"})
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
from collections.abc import Mapping
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, Process

from knime_mcp.config import CredentialLookup, resolve_env, resolved_secrets
from knime_mcp.config.limits import MAX_MESSAGE_BYTES
from knime_mcp.config.program import ProgramSpec
from knime_mcp.errors import ServerConnectError, ToolCallError, ToolTimeoutError
from knime_mcp.programs.arguments import command_line
from knime_mcp.programs.spawn import open_program
from knime_mcp.tools.results import TextPart, ToolResult

__all__ = ["PASSED_ENVIRONMENT", "STDERR_TAIL_BYTES", "TIMEOUT_HINT", "run_program"]

PASSED_ENVIRONMENT = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")
"""The variables of this process's environment a program gets; everything else it gets is its own setting."""

STDERR_TAIL_BYTES = 4000
"""The end of a failed program's stderr that its tool error keeps."""

TIMEOUT_HINT = "Raise the program's timeout if it is slow."


async def run_program(
    program: ProgramSpec,
    arguments: Mapping[str, Any],
    *,
    timeout: float | None = None,
    credentials: CredentialLookup | None = None,
) -> ToolResult:
    """Run ``program`` once with ``arguments`` (already checked against its schema), within ``timeout`` seconds
    (None: the program's own). A :class:`ToolTimeoutError` when it runs out, a :class:`ToolCallError` for too much
    output or a missing argument, a :class:`ServerConnectError` when the program cannot be started."""
    argv = command_line(program, arguments)
    spec = program.server
    env = {name: os.environ[name] for name in PASSED_ENVIRONMENT if name in os.environ} | resolve_env(spec, credentials)
    secrets = resolved_secrets(spec, credentials)
    _check_installed(program, env)
    seconds = program.timeout if timeout is None else timeout
    limit = program.max_output_bytes or MAX_MESSAGE_BYTES
    try:
        process = await open_program(argv, cwd=program.cwd, env=env)
    except OSError as exc:
        raise ServerConnectError(
            f"Program tool {program.name!r} could not start {program.command!r}: {exc.strerror or exc}.",
            server=program.name,
            hint="Check the program's command and working folder.",
        ) from exc
    try:
        with anyio.fail_after(seconds):
            code, output, errors = await _finished(process, program.name, limit)
    except TimeoutError as exc:
        raise ToolTimeoutError(
            f"Program tool {program.name!r} did not finish within {seconds:g} s; it was stopped, with every process "
            "it started.",
            server=program.name,
            hint=TIMEOUT_HINT,
        ) from exc
    finally:
        with anyio.CancelScope(shield=True):
            _end_group(process)
            await process.aclose()  # reaps the program and closes its pipes
    return _result(program.name, code, output, errors).masked(secrets)


def _check_installed(program: ProgramSpec, env: Mapping[str, str]) -> None:
    """A bare program name not on the ``PATH`` the program gets is named, rather than the operating system's "No
    such file or directory"; a path is left to the operating system."""
    if os.path.dirname(program.command) or shutil.which(program.command, path=env.get("PATH")):
        return
    raise ServerConnectError(
        f"Program tool {program.name!r} runs {program.command!r}, which is not installed here: it is not on PATH.",
        server=program.name,
        hint=f"Install {program.command!r}; if it is installed, start KNIME (or this command) with its folder on PATH, "
        "or write its full path as the program's command.",
    )


async def _finished(process: Process, name: str, limit: int) -> tuple[int, bytes, bytes]:
    """The program's exit status, output and the end of its stderr, read at once; when the program has exited, the
    rest of its group is ended, so that the output ends too. Output past ``limit`` stops the program."""
    output = bytearray()
    errors = bytearray()
    assert process.stdout is not None and process.stderr is not None
    async with anyio.create_task_group() as reading:
        reading.start_soon(_read_output, process.stdout, output, limit, reading.cancel_scope)
        reading.start_soon(_read_tail, process.stderr, errors)
        code = await process.wait()
        _end_group(process)
    if len(output) > limit:
        raise ToolCallError(
            f"Program tool {name!r} wrote more than the largest output knime-mcp reads for it ({_amount(limit)}); "
            "it was stopped.",
            server=name,
            hint="Raise the program's largest output (maxOutputMb), or ask it for less at a time.",
        )
    return code, bytes(output), bytes(errors)


async def _read_output(stream: ByteReceiveStream, into: bytearray, limit: int, reading: anyio.CancelScope) -> None:
    """The output into ``into``; past ``limit`` bytes, the reading (and the wait for the program) is cancelled."""
    async for chunk in stream:
        into += chunk
        if len(into) > limit:
            reading.cancel()
            return


async def _read_tail(stream: ByteReceiveStream, into: bytearray) -> None:
    async for chunk in stream:
        into += chunk
        del into[: max(0, len(into) - STDERR_TAIL_BYTES)]


def _end_group(process: Process) -> None:
    """Kill the program's process group: the program, if it still runs, and whatever it started and left behind (on
    Windows: the program alone)."""
    if sys.platform == "win32":
        if process.returncode is None:
            process.kill()
        return
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the group has ended already


def _result(name: str, code: int, output: bytes, errors: bytes) -> ToolResult:
    text = output.decode("utf-8", errors="replace")
    if code != 0:
        ended = f"was ended by signal {-code}" if code < 0 else f"exited with status {code}"
        tail = errors.decode("utf-8", errors="replace").strip()
        said = f"Program tool {name!r} {ended}."
        return ToolResult(content=(TextPart(f"{said}\n{tail}" if tail else said),), is_error=True)
    if not text.strip():
        return ToolResult(content=(TextPart(f"Program tool {name!r} finished without output."),))
    try:
        value = json.loads(text)
    except ValueError:
        return ToolResult(content=(TextPart(text),))
    return ToolResult(content=(TextPart(text),), structured=value if isinstance(value, dict) else {"result": value})


def _amount(size: int) -> str:
    return f"{size / 2**20:g} MB" if size >= 2**20 else f"{size:,} bytes"
