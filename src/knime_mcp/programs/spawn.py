"""A program's process, started in a process group of its own with stdin closed and its output on pipes.

Layer: wire, under :mod:`knime_mcp.programs.runner`, which reads the process and ends its group. On Linux the process
is a :class:`subprocess.Popen` whose exit is awaited through a pidfd and whose pipes are read as the event loop finds
them readable: asyncio's own subprocess support (under :func:`anyio.open_process`) starts a thread for every process
to wait for its exit, which cost about a quarter of a millisecond a call, as much as the rest of the runner's work.
Elsewhere (Windows, macOS, a kernel or sandbox without pidfds, anyio before 4.7) it is :func:`anyio.open_process`'s.
Either is an :class:`anyio.abc.Process`, so the runner reads both alike.

    process = await open_program(["wc", "-w", "a.txt"], cwd=None, env={"PATH": "/usr/bin"})
"""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import IO, Any

import anyio
import anyio.lowlevel
from anyio.abc import ByteReceiveStream, ByteSendStream, Process

__all__ = ["open_program"]

_CHUNK = 65536


async def open_program(argv: Sequence[str], *, cwd: str | None, env: Mapping[str, str]) -> Process:
    """``argv`` started without a shell in a process group (on Windows: a process group) of its own; an
    :class:`OSError` when it cannot be started."""
    if not _pidfd_usable():
        return await anyio.open_process(
            argv,
            stdin=subprocess.DEVNULL,
            cwd=cwd,
            env=env,
            **_own_group(),  # type: ignore[arg-type]
        )
    popen = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env,
        start_new_session=True,
    )  # fmt: skip
    try:
        pidfd = os.pidfd_open(popen.pid)
    except OSError:  # out of file descriptors: the program is not left running
        os.killpg(popen.pid, signal.SIGKILL)
        popen.communicate()
        raise
    return _PidfdProcess(popen, pidfd)


@functools.cache
def _pidfd_usable() -> bool:
    """Whether this system and anyio can wait for a process through a pidfd (Linux 5.3 and later, outside sandboxes
    that forbid it; anyio 4.7 and later)."""
    if not hasattr(os, "pidfd_open") or not hasattr(anyio, "wait_readable"):
        return False
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:
        return False
    return True


def _own_group() -> dict[str, Any]:
    if sys.platform == "win32":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


class _Pipe(ByteReceiveStream):
    """The read end of a program's pipe, read when the event loop finds it readable."""

    def __init__(self, pipe: IO[bytes]) -> None:
        self._pipe = pipe
        self._fd = pipe.fileno()
        os.set_blocking(self._fd, False)

    async def receive(self, max_bytes: int = _CHUNK) -> bytes:
        """The next chunk, read at once when there is one (a checkpoint all the same, so that a program that never
        stops writing cannot keep the event loop, and the call's timeout, from running)."""
        while True:
            try:
                chunk = os.read(self._fd, max_bytes)
            except BlockingIOError:
                await anyio.wait_readable(self._fd)
                continue
            await anyio.lowlevel.checkpoint()
            if not chunk:
                raise anyio.EndOfStream
            return chunk

    async def aclose(self) -> None:
        self._pipe.close()


class _PidfdProcess(Process):
    """A started :class:`subprocess.Popen` whose exit is awaited through its pidfd."""

    def __init__(self, popen: subprocess.Popen[bytes], pidfd: int) -> None:
        assert popen.stdout is not None and popen.stderr is not None
        self._popen, self._pidfd = popen, pidfd
        self._stdout, self._stderr = _Pipe(popen.stdout), _Pipe(popen.stderr)

    async def wait(self) -> int:
        while (code := self._popen.poll()) is None:
            await anyio.wait_readable(self._pidfd)
        return code

    def terminate(self) -> None:
        self._popen.terminate()

    def kill(self) -> None:
        self._popen.kill()

    def send_signal(self, signal: int) -> None:
        self._popen.send_signal(signal)

    @property
    def pid(self) -> int:
        return self._popen.pid

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode

    @property
    def stdin(self) -> ByteSendStream | None:
        return None

    @property
    def stdout(self) -> ByteReceiveStream:
        return self._stdout

    @property
    def stderr(self) -> ByteReceiveStream:
        return self._stderr

    async def aclose(self) -> None:
        """Close the pipes and reap the process (killed first if this is cancelled while it still runs), as
        :meth:`anyio.abc.Process.aclose` does."""
        try:
            with anyio.CancelScope(shield=True):
                await self._stdout.aclose()
                await self._stderr.aclose()
            try:
                await self.wait()
            except BaseException:
                with anyio.CancelScope(shield=True):
                    self.kill()
                    await self.wait()
                raise
        finally:
            os.close(self._pidfd)
