"""`call`, `call-table` and `agent` with tools from a tools file (`--tools FILE`) or an OpenAPI document
(`--openapi SOURCE`): HTTP tools are called as MCP tools are, through the dispatcher the nodes use, and a tools file
is data whose servers are checked unless sealed on this machine."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from cli_runs import run_cli
from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer, tool_calls


@pytest.fixture
def api_document(http_api_url: str) -> str:
    return f"{http_api_url}/openapi.json"


def _written_tools(capsys: pytest.CaptureFixture[str], document: str, path: Path, fmt: str) -> Path:
    """The tools file `http-tools --format FMT` writes, as a person lists tools on this machine."""
    argv = ["http-tools", document, "--format", fmt, "--output", str(path)]
    code, _, err = run_cli(capsys, *argv)
    assert code == 0, err
    return path


def test_call_calls_an_http_tool_of_an_openapi_document(capsys: pytest.CaptureFixture[str], api_document: str) -> None:
    code, out, err = run_cli(capsys, "call", "--openapi", api_document, "getPet", "--args", '{"pet_id": "42"}')
    assert code == 0, err
    assert json.loads(out)["structured"]["pet_id"] == "42"


def test_call_sends_the_apis_credential_from_the_environment(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, api_document: str, auth_token: str
) -> None:
    monkeypatch.setenv("KNIME_MCP_TEST_API_TOKEN", auth_token)
    pet = {"name": "Rex", "species": "dog", "owner": {"name": "Ann", "address": {"city": "Konstanz"}}}
    argv = ["call", "--openapi", api_document, "createPet", "--args", json.dumps({"body": pet})]
    refused, _, _ = run_cli(capsys, *argv)
    code, out, err = run_cli(capsys, *argv, "--auth", "bearer", "--secret", "${KNIME_MCP_TEST_API_TOKEN}")
    assert refused == 4
    assert code == 0, err
    assert json.loads(out)["structured"]["id"] == 7 and auth_token not in out + err


@pytest.mark.parametrize("fmt", ["json", "parquet", "arrow"])
def test_call_calls_an_http_tool_of_a_tools_file_written_by_http_tools(
    capsys: pytest.CaptureFixture[str], api_document: str, tmp_path: Path, fmt: str
) -> None:
    tools = _written_tools(capsys, api_document, tmp_path / f"tools.{fmt}", fmt)
    code, out, err = run_cli(capsys, "call", "--tools", str(tools), "getPetCard", "--args", '{"pet_id": 3}')
    assert code == 0, err
    assert json.loads(out)["content"][0]["text"] == "Pet 3\nA good pet."


def test_call_calls_an_mcp_tool_of_a_tools_file(
    capsys: pytest.CaptureFixture[str], demo_http_url: str, tmp_path: Path
) -> None:
    path = tmp_path / "tools.json"
    assert run_cli(capsys, "tools", demo_http_url, "--format", "json", "--output", str(path))[0] == 0
    code, out, err = run_cli(capsys, "call", "--tools", str(path), "add", "--args", '{"a": 1, "b": 2}')
    assert code == 0, err
    assert json.loads(out)["structured"] == {"result": 3}


def test_a_tools_file_from_elsewhere_is_data_unless_all_servers_are_trusted(
    capsys: pytest.CaptureFixture[str], api_document: str, tmp_path: Path
) -> None:
    # Given a tools file whose seals do not fit (written on another machine, or edited)
    path = _written_tools(capsys, api_document, tmp_path / "tools.json", "json")
    tools = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps([{**tool, "seal": None} for tool in tools]), encoding="utf-8")
    argv = ["call", "--tools", str(path), "getPetCard", "--args", '{"pet_id": 3}']
    # When it is called as it is, and with every server trusted
    refused, out, err = run_cli(capsys, *argv)
    trusted, trusted_out, _ = run_cli(capsys, *argv, "--trust-all-servers")
    # Then its loopback server is refused before anything connects, with the flag that trusts it named
    assert refused == 3 and out == ""
    assert "--trust-all-servers" in err and "node setting" not in err
    assert trusted == 0 and json.loads(trusted_out)["content"][0]["text"].startswith("Pet 3")


def test_call_table_calls_an_http_tool_for_every_row(
    capsys: pytest.CaptureFixture[str], api_document: str, tmp_path: Path
) -> None:
    source = tmp_path / "pets.csv"
    source.write_text("pet_id\n1\n2\n", encoding="utf-8")
    output = tmp_path / "cards.parquet"
    argv = ["call-table", "--openapi", api_document, "getPetCard", "--input", str(source), "--output", str(output)]
    code, out, err = run_cli(capsys, *argv)
    assert code == 0, err
    assert "2 rows called" in out
    assert [text.splitlines()[0] for text in pq.read_table(output).column("Result").to_pylist()] == ["Pet 1", "Pet 2"]


def test_call_table_takes_a_tools_file(capsys: pytest.CaptureFixture[str], api_document: str, tmp_path: Path) -> None:
    tools = _written_tools(capsys, api_document, tmp_path / "tools.parquet", "parquet")
    source = tmp_path / "pets.csv"
    source.write_text("pet_id\n5\n", encoding="utf-8")
    output = tmp_path / "cards.parquet"
    argv = ["call-table", "--tools", str(tools), "getPetCard", "--input", str(source), "--output", str(output)]
    code, _, err = run_cli(capsys, *argv)
    assert code == 0, err
    assert pq.read_table(output).column("Result").to_pylist()[0].startswith("Pet 5")


def test_agent_calls_http_tools_of_a_tools_file_without_any_server(
    capsys: pytest.CaptureFixture[str], api_document: str, tmp_path: Path
) -> None:
    tools = _written_tools(capsys, api_document, tmp_path / "tools.json", "json")
    script = [tool_calls(("c1", "getPetCard", {"pet_id": 9})), answer("Pet 9 is a good pet.")]
    with FakeOpenAIEndpoint(script) as endpoint:
        argv = ["agent", "--base-url", endpoint.base_url, "--model", "fake", "--tools", str(tools), "--prompt", "Hi"]
        code, out, err = run_cli(capsys, *argv, "--format", "json")
    assert code == 0, err
    offered = {spec["function"]["name"] for spec in endpoint.requests[0]["tools"]}
    assert "getPetCard" in offered and "echo" not in offered  # tools from the file only, not the demo server's
    (call,) = json.loads(out)["tool_calls"]
    assert call["tool"] == "getPetCard" and call["status"] == "ok" and "Pet 9" in call["result"]


def test_agent_takes_an_openapi_document_besides_a_server(
    capsys: pytest.CaptureFixture[str], api_document: str, demo_http_url: str
) -> None:
    script = [tool_calls(("c1", "getPetCard", {"pet_id": 4}), ("c2", "add", {"a": 1, "b": 1})), answer("Done.")]
    with FakeOpenAIEndpoint(script) as endpoint:
        argv = ["agent", "--base-url", endpoint.base_url, "--model", "fake", demo_http_url, "--openapi", api_document]
        code, out, err = run_cli(capsys, *argv, "--prompt", "Hi", "--format", "json")
    assert code == 0, err
    assert [call["status"] for call in json.loads(out)["tool_calls"]] == ["ok", "ok"]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["call", "--tools", "t.json", "--openapi", "doc.json", "echo"], "either"),
        (["call", "http://127.0.0.1:1/mcp", "echo", "--openapi", "doc.json"], "either"),
        (["call", "--tools", "/nonexistent/tools.json", "echo"], "does not exist"),
        (["call", "http://127.0.0.1:1/mcp", "echo", "--auth", "bearer", "--secret", "${X}"], "goes with --openapi"),
        (["call", "--openapi", "doc.json", "echo", "--auth", "oauth"], "--auth oauth"),
        (["call", "http://127.0.0.1:1/mcp", "echo", "--base-url", "http://127.0.0.1:1"], "--openapi"),
        (["call", "--openapi", "doc.json", "echo", "--auth", "bearer", "--secret", "sk-literal"], "environment"),
        (["call", "http://127.0.0.1:1/mcp", "echo", "--trust-all-servers"], "--tools"),
    ],
)
def test_source_usage_errors_are_said_before_reading_anything(
    capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    code, _, err = run_cli(capsys, *argv)
    assert code == 2 and said in err and "sk-literal" not in err
