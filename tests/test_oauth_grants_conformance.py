"""The official MCP conformance suite's scenarios of the JWT bearer grants, run against knime-mcp's adapter
(tests/conformance/client.py): workload identity (``auth/wif-jwt-bearer``) and enterprise-managed authorization
(``auth/cross-app-access-complete-flow`` in 0.1.16, ``auth/enterprise-managed-authorization`` in 0.2.0-alpha.12).

The suite starts its own authorization server, identity provider and MCP server on loopback for each scenario.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fixtures.npm_servers import PEERS_DIR, NodePeers

CONFORMANCE_DIR = Path(__file__).resolve().parent / "conformance"


@pytest.mark.parametrize(
    ("suite", "scenario"),
    [
        ("conformance-0.2", "auth/wif-jwt-bearer"),
        ("conformance-0.2", "auth/enterprise-managed-authorization"),
        ("conformance-0.1", "auth/cross-app-access-complete-flow"),
    ],
)
def test_the_conformance_suite_passes_the_jwt_bearer_grant_scenarios(
    npm_peers: NodePeers, tmp_path: Path, suite: str, scenario: str
) -> None:
    client = f"{sys.executable} {CONFORMANCE_DIR / 'client.py'}"
    command = [
        npm_peers.node, "--import", str(CONFORMANCE_DIR / "node20.mjs"),
        str(PEERS_DIR / "node_modules" / suite / "dist" / "index.js"),
        "client", "--command", client, "--scenario", scenario,
    ]  # fmt: skip
    env = {**os.environ, "KNIME_MCP_OAUTH_DIR": str(tmp_path / "oauth")}
    run = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)
    report = run.stdout + run.stderr  # the suite writes its report to stderr
    assert run.returncode == 0 and "OVERALL: PASSED" in report and " 0 failed, 0 warnings" in report, report[-4000:]
