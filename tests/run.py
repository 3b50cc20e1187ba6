"""The test command: pytest on the headless stand-in, then the node tests on each of KNIME's real Python APIs, in
parallel and under coverage.

    python tests/run.py [pytest arguments]

Leg 1 runs ``python -m pytest`` (every test, ``knime.extension`` from ``tests/knext_host``). Then one real leg per
folder of KNIME's sources (``KNIME_PYTHON_SOURCES``, by default master's and 5.5.3's: see
``tests/real_knime/sources.py``) runs ``python -m pytest -m knime_node`` with ``KNIME_MCP_TEST_API=real`` on that
folder, when it is found; the real legs run side by side (:func:`real_leg_workers`), each printing its output in one
piece when it ends. Each leg runs its test files in pytest-xdist workers (:data:`PARALLEL`) under coverage.py, which
also measures every Python child the tests start (``[tool.coverage.run]`` in pyproject.toml). Arguments go to every
leg, after :data:`PARALLEL` and :func:`real_leg_workers` (``-n 0`` runs a leg in one process). Exits non-zero if a leg
fails, also when a real leg finds no test to run, or when a run of every test (no arguments) covers less of
``src/knime_mcp`` than ``fail_under``; ends with the coverage figure and one line of combined counts.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
import xml.etree.ElementTree as ElementTree
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, TextIO

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_knime.sources import API_ENV, SOURCES_ENV, sources_dirs  # noqa: E402

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"
PARALLEL = ["-n", "logical", "--dist", "loadfile", "--durations=20"]
"""One worker per logical CPU: measured on two cores, the tests (their servers' and CLI children's start-up most of all)
keep both busy, and four workers took as long as two with a fifth more CPU time. A file stays in one worker, where
its module-scoped servers start once."""
_KEPT_OUT = ("COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START", "PYTHONDONTWRITEBYTECODE")
"""Not passed on to a leg: what makes a child start measuring (set when this command runs under coverage itself: a
leg starts its own measurement, never a second one), and the wish not to keep compiled modules, which would have
each of the run's Python processes (workers, CLI and server children) compile src/knime_mcp and the tests anew: a
worker's collection of every test took 15 s of CPU instead of 6 (``__pycache__`` folders are ignored by git)."""
MINIMUM_COVERAGE = tomllib.loads(PYPROJECT.read_text())["tool"]["coverage"]["report"]["fail_under"]
"""Percent of src/knime_mcp's lines a run of every test must cover: ``fail_under`` in pyproject.toml."""


@dataclass
class Counts:
    passed: int = 0
    failed: int = 0
    skipped: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.passed + other.passed, self.failed + other.failed, self.skipped + other.skipped)


class Leg(NamedTuple):
    """A leg to run beside others: its name, what it adds to the environment, its pytest arguments, its report."""

    name: str
    env: dict[str, str]
    pytest_args: list[str]
    report: Path


_PRINTING = threading.Lock()
"""Held while a leg that ran beside another prints its output, so that the outputs do not interleave."""


def run_leg(
    name: str, env: dict[str, str], pytest_args: list[str], report: Path, data: Path, log: Path | None = None
) -> tuple[int, Counts]:
    """Run pytest for one leg with ``env`` added to the environment, measuring coverage into ``data``'s folder; its
    exit code and its counts from the JUnit XML report. Its output goes to this command's, or with ``log`` (a leg
    running beside another) to that file, printed whole when the leg ends."""
    pytest_command = ["pytest", *PARALLEL, *pytest_args, "-p", "no:cacheprovider", f"--junitxml={report}"]
    command = [sys.executable, "-m", "coverage", "run", f"--rcfile={PYPROJECT}", "-m", *pytest_command]
    said = " ".join(f"{key}={value}" for key, value in env.items())
    print(f"== {name}: {said} python -m {' '.join(pytest_command)}", flush=True)
    started = time.monotonic()
    leg_env = {**_child_environment(), **env, "COVERAGE_FILE": str(data)}
    if log is None:
        code = subprocess.run(command, env=leg_env).returncode
    else:
        with log.open("wb") as out:
            code = subprocess.run(command, env=leg_env, stdout=out, stderr=subprocess.STDOUT).returncode
    with _PRINTING:
        if log is not None:
            print(f"== {name}: its output\n{log.read_text(errors='replace').rstrip()}")
        print(f"== {name}: exit code {code} after {time.monotonic() - started:.0f} s", flush=True)
    return code, counts(report)


def real_leg_workers(legs: int) -> list[str]:
    """The xdist workers of each of ``legs`` real legs running side by side: the logical CPUs shared out, at least one
    each (two legs on two cores: one worker each). A worker collects every test file and starts its own session's
    servers: on two cores, two legs of one worker each did that half as often as one leg of two after the other (a
    leg's CPU time 251 s instead of 286 s), and left no core idle while one leg waited on its last file."""
    return ["-n", str(max(1, (os.cpu_count() or 1) // max(legs, 1)))]


def run_side_by_side(legs: list[Leg], data: Path) -> list[tuple[int, Counts]]:
    """Run the legs at once, each with its output in a log beside its report; their exit codes and counts, in the
    legs' order."""
    with ThreadPoolExecutor(max_workers=max(len(legs), 1)) as pool:
        started = [pool.submit(run_leg, *leg, data, log=leg.report.with_suffix(".log")) for leg in legs]
        return [leg.result() for leg in started]


def counts(report: Path) -> Counts:
    """Passed, failed (failures and errors) and skipped tests of a JUnit XML report; none if there is no report.
    Deselected tests (``-m``, ``-k``, the stand-in's launcher-only ones) are not in the report."""
    if not report.exists():
        return Counts()
    total = Counts()
    for suite in ElementTree.parse(report).getroot().iter("testsuite"):
        tests, failed, skipped = (int(suite.get(key, 0)) for key in ("tests", "failures", "skipped"))
        failed += int(suite.get("errors", 0))
        total += Counts(tests - failed - skipped, failed, skipped)
    return total


def report_coverage(data: Path, enforce: bool, out: TextIO = sys.stdout) -> bool:
    """Combine what every process of every leg measured into ``data``, print the modules not fully covered (when
    ``enforce``) and the total; False when ``enforce`` and the total is under ``fail_under`` or nothing was measured.
    coverage.py runs as a child: in a process it measures, a second ``Coverage`` spoils that process's own data."""

    def coverage(action: str, *args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "coverage", action, f"--rcfile={PYPROJECT}", f"--data-file={data}", *args]
        return subprocess.run(command, env=_child_environment(), capture_output=True, text=True)

    combined = coverage("combine", "--quiet", str(data.parent))
    table = coverage("report", "--skip-covered", "--sort=cover", "--fail-under=0")
    if combined.returncode or table.returncode:
        print(f"coverage: nothing was measured ({(combined.stdout + table.stdout).strip()})", file=out)
        return not enforce
    total = float(coverage("report", "--format=total", "--fail-under=0").stdout)
    if enforce:
        print(table.stdout.rstrip(), file=out)
    if enforce and total < MINIMUM_COVERAGE:
        print(f"coverage: {total:.1f} % of src/knime_mcp, under the minimum of {MINIMUM_COVERAGE:.0f} %", file=out)
        return False
    print(f"coverage: {total:.1f} % of src/knime_mcp (minimum {MINIMUM_COVERAGE:.0f} % when every test runs)", file=out)
    return True


def _child_environment() -> dict[str, str]:
    """This environment without :data:`_KEPT_OUT`."""
    return {key: value for key, value in os.environ.items() if key not in _KEPT_OUT}


def main(arguments: list[str]) -> int:
    """Every leg; in CI (``CI`` set) a missing real leg, or a skip in one, fails the command: no node test may skip
    under KNIME's real API."""
    in_ci = bool(os.environ.get("CI"))
    with tempfile.TemporaryDirectory(prefix="knime-mcp-tests-") as folder:
        reports = Path(folder)
        data = reports / "coverage" / ".coverage"
        data.parent.mkdir()
        code, total = run_leg("leg 1 (stand-in)", {API_ENV: "stand-in"}, arguments, reports / "stand-in.xml", data)
        found: list[tuple[int, str, Path]] = []
        for number, sources in enumerate(sources_dirs(), start=2):
            name = f"leg {number} (real KNIME, {sources.name})"
            if not sources.is_dir():
                print(f"{name} not run: {sources} not found; set {SOURCES_ENV}")
                code = code or int(in_ci)
                continue
            found.append((number, name, sources))
        real_args = ["-m", "knime_node", *real_leg_workers(len(found)), *arguments]
        real_legs = [
            Leg(name, {API_ENV: "real", SOURCES_ENV: str(sources)}, real_args, reports / f"real-{number}.xml")
            for number, name, sources in found
        ]
        for leg, (real_code, real) in zip(real_legs, run_side_by_side(real_legs, data), strict=True):
            if real.skipped and in_ci:
                print(f"{leg.name} skipped {real.skipped} test(s): no node test may skip under the real API")
                real_code = real_code or 1
            code, total = code or real_code, total + real
        covered = report_coverage(data, enforce=not arguments)
    print(f"tests: {total.passed} passed, {total.failed} failed, {total.skipped} skipped")
    return 1 if code or not covered else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
