"""The CLI's resources, read, prompts and prompt commands, run in-process against real servers."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from cli_runs import run_cli

BLOB_TEMPLATE = "demo://resource/dynamic/blob/{resourceId}"


def test_resources_lists_documents_and_templates_as_text_and_json(
    capsys: pytest.CaptureFixture[str], everything_http_url: str
) -> None:
    code, text, _ = run_cli(capsys, "resources", everything_http_url)
    assert code == 0 and "demo://resource/static/document/features.md" in text and BLOB_TEMPLATE in text
    assert text.rstrip().endswith("7 resources, 2 templates")
    code, out, _ = run_cli(capsys, "resources", everything_http_url, "--format", "json")
    listed = json.loads(out)
    assert code == 0 and len(listed["resources"]) == 7
    assert {t["uri_template"] for t in listed["templates"]} >= {BLOB_TEMPLATE}
    assert listed["templates"][0]["variables"] == ["resourceId"]


def test_read_prints_a_text_resource_of_a_stdio_server(
    capsys: pytest.CaptureFixture[str], everything_stdio_command: list[str]
) -> None:
    uri = "demo://resource/static/document/startup.md"
    code, out, _ = run_cli(capsys, "read", "--", *everything_stdio_command, "--", uri)
    assert code == 0 and out.startswith("# Everything Server - Startup Process")


def test_read_fills_a_template_and_shows_binary_contents_as_base64_in_json(
    capsys: pytest.CaptureFixture[str], everything_http_url: str
) -> None:
    code, out, _ = run_cli(
        capsys, "read", everything_http_url, BLOB_TEMPLATE, "--args", '{"resourceId": 5}', "--format", "json"
    )
    (content,) = json.loads(out)
    assert code == 0 and content["uri"] == "demo://resource/dynamic/blob/5"
    assert base64.b64decode(content["blob"]).startswith(b"Resource 5: This is a base64 blob")
    code, text, _ = run_cli(capsys, "read", everything_http_url, "demo://resource/dynamic/blob/5")
    assert code == 0 and "bytes of text/plain; --output FILE writes them" in text


def test_read_writes_binary_contents_to_the_output_file(
    capsys: pytest.CaptureFixture[str], everything_http_url: str, tmp_path: Path
) -> None:
    path = tmp_path / "blob.bin"
    code, out, _ = run_cli(capsys, "read", everything_http_url, "demo://resource/dynamic/blob/6", "--output", str(path))
    assert code == 0 and path.read_bytes().startswith(b"Resource 6: This is a base64 blob") and str(path) in out


def test_read_errors_exit_with_code_4_and_say_what_is_wrong(
    capsys: pytest.CaptureFixture[str], everything_http_url: str
) -> None:
    code, _, unknown = run_cli(capsys, "read", everything_http_url, "demo://nothing/here")
    assert code == 4 and "has no resource at 'demo://nothing/here'" in unknown
    code, _, missing = run_cli(capsys, "read", everything_http_url, BLOB_TEMPLATE)
    assert code == 4 and "needs the argument 'resourceId'" in missing
    code, _, too_big = run_cli(
        capsys, "read", everything_http_url, "demo://resource/dynamic/blob/1", "--max-bytes", "4"
    )
    assert code == 4 and "more than the limit of 4 bytes" in too_big


def test_read_of_a_stdio_server_needs_the_second_double_dash(
    capsys: pytest.CaptureFixture[str], everything_stdio_command: list[str]
) -> None:
    code, _, err = run_cli(capsys, "read", "--", *everything_stdio_command)
    assert code == 2 and "before URI" in err


def test_prompts_lists_names_and_arguments_as_text_and_json(
    capsys: pytest.CaptureFixture[str], everything_sse_url: str
) -> None:
    code, text, _ = run_cli(capsys, "prompts", everything_sse_url)
    assert code == 0 and "city*, state" in text and text.rstrip().endswith("4 prompts")
    code, out, _ = run_cli(capsys, "prompts", everything_sse_url, "--format", "json")
    prompts = {prompt["name"]: prompt for prompt in json.loads(out)}
    assert prompts["args-prompt"]["arguments"][0] == {
        "name": "city",
        "description": "Name of the city",
        "required": True,
    }


def test_prompt_prints_the_messages_as_text_and_json(
    capsys: pytest.CaptureFixture[str], everything_http_url: str
) -> None:
    args = '{"resourceType": "Text", "resourceId": 2}'
    code, text, _ = run_cli(capsys, "prompt", everything_http_url, "resource-prompt", "--args", args)
    assert code == 0 and "user: [resource demo://resource/dynamic/text/2]\nResource 2:" in text
    code, out, _ = run_cli(
        capsys, "prompt", everything_http_url, "args-prompt", "--args", '{"city": "Bern"}', "--format", "json"
    )
    assert code == 0 and json.loads(out)["messages"][0] == {
        "role": "user",
        "content": {"text": "What's weather in Bern?", "type": "text"},
    }


def test_prompt_of_the_demo_server_shows_its_image(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "prompt", "review_chart", "--args", '{"values": "1,2"}')
    assert code == 0 and "user: [image: image/png," in out


def test_prompt_errors_exit_with_code_4_before_anything_is_sent(
    capsys: pytest.CaptureFixture[str], everything_http_url: str
) -> None:
    code, _, missing = run_cli(capsys, "prompt", everything_http_url, "args-prompt")
    assert code == 4 and "needs the argument 'city'; nothing was sent" in missing
    code, _, unknown = run_cli(capsys, "prompt", everything_http_url, "nope")
    assert code == 4 and "has no prompt 'nope'" in unknown and "args-prompt" in unknown
    code, _, usage = run_cli(capsys, "prompt", everything_http_url, "args-prompt", "--args", '{"city": ["a"]}')
    assert code == 2 and "must be text" in usage
