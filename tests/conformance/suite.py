"""Test layer: the official MCP conformance suite's client scenarios against knime-mcp (tests/conformance/client.py).

Both pinned versions (tests/peers/package.json) run every client scenario, each in its own run of the suite
(``conformance client --scenario NAME``), a few at a time; a scenario passes when none of its checks failed or warned,
the suite's own verdict. Every listen binds 127.0.0.1 (loopback.cjs), results and token stores go to a temporary
folder, and each run's processes are stopped when it ends. ``expected-failures.yaml`` lists what fails now, by
scenario and version, with the reason; :func:`judge` says what differs from it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import yaml

from fixtures.processes import log_tail, spawn

HERE = Path(__file__).resolve().parent
PEERS = HERE.parent / "peers"
VERSIONS = {"0.1.16": "conformance-0.1", "0.2.0-alpha.12": "conformance-0.2"}
"""Each pinned version of @modelcontextprotocol/conformance, by the npm alias it is installed under."""
EXPECTED_FAILURES = HERE / "expected-failures.yaml"
CLIENT = HERE / "client.py"

WORKERS = 4
"""Scenario runs at once. Each is a node and a Python process that mostly wait on each other; the 74 runs take about
140 s of CPU, so 4 at a time keep 2 cores busy: 71 s (138 s while other work loaded the machine). The suite's own
--suite runs all of a version at once, 98 s for both, and then its timing checks (sse-retry's reconnection delay,
authorization-server-migration) failed."""
RUN_TIMEOUT = 120.0
"""Seconds one scenario's run may take, the suite's own 30 s client timeout included, before it is stopped."""

_SCENARIO_LINE = re.compile(r"^\s+- (\S+) \[")


@dataclass(frozen=True)
class Outcome:
    """One scenario's result in one version: passed, or why not (its failed and warned checks, or the run's end)."""

    version: str
    scenario: str
    passed: bool
    detail: str


def node_command(version: str, *arguments: str) -> list[str]:
    """The suite's command line, with loopback binding and its Node.js 20 shim preloaded."""
    entry = PEERS / "node_modules" / VERSIONS[version] / "dist" / "index.js"
    preloads = ["--require", str(HERE / "loopback.cjs"), "--import", (HERE / "node20.mjs").as_uri()]
    return ["node", *preloads, str(entry), *arguments]


def client_scenarios(version: str) -> list[str]:
    """Every client scenario the version lists."""
    listed = subprocess.run(
        node_command(version, "list", "--client"), capture_output=True, text=True, check=True, timeout=RUN_TIMEOUT
    )
    return [match.group(1) for line in listed.stdout.splitlines() if (match := _SCENARIO_LINE.match(line))]


def run_scenario(version: str, scenario: str, folder: Path) -> Outcome:
    """Run one scenario of one version with knime-mcp as the client; results, logs and tokens go into ``folder``."""
    folder.mkdir(parents=True)
    client = shlex.join([sys.executable, str(CLIENT)])
    arguments = ["client", "--command", client, "--scenario", scenario, "-o", str(folder / "results")]
    log, tokens = folder / "suite.log", {"KNIME_MCP_OAUTH_DIR": str(folder / "oauth")}
    process = spawn(node_command(version, *arguments), log, env=tokens, cwd=folder)
    try:
        process.wait(timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        return Outcome(version, scenario, False, f"the run did not end within {RUN_TIMEOUT:g} s")
    finally:
        _stop_group(process)
    return _verdict(version, scenario, folder, log)


def _stop_group(process: subprocess.Popen[bytes]) -> None:
    """Kill whatever of the run is left (a client the suite lost track of), then reap the suite's process."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def _verdict(version: str, scenario: str, folder: Path, log: Path) -> Outcome:
    found = sorted((folder / "results").glob("**/checks.json"))
    if not found:
        return Outcome(version, scenario, False, f"no checks.json; the suite said: {log_tail(log)}")
    checks = json.loads(found[-1].read_text())
    bad = [check for check in checks if check.get("status") in ("FAILURE", "WARNING")]
    detail = "; ".join(f"{check['id']} {check['status']}: {check.get('errorMessage') or ''}".strip() for check in bad)
    return Outcome(version, scenario, not bad, detail[:600])


def run_all(versions: Iterable[str], folder: Path, workers: int = WORKERS) -> list[Outcome]:
    """Every client scenario of ``versions``, ``workers`` at a time."""
    jobs = [(version, scenario) for version in versions for scenario in client_scenarios(version)]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [
            pool.submit(run_scenario, version, scenario, folder / f"{version}-{index}")
            for index, (version, scenario) in enumerate(jobs)
        ]
        return [future.result() for future in futures]


def expected_failures(path: Path = EXPECTED_FAILURES) -> dict[tuple[str, str], str]:
    """The listed failures: (version, scenario) to the reason."""
    listed = yaml.safe_load(path.read_text()) or {}
    return {(version, scenario): why for scenario, versions in listed.items() for version, why in versions.items()}


def judge(outcomes: Iterable[Outcome], expected: Mapping[tuple[str, str], str]) -> list[str]:
    """What differs from the expected failures: a failure not listed, a listed scenario that passes (the list must
    shrink), a listed scenario no version runs."""
    problems, seen = [], set()
    for outcome in outcomes:
        key = (outcome.version, outcome.scenario)
        seen.add(key)
        if not outcome.passed and key not in expected:
            problems.append(f"{outcome.scenario} ({outcome.version}) fails and is not expected to: {outcome.detail}")
        elif outcome.passed and key in expected:
            problems.append(
                f"{outcome.scenario} ({outcome.version}) passes now: remove it from {EXPECTED_FAILURES.name}"
            )
    for version, scenario in sorted(set(expected) - seen):
        problems.append(f"{scenario} ({version}) is listed in {EXPECTED_FAILURES.name} but was not run: remove it")
    return problems


def table(outcomes: Iterable[Outcome], expected: Mapping[tuple[str, str], str]) -> str:
    """Every outcome as a line: scenario, version, pass or fail, and why."""
    lines = []
    for outcome in sorted(outcomes, key=lambda o: (o.scenario, o.version)):
        why = expected.get((outcome.version, outcome.scenario)) or outcome.detail
        lines.append(f"{outcome.scenario:45} {outcome.version:15} {'pass' if outcome.passed else 'FAIL'}  {why}")
    return "\n".join(lines)
