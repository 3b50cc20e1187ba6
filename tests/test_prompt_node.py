"""The MCP Prompt node, run through configure and execute as KNIME runs it (Given/When/Then), on both hosts, against
the npm server-everything and the bundled demo server; and its conversation as the Agent Prompter's history."""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

import knime.extension as knext
import pandas as pd
import pytest

import node_host
from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer
from knime_mcp import ServerSpec
from knime_mcp.errors import PromptError
from node_contexts import ConfigureContext, ExecuteContext

pytestmark = pytest.mark.knime_node

PROMPTS = ["Name", "Title", "Description", "Arguments", "Required arguments"]
CONVERSATION = ["Role", "Content", "Tool Calls", "Tool Call ID", "Tool Name", "Images", "Image"]
API_KEY = "sk-prompt-node-canary-7a41"


def _said(content: str) -> str:
    """The server's text of a prompt message, which the conversation holds fenced as the server's words."""
    fenced = re.fullmatch(r'<mcp-prompt [^>]*fence="(\w+)">\n(.*)\n</mcp-prompt fence="\1">', content, re.S)
    assert fenced, content
    return fenced.group(2)


def _prompt(server: str, **settings: object) -> Any:
    from nodes.prompt import MCPPrompt

    node = MCPPrompt()
    node.server.server = server
    # KNIME's real API keeps parameter-group values on the class: what an earlier test chose must not carry over.
    defaults = {"prompt__name": "", "prompt__arguments": "", "prompt__on_error": "FAIL"}
    return node_host.set_parameters(node, **{**defaults, **settings})


def test_configure_gives_the_prompts_and_conversation_specs_without_connecting() -> None:
    node = _prompt("http://nonexistent.invalid/mcp")
    (prompts, conversation) = node_host.configure_node(node, ConfigureContext(), None)
    assert prompts.column_names == PROMPTS and conversation.column_names == CONVERSATION
    assert str(conversation["Image"].ktype) == "PNG Image"
    data = knext.Schema.from_columns([knext.Column(knext.string(), "city")])
    (_, per_row) = node_host.configure_node(node, ConfigureContext(), data)
    assert per_row.column_names == [*CONVERSATION, "Error"]


def test_arguments_that_are_not_json_are_an_invalid_setting() -> None:
    node = _prompt("http://nonexistent.invalid/mcp", prompt__arguments='{"city": ')
    with pytest.raises(knext.InvalidParametersError, match="not valid JSON"):
        node_host.configure_node(node, ConfigureContext(), None)


def test_without_a_name_the_prompts_are_listed_over_every_transport(everything_spec: ServerSpec) -> None:
    prompts, conversation = node_host.execute_node(_prompt(everything_spec.target), ExecuteContext(), None)
    listed = prompts.to_pandas().set_index("Name")
    assert list(prompts.column_names) == PROMPTS and listed.loc["args-prompt", "Required arguments"] == "city"
    assert json.loads(listed.loc["args-prompt", "Arguments"])[1] == {
        "name": "state", "description": None, "required": False
    }  # fmt: skip
    assert list(conversation.column_names) == CONVERSATION and conversation.to_pandas().empty


def test_a_prompt_with_json_arguments_is_a_conversation(everything_http_url: str) -> None:
    node = _prompt(everything_http_url, prompt__name="args-prompt", prompt__arguments='{"city": "Bern", "state": "BE"}')
    _, conversation = node_host.execute_node(node, ExecuteContext(), None)
    frame = conversation.to_pandas()
    assert list(frame["Role"]) == ["user"]
    assert [_said(text) for text in frame["Content"]] == ["What's weather in Bern, BE?"]


def test_rows_give_the_arguments_and_a_missing_required_one_is_that_rows_error(everything_http_url: str) -> None:
    # Given rows of cities, the second without one, and the state fixed in the settings
    node = _prompt(
        everything_http_url, prompt__name="args-prompt", prompt__arguments='{"state": "BE"}', prompt__on_error="COLUMN"
    )
    data = node_host.source_table(pd.DataFrame({"city": ["Bern", None, "Thun"]}))
    ctx = ExecuteContext()
    # When the node executes
    _, conversation = node_host.execute_node(node, ctx, data)
    frame = conversation.to_pandas()
    # Then each row's messages follow one another, and the failed row names the missing argument
    assert list(frame.columns) == [*CONVERSATION, "Error"]
    said = [_said(text) for text in frame["Content"].iloc[[0, 2]]]
    assert said == ["What's weather in Bern, BE?", "What's weather in Thun, BE?"]
    assert pd.isna(frame["Role"].iloc[1]) and "Row 2 (RowID Row1): " in frame["Error"].iloc[1]
    assert "needs the argument 'city'" in frame["Error"].iloc[1]
    assert ctx.warnings == ["1 row(s) failed; see the 'Error' column."]


def test_fail_mode_fails_the_node_naming_the_row_and_the_argument(everything_http_url: str) -> None:
    node = _prompt(everything_http_url, prompt__name="args-prompt")
    data = node_host.source_table(pd.DataFrame({"state": ["BE"]}))
    with pytest.raises(PromptError, match=r"^Row 1 \(RowID Row0\): Prompt 'args-prompt' needs the argument 'city'"):
        node_host.execute_node(node, ExecuteContext(), data)


def test_an_unknown_prompt_is_an_invalid_setting_listing_the_prompts(everything_http_url: str) -> None:
    with pytest.raises(knext.InvalidParametersError, match="no prompt 'nope'.*'args-prompt'"):
        node_host.execute_node(_prompt(everything_http_url, prompt__name="nope"), ExecuteContext(), None)


def _chart_conversation(demo_stdio_command: list[str]) -> Any:
    node = _prompt(shlex.join(demo_stdio_command), prompt__name="review_chart", prompt__arguments='{"values": "3,1,2"}')
    _, conversation = node_host.execute_node(node, ExecuteContext(), None)
    return conversation


def test_the_demo_prompts_chart_is_a_png_image_cell(demo_stdio_command: list[str]) -> None:
    import PIL.Image

    frame = _chart_conversation(demo_stdio_command).to_pandas()
    assert list(frame["Role"]) == ["user", "user"] and "3 values" in frame["Content"].iloc[0]
    assert pd.isna(frame["Image"].iloc[0]) and isinstance(frame["Image"].iloc[1], PIL.Image.Image)
    assert frame["Image"].iloc[1].size == (26, 48)
    assert json.loads(frame["Images"].iloc[1])[0].startswith("data:image/png;base64,")


def test_the_prompts_conversation_starts_an_agent_run_as_its_history(demo_stdio_command: list[str]) -> None:
    from nodes.agent_prompter import AgentPrompter
    from nodes.chat_model_connector import ChatModelConnector

    # Given the demo server's chart prompt as a conversation, connected to the Agent Prompter's history input
    history = node_host.source_table(_chart_conversation(demo_stdio_command))
    tools = node_host.source_table(pd.DataFrame({"MCP Tool": pd.Series([], dtype=str)}))
    agent = AgentPrompter()
    agent.user_message = "Answer in one word."
    with FakeOpenAIEndpoint([answer("Fine.")]) as endpoint:
        connector = ChatModelConnector()
        connector.base_url, connector.model, connector.credential = endpoint.base_url, "fake-gpt", "llm"
        ctx = ExecuteContext({"llm": ("", API_KEY)})
        (model,) = node_host.execute_node(connector, ctx)
        node_host.configure_node(agent, ConfigureContext(), model.spec, tools.schema, history.schema, [])
        # When the agent runs
        conversation, _, _ = node_host.execute_node(agent, ctx, model, tools, history, [])
    # Then the model receives the prompt's text and its chart before the user message
    sent = endpoint.requests[0]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "user", "user"]
    assert "Review this bar chart of 3 values" in json.dumps(sent[1]["content"])
    images = [part for part in sent[2]["content"] if part.get("type") == "image_url"]
    assert images and images[0]["image_url"]["url"].startswith("data:image/png;base64,")
    assert sent[3]["content"] == "Answer in one word."
    assert list(conversation.to_pandas()["Content"])[-2:] == ["Answer in one word.", "Fine."]
