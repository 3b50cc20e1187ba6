"""The test command: pytest on the headless stand-in, then the node tests on KNIME's real Python API.

    python tests/run.py [pytest arguments]

Leg 1 runs ``python -m pytest`` (every test, ``knime.extension`` from ``tests/knext_host``). Leg 2 runs
``python -m pytest -m knime_node`` with ``KNIME_MCP_TEST_API=real`` (the node tests, on KNIME's own sources), when
the sources are found (``KNIME_PYTHON_SOURCES``, see ``tests/real_knime/sources.py``). Arguments go to both legs.
Exits non-zero if a leg fails, also when leg 2 finds no test to run, and ends with one line of combined counts.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_knime.sources import API_ENV, SOURCES_ENV, sources_dir  # noqa: E402


@dataclass
class Counts:
    passed: int = 0
    failed: int = 0
    skipped: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.passed + other.passed, self.failed + other.failed, self.skipped + other.skipped)


def run_leg(name: str, api: str, pytest_args: list[str], report: Path) -> tuple[int, Counts]:
    """Run pytest for one leg; its exit code and its counts from the JUnit XML report."""
    command = [sys.executable, "-m", "pytest", *pytest_args, "-p", "no:cacheprovider", f"--junitxml={report}"]
    print(f"== {name}: {API_ENV}={api} {' '.join(command[1:])}", flush=True)
    started = time.monotonic()
    code = subprocess.run(command, env={**os.environ, API_ENV: api}).returncode
    print(f"== {name}: exit code {code} after {time.monotonic() - started:.0f} s", flush=True)
    return code, counts(report)


def counts(report: Path) -> Counts:
    """Passed, failed (failures and errors) and skipped tests of a JUnit XML report; none if there is no report."""
    if not report.exists():
        return Counts()
    total = Counts()
    for suite in ElementTree.parse(report).getroot().iter("testsuite"):
        tests, failed, skipped = (int(suite.get(key, 0)) for key in ("tests", "failures", "skipped"))
        failed += int(suite.get("errors", 0))
        total += Counts(tests - failed - skipped, failed, skipped)
    return total


def main(arguments: list[str]) -> int:
    """Both legs; in CI (``CI`` set) a missing real leg, or a skip in it, fails the command: no node test may skip
    under KNIME's real API."""
    in_ci = bool(os.environ.get("CI"))
    with tempfile.TemporaryDirectory(prefix="knime-mcp-tests-") as folder:
        reports = Path(folder)
        code, total = run_leg("leg 1 (stand-in)", "stand-in", arguments, reports / "stand-in.xml")
        sources = sources_dir()
        if sources.is_dir():
            real_arguments = ["-m", "knime_node", *arguments]
            real_code, real = run_leg("leg 2 (real KNIME)", "real", real_arguments, reports / "real.xml")
            if real.skipped and in_ci:
                print(f"leg 2 (real KNIME) skipped {real.skipped} test(s): no node test may skip under the real API")
                real_code = real_code or 1
            code, total = code or real_code, total + real
        else:
            print(f"real KNIME leg not run: {sources} not found; set {SOURCES_ENV}")
            code = code or int(in_ci)
    print(f"tests: {total.passed} passed, {total.failed} failed, {total.skipped} skipped")
    return 1 if code else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
