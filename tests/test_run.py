"""tests/run.py, the test command: its legs, how it counts, its parallel workers and coverage, what it says when
KNIME's sources are missing, and the test harness's own prerequisites (the browser, one npm install at a time)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest
from coverage import CoverageData
from filelock import FileLock, Timeout

import run
import view_harness
from fixtures.npm_install import lock_path, npm_ci
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

    def leg(
        name: str, env: dict[str, str], pytest_args: list[str], report: Path, data: Path, log: Path | None = None
    ) -> tuple[int, Counts]:
        api = env[run.API_ENV]
        calls.append((f"{api} {env[run.SOURCES_ENV]}" if api == "real" else api, pytest_args))
        return codes[api], Counts(passed=1)

    monkeypatch.setattr(run, "run_leg", leg)
    monkeypatch.setattr(run, "report_coverage", lambda data, enforce: True)
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
    marked = ["-m", "knime_node", *run.real_leg_workers(2), "-q", "-k", "node"]
    assert calls[0] == ("stand-in", ["-q", "-k", "node"])
    assert sorted(calls[1:]) == [(f"real {tmp_path / '5.5.3'}", marked), (f"real {tmp_path / 'master'}", marked)]
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
    assert calls == [("stand-in", []), (f"real {tmp_path / 'master'}", ["-m", "knime_node", *run.real_leg_workers(1)])]
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

    def leg(
        name: str, env: dict[str, str], pytest_args: list[str], report: Path, data: Path, log: Path | None = None
    ) -> tuple[int, Counts]:
        return 0, Counts(passed=1, skipped=int(env.get(run.SOURCES_ENV, "").endswith("5.5.3")))

    monkeypatch.setattr(run, "run_leg", leg)
    assert run.main([]) == 1
    assert "leg 3 (real KNIME, 5.5.3) skipped 1 test(s): no node test may skip under the real API" in (
        capsys.readouterr().out
    )


def test_the_real_legs_run_side_by_side_after_the_stand_in_leg_each_with_a_log_of_its_own(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(run.SOURCES_ENV, _folders(tmp_path, "master", "5.5.3"))
    both_real_legs = threading.Barrier(2, timeout=60)
    logs: list[Path | None] = []

    def leg(
        name: str, env: dict[str, str], pytest_args: list[str], report: Path, data: Path, log: Path | None = None
    ) -> tuple[int, Counts]:
        logs.append(log)
        if env[run.API_ENV] == "real":
            both_real_legs.wait()  # breaks (and fails the leg) unless the other real leg runs at the same time
        return 0, Counts(passed=1)

    monkeypatch.setattr(run, "run_leg", leg)
    monkeypatch.setattr(run, "report_coverage", lambda data, enforce: True)
    assert run.main([]) == 0
    assert logs[0] is None and len({log for log in logs[1:] if log is not None}) == 2


@pytest.mark.parametrize(("cpus", "workers"), [(2, "1"), (1, "1"), (8, "4")])
def test_real_legs_side_by_side_share_out_the_cpus_with_at_least_one_worker_each(
    monkeypatch: pytest.MonkeyPatch, cpus: int, workers: str
) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: cpus)
    assert run.real_leg_workers(2) == ["-n", workers]


def test_a_leg_keeps_compiled_modules_and_starts_its_own_measurement_whatever_this_process_was_told(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without compiled modules kept, each of a run's Python processes compiles src/knime_mcp and the tests anew."""
    for name in ("PYTHONDONTWRITEBYTECODE", "COVERAGE_PROCESS_START", "COVERAGE_PROCESS_CONFIG"):
        monkeypatch.setenv(name, "1")
    passed_on = run._child_environment()
    assert not {"PYTHONDONTWRITEBYTECODE", "COVERAGE_PROCESS_START", "COVERAGE_PROCESS_CONFIG"} & set(passed_on)
    assert passed_on["PATH"] == os.environ["PATH"]


_WORKER_TEST = """
import os, subprocess, sys
from pathlib import Path

def test_{name}():
    Path(__file__).with_suffix(".worker").write_text(os.environ["PYTEST_XDIST_WORKER"])
    {child}

def test_dropped():
    pass

def test_{name}_skips():
    import pytest
    pytest.skip("a skip is counted as one")
"""


def test_a_leg_runs_its_files_in_parallel_workers_and_measures_the_python_children_its_tests_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "pytest.ini").write_text("[pytest]\n")
    version = 'subprocess.run([sys.executable, "-m", "knime_mcp", "--version"], check=True)'
    (tests / "test_cli_child.py").write_text(_WORKER_TEST.format(name="cli_child", child=version))
    (tests / "test_other.py").write_text(_WORKER_TEST.format(name="other", child="pass"))
    data = tmp_path / "coverage" / ".coverage"
    data.parent.mkdir()
    args = ["-n", "2", "-c", str(tests / "pytest.ini"), "--rootdir", str(tests), "-k", "not dropped", str(tests)]
    code, counted = run.run_leg("leg", {}, args, tmp_path / "report.xml", data, log=tmp_path / "leg.log")
    assert (code, counted) == (0, Counts(passed=2, failed=0, skipped=2))
    said = capsys.readouterr().out.splitlines()
    assert said[0].startswith("== leg: ") and said[1] == "== leg: its output"
    assert said[-1].startswith("== leg: exit code 0 after ")
    assert "2 passed, 2 skipped" in said[-2], "the leg's output, from its log, comes in one piece before its end"
    assert len({path.read_text() for path in tests.glob("*.worker")}) == 2, "both files ran in one worker"
    out = io.StringIO()
    assert run.report_coverage(data, enforce=False, out=out)
    assert out.getvalue().startswith("coverage: ") and "% of src/knime_mcp" in out.getvalue()
    measured = CoverageData(basename=str(data))
    measured.read()
    main_module = Path(run.__file__).resolve().parent.parent / "src" / "knime_mcp" / "__main__.py"
    assert measured.lines(str(main_module)), "the CLI child's run of knime_mcp/__main__.py was not measured"


def test_a_run_of_every_test_fails_when_coverage_is_under_the_minimum(tmp_path: Path) -> None:
    data = tmp_path / ".coverage"
    command = [sys.executable, "-m", "coverage", "run", f"--rcfile={run.PYPROJECT}", "-m", "knime_mcp", "--version"]
    env = {key: value for key, value in os.environ.items() if not key.startswith("COVERAGE_PROCESS")}
    subprocess.run(command, env={**env, "COVERAGE_FILE": str(data)}, check=True, capture_output=True)
    out = io.StringIO()
    assert not run.report_coverage(data, enforce=True, out=out)
    last = out.getvalue().splitlines()[-1]
    assert last.startswith("coverage: ") and last.endswith("% of src/knime_mcp, under the minimum of 85 %")
    assert "src/knime_mcp/cli/main.py" in out.getvalue(), "the modules left to cover are listed"


def test_the_command_fails_on_too_little_coverage_and_still_ends_with_the_counts(
    monkeypatch: pytest.MonkeyPatch, capsys: Any, tmp_path: Path
) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv(run.SOURCES_ENV, _folders(tmp_path, "master"))
    _legs(monkeypatch, {"stand-in": 0, "real": 0})
    enforced: list[bool] = []

    def too_little(data: Path, enforce: bool) -> bool:
        enforced.append(enforce)
        return not enforce

    monkeypatch.setattr(run, "report_coverage", too_little)
    assert run.main([]) == 1
    assert run.main(["-k", "cli"]) == 0
    assert enforced == [True, False], "only a run of every test is held to the minimum"
    assert capsys.readouterr().out.splitlines()[-1] == "tests: 2 passed, 0 failed, 0 skipped"


def test_without_chromium_on_the_path_a_view_test_fails_saying_what_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(pytest.fail.Exception) as failed, view_harness.headless_chromium():
        pass
    assert "apt-get install chromium chromium-driver" in str(failed.value)


def test_npm_ci_looks_for_the_tree_and_installs_under_a_lock_other_test_processes_wait_for(tmp_path: Path) -> None:
    """Under xdist each worker runs the install fixtures: one installs, the others wait and find the tree."""
    held_by_the_caller: list[bool] = []

    def installed() -> bool:
        try:
            FileLock(lock_path(tmp_path), timeout=0).acquire()
        except Timeout:
            held_by_the_caller.append(True)
        return True

    npm_ci(tmp_path, installed)
    assert held_by_the_caller == [True], "npm_ci looked for the tree without holding the folder's lock"


def test_each_test_process_keeps_its_seal_key_and_sign_ins_in_a_folder_of_its_own() -> None:
    """xdist workers run side by side: none shares, or touches, the user's ~/.knime-mcp."""
    from knime_mcp.auth.store import oauth_dir
    from knime_mcp.seal import KEY_FILE_ENV

    for path in (oauth_dir(), Path(os.environ[KEY_FILE_ENV])):
        assert Path(tempfile.gettempdir()) in path.parents and Path.home() / ".knime-mcp" not in path.parents, path
