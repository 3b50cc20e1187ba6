"""`knime-mcp http-tools`: an OpenAPI document's operations, and webhooks from a CSV file, as a tools table."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from cli_runs import run_cli
from knime_mcp.tools.arrow import tools_from_arrow


def test_http_tools_prints_the_documents_operations_as_text(
    capsys: pytest.CaptureFixture[str], oas_examples: Path
) -> None:
    code, out, err = run_cli(capsys, "http-tools", str(oas_examples / "3.0/json/petstore.json"), "--include", "Pet")
    assert code == 0
    assert "getPetById" in out and "loginUser" not in out
    assert "Note: updatePetWithForm: its optional request body" in err
    # The server the document names, which the tools will call, is named too
    assert "Note: The tools of 20 operations" in err and "call http://petstore.swagger.io/v2" in err


def test_http_tools_sends_a_credential_to_the_server_a_document_file_names_only_as_base_url(
    capsys: pytest.CaptureFixture[str], oas_examples: Path
) -> None:
    source = str(oas_examples / "3.0/json/petstore.json")
    code, _, err = run_cli(capsys, "http-tools", source, "--auth", "bearer", "--secret", "${PETSTORE_KEY}")
    assert code != 0 and "Pass --base-url http://petstore.swagger.io/v2" in err and "Base URL" not in err


def test_http_tools_writes_json_with_the_base_url_prefix_and_api_key_auth(
    capsys: pytest.CaptureFixture[str], oas_examples: Path
) -> None:
    source = str(oas_examples / "3.0/json/petstore.json")
    argv = ["http-tools", source, "--format", "json", "--prefix", "shop", "--base-url", "http://127.0.0.1:8080/v2"]
    code, out, _ = run_cli(capsys, *argv, "--exclude", "User", "--auth", "header", "--secret", "${PETSTORE_KEY}")
    tools = json.loads(out)
    assert code == 0 and tools[0]["name"] == "shop_updatePet"
    assert {tool["server"]["target"] for tool in tools} == {"http://127.0.0.1:8080/v2"}
    assert tools[0]["server"]["auth"]["header"] == "api_key" and tools[0]["http"]["method"] == "PUT"
    assert not any("User" in tool["name"] for tool in tools)


def test_http_tools_adds_webhooks_from_a_csv_file_to_parquet(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    hooks = tmp_path / "hooks.csv"
    schema = json.dumps({"type": "object", "properties": {"text": {"type": "string"}}}).replace('"', '""')
    hooks.write_text(f'Name,URL,Input Schema\nnotify,https://hooks.example.com/T1,"{schema}"\n', encoding="utf-8")
    output = tmp_path / "tools.parquet"
    code, _, _ = run_cli(capsys, "http-tools", "--webhooks", str(hooks), "--format", "parquet", "--output", str(output))
    (tool,) = tools_from_arrow(pq.read_table(output))
    assert code == 0 and tool.name == "notify" and tool.http is not None and tool.http.method == "POST"


def test_a_bad_webhook_line_is_named(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    hooks = tmp_path / "hooks.csv"
    hooks.write_text("Name,URL\nok,https://x.example.com\nbroken,\n", encoding="utf-8")
    code, _, err = run_cli(capsys, "http-tools", "--webhooks", str(hooks))
    assert code == 3 and "Webhook line 3: no URL" in err


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        ([], "needs an OpenAPI document (SOURCE), --base-url URL to find one at, --webhooks FILE.csv"),
        (["doc.json", "--auth", "bearer", "--secret", "abc"], "needs --secret as an environment reference"),
        (["doc.json", "--secret", "${X}"], "go with --auth"),
        (["doc.json", "--format", "arrow"], "--format arrow needs --output FILE"),
        (["doc.json", "--include", "("], "--include '(' is not a valid regular expression"),
    ],
)
def test_usage_errors_are_said_before_reading_anything(
    capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    code, _, err = run_cli(capsys, "http-tools", *argv)
    assert code == 2 and said in err


def test_a_swagger_document_exits_with_a_config_error_saying_how_to_convert(
    capsys: pytest.CaptureFixture[str], oas_examples: Path
) -> None:
    code, _, err = run_cli(capsys, "http-tools", str(oas_examples / "2.0/json/petstore.json"))
    assert code == 3 and "swagger2openapi" in err


def test_the_fastapi_document_is_read_over_http(capsys: pytest.CaptureFixture[str], http_api_url: str) -> None:
    code, out, _ = run_cli(capsys, "http-tools", f"{http_api_url}/openapi.json", "--format", "json", "--include", "Pet")
    assert code == 0 and [tool["name"] for tool in json.loads(out)][:2] == ["listPets", "createPet"]


def test_http_tools_takes_the_tool_policy_options(capsys: pytest.CaptureFixture[str], oas_examples: Path) -> None:
    source = str(oas_examples / "3.0/json/petstore.json")
    code, out, err = run_cli(capsys, "http-tools", source, "--format", "json", "--destructive", "read-only")
    methods = {tool["http"]["method"] for tool in json.loads(out)}
    assert code == 0 and methods == {"GET"} and "deletePet" in err
    code, out, _ = run_cli(capsys, "http-tools", source, "--format", "json", "--deny", "^(delete|update)")
    assert code == 0 and not [tool for tool in json.loads(out) if tool["name"].startswith(("delete", "update"))]


def test_http_tools_reads_no_document_larger_than_max_document_mb(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    big = tmp_path / "openapi.json"
    big.write_text(json.dumps({"openapi": "3.0.3", "paths": {}, "x-padding": "x" * 2**20}))
    code, _, err = run_cli(capsys, "http-tools", str(big), "--max-document-mb", "1")
    assert code != 0 and "larger than 1 MB" in err
    assert run_cli(capsys, "http-tools", str(big), "--max-document-mb", "2")[0] == 0


def test_tools_renamed_for_a_clash_are_one_note_naming_each_tools_server_and_prefix(
    capsys: pytest.CaptureFixture[str], http_api_url: str
) -> None:
    # Given an API whose document gives several operations the same name
    code, _, err = run_cli(capsys, "http-tools", f"{http_api_url}/openapi.json", "--format", "json")
    # Then one note lists the renamed tools, says which server each one and the tool it clashes with are from, and
    # names --prefix
    renamed = [line for line in err.splitlines() if "renamed" in line]
    assert code == 0 and len(renamed) == 1, err
    assert "--prefix" in renamed[0] and "name prefix per server" not in renamed[0]
    assert renamed[0].count("of Pet store test API") >= 2


def test_call_openapi_file_of_a_local_api_says_to_give_base_url(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, http_api_url: str
) -> None:
    import urllib.request

    # Given the local pet store API's document saved to a file
    document = tmp_path / "api.json"
    with urllib.request.urlopen(f"{http_api_url}/openapi.json", timeout=30) as answer:
        document.write_bytes(answer.read())
    argv = ["call", "--openapi", str(document), "getPet", "--args", '{"pet_id": "1"}']
    # When a tool of it is called, Then the refusal says how to call the API there, in the command line's words
    code, _, err = run_cli(capsys, *argv)
    assert code == 3 and f"--base-url {http_api_url}" in err, err
    for knime_words in ("Base URL", "Tool Provider", "KNIME credential", "caller nodes", "node setting"):
        assert knime_words not in err
    # And with --base-url the API is called there
    code, out, err = run_cli(capsys, *argv, "--base-url", http_api_url)
    assert code in (0, 4) and "--base-url" not in err, err
