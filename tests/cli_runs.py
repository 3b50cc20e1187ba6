"""Test layer: runs of the command line, in-process with what it printed, or as a child that a test interrupts."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from knime_mcp.cli.main import main


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``knime-mcp ARGV...``: its exit code, stdout and stderr."""
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def answer_ctrl_c() -> None:
    """In a child before it runs: Ctrl-C as a terminal's shell leaves it to a command in the foreground, whatever this
    process inherited (a script's background job, which a test command may be, ignores SIGINT, and so would its
    children)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def start_cli(*argv: str, stdin: int = subprocess.DEVNULL) -> subprocess.Popen[str]:
    """``knime-mcp ARGV...`` as a child in a process group of its own, as a terminal runs a command in the foreground:
    :func:`press_ctrl_c` reaches it and its own children, and nothing else. ``stdin=subprocess.PIPE``: a person who
    has not answered yet."""
    return subprocess.Popen(
        [sys.executable, "-m", "knime_mcp", *argv],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        process_group=0,
        preexec_fn=answer_ctrl_c,
    )


def press_ctrl_c(child: subprocess.Popen[str]) -> None:
    """What Ctrl-C on its terminal does: SIGINT to the child's foreground process group."""
    os.killpg(child.pid, signal.SIGINT)
