"""The test command: pytest on the headless stand-in, then the node tests on each of KNIME's real Python APIs.

    python tests/run.py [pytest arguments]

Leg 1 runs ``python -m pytest`` (every test, ``knime.extension`` from ``tests/knext_host``). Then one real leg per
folder of KNIME's sources (``KNIME_PYTHON_SOURCES``, by default master's and 5.5.3's: see
``tests/real_knime/sources.py``) runs ``python -m pytest -m knime_node`` with ``KNIME_MCP_TEST_API=real`` on that
folder, when it is found. Arguments go to every leg. Exits non-zero if a leg fails, also when a real leg finds no test
to run, and ends with one line of combined counts.
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

from real_knime.sources import API_ENV, SOURCES_ENV, sources_dirs  # noqa: E402


@dataclass
class Counts:
    passed: int = 0
    failed: int = 0
    skipped: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.passed + other.passed, self.failed + other.failed, self.skipped + other.skipped)


def run_leg(name: str, env: dict[str, str], pytest_args: list[str], report: Path) -> tuple[int, Counts]:
    """Run pytest for one leg with ``env`` added to the environment; its exit code and its counts from the JUnit XML
    report."""
    command = [sys.executable, "-m", "pytest", *pytest_args, "-p", "no:cacheprovider", f"--junitxml={report}"]
    said = " ".join(f"{key}={value}" for key, value in env.items())
    print(f"== {name}: {said} {' '.join(command[1:])}", flush=True)
    started = time.monotonic()
    code = subprocess.run(command, env={**os.environ, **env}).returncode
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
    """Every leg; in CI (``CI`` set) a missing real leg, or a skip in one, fails the command: no node test may skip
    under KNIME's real API."""
    in_ci = bool(os.environ.get("CI"))
    with tempfile.TemporaryDirectory(prefix="knime-mcp-tests-") as folder:
        reports = Path(folder)
        code, total = run_leg("leg 1 (stand-in)", {API_ENV: "stand-in"}, arguments, reports / "stand-in.xml")
        for number, sources in enumerate(sources_dirs(), start=2):
            name = f"leg {number} (real KNIME, {sources.name})"
            if not sources.is_dir():
                print(f"{name} not run: {sources} not found; set {SOURCES_ENV}")
                code = code or int(in_ci)
                continue
            env = {API_ENV: "real", SOURCES_ENV: str(sources)}
            real_code, real = run_leg(name, env, ["-m", "knime_node", *arguments], reports / f"real-{number}.xml")
            if real.skipped and in_ci:
                print(f"{name} skipped {real.skipped} test(s): no node test may skip under the real API")
                real_code = real_code or 1
            code, total = code or real_code, total + real
    print(f"tests: {total.passed} passed, {total.failed} failed, {total.skipped} skipped")
    return 1 if code else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
