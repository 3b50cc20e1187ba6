"""DPoP (RFC 9449) on the JWT bearer grants: workload identity and ID-JAG tokens bound to the client's key where the
authorization server offers it, against tests/servers/jwt_bearer_server.py started with ``--dpop`` on loopback.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fixtures.jwt_bearer_servers import IDP_CLIENT, issuer_of, jwt_bearer, signed_jwt
from fixtures.python_servers import RunningServer
from knime_mcp.config import AuthRef, ServerSpec
from knime_mcp.mcp.client import McpClient
from test_oauth_grants import _credentials, _id_jag

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("own_token_folder")]


@pytest.fixture(scope="module")
def dpop_jwt_bearer_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with jwt_bearer(tmp_path_factory.mktemp("jwt-bearer-dpop"), "--dpop") as server:
        yield server


def _log_from(server: RunningServer, start: int) -> list[str]:
    return server.log_path.read_text().splitlines()[start:]


async def _whoami(spec: ServerSpec, **options: object) -> str:
    async with McpClient(spec, **options) as client:  # type: ignore[arg-type]
        return str((await client.call_tool("whoami")).structured["result"])  # type: ignore[index]


def _workload(server: RunningServer, tmp_path: Path, **settings: str) -> ServerSpec:
    token_file = tmp_path / "token"
    token_file.write_text(signed_jwt("workload-1", issuer_of(server)))
    auth = AuthRef(kind="oauth-workload-identity", token_file=str(token_file), **settings)  # type: ignore[arg-type]
    return ServerSpec(target=server.url, auth=auth)


async def test_a_workload_identity_token_is_bound_with_dpop_and_used_with_proofs(
    dpop_jwt_bearer_server: RunningServer, tmp_path: Path
) -> None:
    start = len(_log_from(dpop_jwt_bearer_server, 0))
    assert await _whoami(_workload(dpop_jwt_bearer_server, tmp_path)) == "workload-1"
    log = _log_from(dpop_jwt_bearer_server, start)
    assert "token issued: DPoP" in log and "dpop accepted nonce=no" in log
    assert "bearer presented" not in log and not any("dpop refused" in line for line in log)


async def test_with_dpop_off_the_workload_identity_token_is_a_bearer_token(
    dpop_jwt_bearer_server: RunningServer, tmp_path: Path
) -> None:
    start = len(_log_from(dpop_jwt_bearer_server, 0))
    assert await _whoami(_workload(dpop_jwt_bearer_server, tmp_path, dpop="off")) == "workload-1"
    log = _log_from(dpop_jwt_bearer_server, start)
    assert "token issued: Bearer" in log and "bearer presented" in log and "dpop accepted nonce=no" not in log


async def test_an_id_jag_grant_is_bound_with_dpop_too(dpop_jwt_bearer_server: RunningServer) -> None:
    start = len(_log_from(dpop_jwt_bearer_server, 0))
    id_token = signed_jwt("ada@example.com", IDP_CLIENT)
    assert await _whoami(_id_jag(dpop_jwt_bearer_server), credentials=_credentials(id_token)) == "ada@example.com"
    log = _log_from(dpop_jwt_bearer_server, start)
    assert "token issued: DPoP" in log and "dpop accepted nonce=no" in log
