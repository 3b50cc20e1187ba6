"""tests/run.py, the test command: its two legs, how it counts, and what it says when KNIME's sources are missing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import run
from run import Counts

REPORT = """<?xml version="1.0" encoding="utf-8"?><testsuites>
<testsuite name="pytest" errors="1" failures="2" skipped="3" tests="10" time="1.0"/>
<testsuite name="more" errors="0" failures="0" skipped="0" tests="4" time="1.0"/>
</testsuites>"""


def test_counts_add_up_every_suite_of_a_junit_report_with_errors_as_failures(tmp_path: Path) -> None:
    report = tmp_path / "report.xml"
    report.write_text(REPORT)
    assert run.counts(report) == Counts(passed=8, failed=3, skipped=3)


def test_a_leg_without_a_report_counts_nothing(tmp_path: Path) -> None:
    assert run.counts(tmp_path / "missing.xml") == Counts()


def _legs(monkeypatch: pytest.MonkeyPatch, codes: dict[str, int]) -> list[tuple[str, list[str]]]:
    """Replace pytest by legs that pass one test each and exit with ``codes[api]``; return the legs run."""
    calls: list[tuple[str, list[str]]] = []

    def leg(name: str, api: str, pytest_args: list[str], report: Path) -> tuple[int, Counts]:
        calls.append((api, pytest_args))
        return codes[api], Counts(passed=1)

    monkeypatch.setattr(run, "run_leg", leg)
    return calls


def test_the_real_leg_runs_the_marked_tests_and_a_leg_without_tests_fails_the_command(
    monkeypatch: pytest.MonkeyPatch, capsys: Any, tmp_path: Path
) -> None:
    monkeypatch.setenv(run.SOURCES_ENV, str(tmp_path))
    calls = _legs(monkeypatch, {"stand-in": 0, "real": 5})
    assert run.main(["-q", "-k", "node"]) == 1
    assert calls == [("stand-in", ["-q", "-k", "node"]), ("real", ["-m", "knime_node", "-q", "-k", "node"])]
    assert capsys.readouterr().out.splitlines()[-1] == "tests: 2 passed, 0 failed, 0 skipped"


def test_without_knime_sources_the_command_says_so_and_runs_the_stand_in_leg_only(
    monkeypatch: pytest.MonkeyPatch, capsys: Any, tmp_path: Path
) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv(run.SOURCES_ENV, str(tmp_path / "absent"))
    calls = _legs(monkeypatch, {"stand-in": 0})
    assert run.main([]) == 0
    out = capsys.readouterr().out.splitlines()
    assert calls == [("stand-in", [])]
    assert out == [
        f"real KNIME leg not run: {tmp_path / 'absent'} not found; set KNIME_PYTHON_SOURCES",
        "tests: 1 passed, 0 failed, 0 skipped",
    ]


def test_in_ci_a_missing_real_leg_fails_the_command(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv(run.SOURCES_ENV, str(tmp_path / "absent"))
    _legs(monkeypatch, {"stand-in": 0})
    assert run.main([]) == 1


def test_in_ci_a_skip_on_the_real_leg_fails_the_command(
    monkeypatch: pytest.MonkeyPatch, capsys: Any, tmp_path: Path
) -> None:
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv(run.SOURCES_ENV, str(tmp_path))

    def leg(name: str, api: str, pytest_args: list[str], report: Path) -> tuple[int, Counts]:
        return 0, Counts(passed=1, skipped=int(api == "real"))

    monkeypatch.setattr(run, "run_leg", leg)
    assert run.main([]) == 1
    assert "no node test may skip under the real API" in capsys.readouterr().out
