"""Test layer: one run of the command line, in-process, with what it printed."""

from __future__ import annotations

import pytest

from knime_mcp.cli.main import main


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``knime-mcp ARGV...``: its exit code, stdout and stderr."""
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err
