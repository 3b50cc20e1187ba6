"""Resources and resource templates through the client, against the npm server-everything over every transport."""

from __future__ import annotations

import base64
import json
import shlex
import sys

import pytest

from fixtures.python_servers import SERVERS_DIR
from knime_mcp import (
    McpClient,
    MCPResourceTemplate,
    ResourceError,
    ServerSpec,
    SyncMcpClient,
    fill_template,
)

pytestmark = pytest.mark.anyio

DOCS = "demo://resource/static/document/"
TEXT_TEMPLATE = "demo://resource/dynamic/text/{resourceId}"
BLOB_TEMPLATE = "demo://resource/dynamic/blob/{resourceId}"


async def test_server_everything_lists_its_documents_and_both_templates(everything_spec: ServerSpec) -> None:
    async with McpClient(everything_spec) as client:
        resources = {resource.uri: resource for resource in await client.list_resources()}
        templates = {template.uri_template: template for template in await client.list_resource_templates()}
    readme = resources[f"{DOCS}features.md"]
    assert len(resources) == 7 and all(uri.startswith(DOCS) for uri in resources)
    assert readme.name == "features.md" and readme.mime_type == "text/markdown" and "features.md" in readme.description
    assert templates.keys() == {TEXT_TEMPLATE, BLOB_TEMPLATE}
    assert templates[BLOB_TEMPLATE].mime_type == "application/octet-stream"
    assert templates[TEXT_TEMPLATE].variables == ["resourceId"]


async def test_reading_a_text_and_a_binary_resource_gives_text_and_decoded_bytes(everything_spec: ServerSpec) -> None:
    async with McpClient(everything_spec) as client:
        templates = {template.uri_template: template for template in await client.list_resource_templates()}
        document = await client.read_resource(f"{DOCS}features.md")
        text = await client.read_resource(templates[TEXT_TEMPLATE].fill({"resourceId": "7"}))
        blob = await client.read_resource(templates[BLOB_TEMPLATE].fill({"resourceId": "8"}))
    assert document[0].mime_type == "text/markdown" and document[0].text and document[0].data is None
    assert text[0].uri == "demo://resource/dynamic/text/7" and text[0].text.startswith(
        "Resource 7: This is a plaintext"
    )
    assert blob[0].text is None and blob[0].data.startswith(b"Resource 8: This is a base64 blob")
    as_json = blob[0].to_dict()
    assert base64.b64decode(as_json["blob"]) == blob[0].data and as_json["size"] == len(blob[0].data)


async def test_an_unknown_uri_says_the_server_has_no_resource_there(everything_spec: ServerSpec) -> None:
    async with McpClient(everything_spec) as client:
        with pytest.raises(ResourceError) as unknown:
            await client.read_resource("demo://no/such/thing")
        with pytest.raises(ResourceError) as out_of_range:
            await client.read_resource("demo://resource/dynamic/text/0")
        assert (await client.read_resource(f"{DOCS}features.md"))[0].text  # the session goes on
    assert "has no resource at 'demo://no/such/thing'" in str(unknown.value)
    assert "List the server's resources" in str(unknown.value)
    assert "has no resource at 'demo://resource/dynamic/text/0'" in str(out_of_range.value)
    assert unknown.value.exit_code == 4


@pytest.mark.parametrize("transport", ["demo_http_url", "demo_sse_url"])
async def test_an_unknown_uri_answered_with_http_400_is_the_servers_answer_not_a_lost_session(
    transport: str, request: pytest.FixtureRequest
) -> None:
    # Given the SDK's own server, which answers an unknown URI over Streamable HTTP with a JSON-RPC error at HTTP 400
    async with McpClient(ServerSpec(target=request.getfixturevalue(transport))) as client:
        # When an unknown URI is read, then the error says so: it is not taken for a session the server forgot
        with pytest.raises(ResourceError, match="has no resource at 'demo://no/such/thing'"):
            await client.read_resource("demo://no/such/thing")


async def test_binary_contents_over_the_size_limit_fail_the_read_stating_the_limit(everything_http_url: str) -> None:
    async with McpClient(ServerSpec(target=everything_http_url)) as client:
        with pytest.raises(ResourceError, match=r"holds \d+ bytes of binary contents, more than the limit of 10 bytes"):
            await client.read_resource("demo://resource/dynamic/blob/1", max_bytes=10)
        fits = await client.read_resource("demo://resource/dynamic/blob/1", max_bytes=1000)
    assert fits[0].data


def test_a_missing_template_argument_names_the_argument_and_the_template() -> None:
    with pytest.raises(ResourceError) as missing:
        fill_template(TEXT_TEMPLATE, {"other": "1"})
    assert "'resourceId'" in str(missing.value) and TEXT_TEMPLATE in str(missing.value)


def test_templates_are_filled_as_rfc_6570_says_and_query_variables_may_be_left_out() -> None:
    template = MCPResourceTemplate(uri_template="files://{+path}/{name}{?page,size}", name="files")
    assert template.fill({"path": "a/b", "name": "x y.txt", "page": "2"}) == "files://a/b/x%20y.txt?page=2"


def test_a_template_the_sdk_cannot_parse_is_a_resource_error() -> None:
    with pytest.raises(ResourceError, match="is not a URI template"):
        fill_template("demo://{a}{b}", {"a": "1", "b": "2"})


async def test_every_list_follows_pagination_cursors_to_the_end(paged_server_url: str) -> None:
    async with McpClient(ServerSpec(target=paged_server_url)) as client:
        resources = await client.list_resources()
        templates = await client.list_resource_templates()
        prompts = await client.list_prompts()
        tools = await client.list_tools()
    for names in ([r.name for r in resources], [t.name for t in templates], [p.name for p in prompts]):
        assert len(names) == len(set(names)) == 25
    assert len(tools) == 25


def test_the_sync_client_reads_resources_from_plain_code(everything_http_url: str) -> None:
    with SyncMcpClient(ServerSpec(target=everything_http_url)) as client:
        listed = client.list_resources()
        templates = client.list_resource_templates()
        contents = client.read_resource(listed[0].uri)
    assert contents[0].uri == listed[0].uri and contents[0].text and len(templates) == 2


async def test_a_token_a_resource_or_a_prompt_quotes_is_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a server that quotes the token it was given in a resource and in a prompt
    monkeypatch.setenv("KNIME_MCP_TEST_TOKEN", "tok-canary-5d20aa")
    command = shlex.join([sys.executable, str(SERVERS_DIR / "token_echo_server.py")])
    spec = ServerSpec(target=command, env={"API_TOKEN": "${KNIME_MCP_TEST_TOKEN}"})
    # When both are read
    async with McpClient(spec) as client:
        (content,) = await client.read_resource("token://whoami")
        prompt = await client.get_prompt("whoami_prompt")
    # Then the token is masked in each
    assert content.text == "knime, with token ***"
    assert "tok-canary-5d20aa" not in json.dumps(prompt.to_dict()) and "***" in json.dumps(prompt.to_dict())
