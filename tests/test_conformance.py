"""The official MCP conformance suite (``@modelcontextprotocol/conformance`` 0.1.16 and 0.2.0-alpha.12): every client
scenario against knime-mcp's public API (tests/conformance/client.py), on loopback, a few at a time
(tests/conformance/suite.py). A scenario that fails and is not in tests/conformance/expected-failures.yaml fails the
test, and so does a listed one that passes now."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conformance.suite import (
    EXPECTED_FAILURES,
    HERE,
    PEERS,
    VERSIONS,
    Outcome,
    client_scenarios,
    expected_failures,
    judge,
    run_all,
    table,
)
from fixtures.npm_servers import NodePeers, _install_peers

SCENARIOS = {"0.1.16": 26, "0.2.0-alpha.12": 48}
"""How many client scenarios each pinned version has: 74 in all."""


@pytest.fixture(scope="module")
def suite(npm_peers: NodePeers) -> None:
    """The pinned suites installed (``npm ci`` when a tree from before them has the other peers only)."""
    _install_peers(
        lambda: all((PEERS / "node_modules" / alias / "dist" / "index.js").is_file() for alias in VERSIONS.values())
    )


@pytest.fixture(scope="module")
def outcomes(suite: None, tmp_path_factory: pytest.TempPathFactory) -> list[Outcome]:
    """Every client scenario of both versions, run once for the module; results go to a temporary folder."""
    return run_all(VERSIONS, tmp_path_factory.mktemp("conformance"))


@pytest.mark.timeout(900)
@pytest.mark.parametrize("version", VERSIONS)
def test_client_scenarios_fail_only_as_expected(outcomes: list[Outcome], version: str) -> None:
    mine = [outcome for outcome in outcomes if outcome.version == version]
    expected = {key: why for key, why in expected_failures().items() if key[0] == version}
    problems = judge(mine, expected)
    passed = sum(outcome.passed for outcome in mine)
    print(f"{version}: {passed} of {len(mine)} scenarios pass\n{table(mine, expected)}")
    assert not problems, "\n".join([*problems, "", f"{passed} of {len(mine)} pass:", table(mine, expected)])


def test_both_versions_list_every_client_scenario(suite: None) -> None:
    """The suite runs on this Node.js (node20.mjs gives Node.js 20 what the bundle imports) and lists 74 scenarios."""
    assert {version: len(client_scenarios(version)) for version in VERSIONS} == SCENARIOS


def test_expected_failures_name_known_versions_with_a_reason() -> None:
    listed = expected_failures()
    assert {version for version, _ in listed} <= set(VERSIONS)
    assert all(isinstance(why, str) and why.strip() for why in listed.values())


def _outcome(scenario: str, passed: bool) -> Outcome:
    return Outcome("0.1.16", scenario, passed, "" if passed else "token-request FAILURE: no token request")


def test_an_unexpected_failure_is_named_with_its_failed_checks() -> None:
    problems = judge([_outcome("auth/dpop", False)], {})
    assert problems == ["auth/dpop (0.1.16) fails and is not expected to: token-request FAILURE: no token request"]


def test_a_listed_scenario_that_passes_must_leave_the_list() -> None:
    problems = judge([_outcome("auth/dpop", True)], {("0.1.16", "auth/dpop"): "no DPoP"})
    assert problems == [f"auth/dpop (0.1.16) passes now: remove it from {EXPECTED_FAILURES.name}"]


def test_a_listed_scenario_that_no_version_runs_must_leave_the_list() -> None:
    problems = judge([_outcome("initialize", True)], {("0.1.16", "auth/gone"): "renamed"})
    assert problems == [f"auth/gone (0.1.16) is listed in {EXPECTED_FAILURES.name} but was not run: remove it"]


def test_an_expected_failure_that_still_fails_is_fine() -> None:
    assert judge([_outcome("auth/dpop", False)], {("0.1.16", "auth/dpop"): "no DPoP"}) == []


def test_the_suite_listens_on_loopback_only_with_its_port_known_at_once(npm_peers: NodePeers, tmp_path: Path) -> None:
    """The scenarios read ``server.address().port`` right after ``listen(0)``; with loopback.cjs it is there, and
    the address is 127.0.0.1."""
    script = "const s = require('http').createServer(); s.listen(0); console.log(JSON.stringify(s.address()));"
    script += " s.close()"
    shown = subprocess.run(
        [npm_peers.node, "--require", str(HERE / "loopback.cjs"), "-e", script],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout  # fmt: skip
    assert '"address":"127.0.0.1"' in shown
    assert '"port":0' not in shown
