"""DPoP (RFC 9449) as servers really ask for it, against tests/servers/jwt_bearer_server.py on loopback: a nonce
challenge written in any of the ways RFC 9110 allows, an MCP server's DPoP challenge where the authorization server's
metadata says nothing of DPoP, and the algorithms the servers list; and the ``WWW-Authenticate`` parser itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fixtures.jwt_bearer_servers import jwt_bearer
from fixtures.python_servers import RunningServer
from knime_mcp.auth.challenges import Challenge, challenges
from knime_mcp.mcp.client import McpClient
from test_oauth_grants_dpop import _log_from, _whoami, _workload

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("own_token_folder")]


@pytest.fixture(scope="module", params=["lowercase", "after-bearer", "own-header"])
def nonce_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """An MCP server that wants a DPoP nonce, asking for it in a challenge written as ``request.param`` says."""
    with jwt_bearer(tmp_path_factory.mktemp("dpop-nonce"), "--dpop", "--dpop-nonce", request.param) as server:
        yield server


async def test_a_nonce_asked_for_in_any_form_of_challenge_is_sent_on_a_second_try(
    nonce_server: RunningServer, tmp_path: Path
) -> None:
    # Given a server that asks for a new nonce every third request: in the session, not only at its start
    start = len(_log_from(nonce_server, 0))
    async with McpClient(_workload(nonce_server, tmp_path)) as client:
        for _ in range(3):
            assert (await client.call_tool("whoami")).structured == {"result": "workload-1"}
    log = _log_from(nonce_server, start)
    # Then each refused request was sent again with the nonce, never a new sign-in (that would also get through)
    assert log.count("token issued: DPoP") == 1 and "dpop accepted nonce=yes" in log
    assert sum(line.startswith("dpop refused use_dpop_nonce") for line in log) >= 2


@pytest.mark.parametrize(
    ("options", "algorithm"),
    [
        (["--dpop-unannounced", "--dpop-required", "--dpop-algs", "EdDSA"], "EdDSA"),
        (["--dpop-algs", "ES384 RS256"], "ES384"),
    ],
    ids=["mcp-server-challenge", "authorization-server-metadata"],
)
async def test_dpop_is_used_where_either_server_asks_for_it_with_an_algorithm_it_lists(
    tmp_path: Path, options: list[str], algorithm: str
) -> None:
    # Given an MCP server whose DPoP challenge names EdDSA (its authorization server's metadata says nothing of
    # DPoP), or an authorization server whose metadata lists ES384 and RS256
    with jwt_bearer(tmp_path, "--dpop", *options) as server:
        # When knime-mcp connects, then its token is bound, and the MCP server took its proofs
        assert await _whoami(_workload(server, tmp_path)) == "workload-1"
        log = _log_from(server, 0)
    assert "token issued: DPoP" in log and "dpop accepted nonce=no" in log
    assert f"token request proof signed with {algorithm}" in log
    assert not any(line.startswith("dpop refused invalid_dpop_proof") for line in log)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        (['DPoP error="use_dpop_nonce"'], [Challenge("dpop", {"error": "use_dpop_nonce"})]),
        (["dpop error=use_dpop_nonce"], [Challenge("dpop", {"error": "use_dpop_nonce"})]),
        (
            ['Bearer realm="a, b", DPoP algs="ES256 EdDSA", error="use_dpop_nonce"'],
            [
                Challenge("bearer", {"realm": "a, b"}),
                Challenge("dpop", {"algs": "ES256 EdDSA", "error": "use_dpop_nonce"}),
            ],
        ),
        (
            ["Bearer", 'DPoP   error = "x\\"y" ,, algs=ES256'],
            [Challenge("bearer"), Challenge("dpop", {"error": 'x"y', "algs": "ES256"})],
        ),
        (["Negotiate a+b/c==, Basic"], [Challenge("negotiate", {"": "a+b/c=="}), Challenge("basic")]),
        (['Bearer realm="unterminated', ""], [Challenge("bearer")]),
    ],
    ids=["plain", "lowercase-token-value", "one-header", "two-headers-spaces-empty-elements", "token68", "malformed"],
)
def test_www_authenticate_challenges_are_read_as_rfc_9110_writes_them(
    headers: list[str], expected: list[Challenge]
) -> None:
    assert challenges(headers) == expected
