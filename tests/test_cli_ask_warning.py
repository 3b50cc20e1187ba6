"""``knime-mcp agent --ask-destructive`` while ``--destructive`` blocks destructive tools (the default) asks nothing,
since blocked tools are never offered: the command says so in one ``Warning:`` line naming the flag to pass."""

from __future__ import annotations

import io

import pytest

from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer
from knime_mcp.cli.main import main

ASKING = "Warning: --ask-destructive"


def _warnings(url: str, *flags: str) -> list[str]:
    """The ``Warning:`` lines about asking of an agent run whose model answers at once (the run's own warnings, such
    as the tools not offered, are left out)."""
    out, err = io.StringIO(), io.StringIO()
    with FakeOpenAIEndpoint([answer("Done.")]) as endpoint:
        argv = ["agent", "--base-url", endpoint.base_url, "--model", "fake", url, "--prompt", "Go.", *flags]
        assert main(argv, out=out, err=err) == 0, err.getvalue()
    return [line for line in err.getvalue().splitlines() if line.startswith(ASKING)]


@pytest.mark.parametrize("destructive", [[], ["--destructive", "block"], ["--destructive", "read-only"]])
def test_ask_destructive_with_destructive_tools_blocked_prints_one_warning(
    ledger_server_url: str, destructive: list[str]
) -> None:
    warnings = _warnings(ledger_server_url, "--ask-destructive", "--approve", "none", *destructive)
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith(f"{ASKING} is on, but --destructive blocks destructive tools")
    assert "pass --destructive allow" in warnings[0]


@pytest.mark.parametrize("flags", [["--ask-destructive", "--destructive", "allow"], []])
def test_no_warning_when_asking_can_happen_or_was_not_asked_for(ledger_server_url: str, flags: list[str]) -> None:
    assert _warnings(ledger_server_url, "--approve", "none", *flags) == []
