"""Prompts through the client: server-everything's over every transport, and the demo server's image prompt."""

from __future__ import annotations

import shlex

import mcp_types
import pytest

from knime_mcp import McpClient, PromptError, RenderedPrompt, ServerSpec, SyncMcpClient
from knime_mcp.tools.results import AudioPart, ImagePart, ResourceLinkPart, ResourcePart, TextPart

pytestmark = pytest.mark.anyio


async def test_server_everything_lists_its_prompts_with_their_arguments(everything_spec: ServerSpec) -> None:
    async with McpClient(everything_spec) as client:
        prompts = {prompt.name: prompt for prompt in await client.list_prompts()}
    assert {"simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"} <= prompts.keys()
    city, state = prompts["args-prompt"].arguments
    assert (city.name, city.required, city.description) == ("city", True, "Name of the city")
    assert (state.name, state.required) == ("state", False)
    assert prompts["args-prompt"].title == "Arguments Prompt" and prompts["simple-prompt"].arguments == ()


async def test_a_prompt_with_arguments_and_one_embedding_a_resource_give_their_messages(
    everything_spec: ServerSpec,
) -> None:
    async with McpClient(everything_spec) as client:
        weather = await client.get_prompt("args-prompt", {"city": "Bern", "state": "BE"})
        embedded = await client.get_prompt("resource-prompt", {"resourceType": "Text", "resourceId": "3"})
        binary = await client.get_prompt("resource-prompt", {"resourceType": "Blob", "resourceId": "4"})
    assert weather.messages[0].role == "user" and weather.messages[0].content == TextPart("What's weather in Bern, BE?")
    resource = embedded.messages[1].content
    assert isinstance(resource, ResourcePart) and resource.uri == "demo://resource/dynamic/text/3"
    assert resource.text is not None and resource.text.startswith("Resource 3:")
    blob = binary.messages[1].content
    assert isinstance(blob, ResourcePart) and blob.blob and blob.text is None
    assert embedded.to_dict()["messages"][1]["content"]["uri"] == "demo://resource/dynamic/text/3"


async def test_a_missing_required_argument_of_a_listed_prompt_is_refused_before_sending(
    everything_spec: ServerSpec,
) -> None:
    async with McpClient(everything_spec) as client:
        listed = {prompt.name: prompt for prompt in await client.list_prompts()}
        with pytest.raises(PromptError) as checked:
            await client.get_prompt(listed["args-prompt"], {"state": "BE"})
        with pytest.raises(PromptError) as refused:
            await client.get_prompt("args-prompt", {"state": "BE"})
        with pytest.raises(PromptError) as unknown:
            await client.get_prompt("no-such-prompt")
    assert "needs the argument 'city'; nothing was sent" in str(checked.value)
    assert "city, state (optional)" in str(checked.value)
    assert "refused prompt 'args-prompt'" in str(refused.value) and "city" in str(refused.value)
    assert "refused prompt 'no-such-prompt'" in str(unknown.value)
    assert "List the server's prompts" in str(unknown.value) and unknown.value.exit_code == 4


async def test_the_demo_servers_prompt_carries_its_chart_as_a_png_image(demo_stdio_command: list[str]) -> None:
    import shlex

    async with McpClient(ServerSpec(target=shlex.join(demo_stdio_command))) as client:
        (prompt,) = await client.list_prompts()
        got = await client.get_prompt(prompt, {"values": "3,1,2"})
    text, image = (message.content for message in got.messages)
    assert prompt.name == "review_chart" and prompt.arguments[0].required
    assert isinstance(text, TextPart) and "3 values" in text.text
    assert isinstance(image, ImagePart) and image.mime_type == "image/png" and image.bytes.startswith(b"\x89PNG")


def test_audio_and_resource_links_in_a_prompt_keep_their_kind() -> None:
    # No peer server sends these in a prompt; the conversion is the same one tool results use.
    result = mcp_types.GetPromptResult(
        description="both",
        messages=[
            mcp_types.PromptMessage(
                role="assistant", content=mcp_types.AudioContent(data="AAAA", mime_type="audio/wav")
            ),
            mcp_types.PromptMessage(role="user", content=mcp_types.ResourceLink(name="doc", uri="demo://doc")),
        ],
    )
    got = RenderedPrompt.from_sdk(result)
    assert got.description == "both"
    assert got.messages[0].role == "assistant" and got.messages[0].content == AudioPart("AAAA", "audio/wav")
    assert isinstance(got.messages[1].content, ResourceLinkPart) and got.messages[1].content.uri == "demo://doc"


def test_the_sync_client_gets_prompts_from_plain_code(everything_http_url: str) -> None:
    with SyncMcpClient(ServerSpec(target=everything_http_url)) as client:
        names = [prompt.name for prompt in client.list_prompts()]
        got = client.get_prompt("simple-prompt")
    assert "simple-prompt" in names and "without arguments" in got.messages[0].content.text


async def test_a_server_without_prompts_or_resources_lists_none_of_them(
    sequential_thinking_stdio_command: list[str],
) -> None:
    # Given npm server-sequential-thinking, which declares neither prompts nor resources (it answers their lists with
    # "method not found"); when its prompts, resources and templates are listed, then each list is empty, not an error
    async with McpClient(ServerSpec(target=shlex.join(sequential_thinking_stdio_command))) as client:
        listed = (await client.list_prompts(), await client.list_resources(), await client.list_resource_templates())
        assert not client.offers("prompts") and not client.offers("resources")
    assert listed == ([], [], [])
