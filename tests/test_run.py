"""tests/run.py, the test command: its two legs, how it counts, and what it says when KNIME's sources are missing."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import run
from real_knime.sources import sources_dirs
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
    """Replace pytest by legs that pass one test each and exit with ``codes[api]``; return each leg's API (with its
    sources folder for a real leg) and pytest arguments."""
    calls: list[tuple[str, list[str]]] = []

    def leg(name: str, env: dict[str, str], pytest_args: list[str], report: Path) -> tuple[int, Counts]:
        api = env[run.API_ENV]
        calls.append((f"{api} {env[run.SOURCES_ENV]}" if api == "real" else api, pytest_args))
        return codes[api], Counts(passed=1)

    monkeypatch.setattr(run, "run_leg", leg)
    return calls


def _folders(tmp_path: Path, *names: str) -> str:
    """``KNIME_PYTHON_SOURCES`` naming ``names`` under ``tmp_path``; those not starting with 'absent' exist."""
    for name in names:
        if not name.startswith("absent"):
            (tmp_path / name).mkdir()
    return os.pathsep.join(str(tmp_path / name) for name in names)


def test_one_real_leg_runs_the_marked_tests_per_sources_folder_and_a_leg_without_tests_fails_the_command(
    monkeypatch: pytest.MonkeyPatch, capsys: Any, tmp_path: Path
) -> None:
    monkeypatch.setenv(run.SOURCES_ENV, _folders(tmp_path, "master", "5.5.3"))
    calls = _legs(monkeypatch, {"stand-in": 0, "real": 5})
    assert run.main(["-q", "-k", "node"]) == 1
    marked = ["-m", "knime_node", "-q", "-k", "node"]
    assert calls == [
        ("stand-in", ["-q", "-k", "node"]),
        (f"real {tmp_path / 'master'}", marked),
        (f"real {tmp_path / '5.5.3'}", marked),
    ]
    assert capsys.readouterr().out.splitlines()[-1] == "tests: 3 passed, 0 failed, 0 skipped"


def test_by_default_the_real_legs_run_on_master_and_on_the_release_pixi_targets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(run.SOURCES_ENV, raising=False)
    shared = Path(run.__file__).resolve().parents[2] / "shared"
    assert sources_dirs() == [(shared / "knime-python").resolve(), (shared / "knime-python-5.5.3").resolve()]
    assert '"5.5.*"' in (Path(run.__file__).resolve().parents[1] / "pixi.toml").read_text()


def test_without_knime_sources_the_command_says_so_and_runs_the_other_legs(
    monkeypatch: pytest.MonkeyPatch, capsys: Any, tmp_path: Path
) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv(run.SOURCES_ENV, _folders(tmp_path, "absent", "master"))
    calls = _legs(monkeypatch, {"stand-in": 0, "real": 0})
    assert run.main([]) == 0
    out = capsys.readouterr().out.splitlines()
    assert calls == [("stand-in", []), (f"real {tmp_path / 'master'}", ["-m", "knime_node"])]
    assert out == [
        f"leg 2 (real KNIME, absent) not run: {tmp_path / 'absent'} not found; set KNIME_PYTHON_SOURCES",
        "tests: 2 passed, 0 failed, 0 skipped",
    ]


def test_in_ci_a_missing_real_leg_fails_the_command(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv(run.SOURCES_ENV, _folders(tmp_path, "master", "absent"))
    _legs(monkeypatch, {"stand-in": 0, "real": 0})
    assert run.main([]) == 1


def test_in_ci_a_skip_on_a_real_leg_fails_the_command(
    monkeypatch: pytest.MonkeyPatch, capsys: Any, tmp_path: Path
) -> None:
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv(run.SOURCES_ENV, _folders(tmp_path, "master", "5.5.3"))

    def leg(name: str, env: dict[str, str], pytest_args: list[str], report: Path) -> tuple[int, Counts]:
        return 0, Counts(passed=1, skipped=int(env.get(run.SOURCES_ENV, "").endswith("5.5.3")))

    monkeypatch.setattr(run, "run_leg", leg)
    assert run.main([]) == 1
    assert "leg 3 (real KNIME, 5.5.3) skipped 1 test(s): no node test may skip under the real API" in (
        capsys.readouterr().out
    )
