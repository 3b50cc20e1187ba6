"""Conversations as table rows and back: what the Agent Prompter outputs and accepts as history."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from knime_mcp.conversation import (
    CONVERSATION_COLUMNS,
    ERROR,
    Conversation,
    conversation_table,
    message_to_row,
    messages_from_arrow,
    messages_from_rows,
)
from knime_mcp.errors import ConfigError

PNG_URL = "data:image/png;base64,iVBORw0KGgo="

MESSAGES = [
    HumanMessage("What is 2 + 3?"),
    AIMessage("", tool_calls=[{"id": "c1", "name": "add", "args": {"a": 2, "b": 3}, "type": "tool_call"}]),
    ToolMessage("5", tool_call_id="c1", name="add"),
    HumanMessage([{"type": "text", "text": "Images:"}, {"type": "image_url", "image_url": {"url": PNG_URL}}]),
    AIMessage("It is 5."),
]


def test_each_message_becomes_one_row_with_role_content_tool_calls_id_name_and_images() -> None:
    rows = [message_to_row(message) for message in MESSAGES]
    assert [row["Role"] for row in rows] == ["user", "assistant", "tool", "user", "assistant"]
    assert json.loads(rows[1]["Tool Calls"] or "") == [{"id": "c1", "name": "add", "arguments": {"a": 2, "b": 3}}]
    assert (rows[2]["Tool Call ID"], rows[2]["Tool Name"], rows[2]["Content"]) == ("c1", "add", "5")
    assert json.loads(rows[3]["Images"] or "") == [PNG_URL] and rows[3]["Content"] == "Images:"
    assert rows[4]["Tool Calls"] is None and rows[4]["Content"] == "It is 5."


def test_rows_read_back_into_the_same_messages() -> None:
    again = messages_from_rows([message_to_row(message) for message in MESSAGES])
    assert [message_to_row(message) for message in again] == [message_to_row(message) for message in MESSAGES]
    assert again[1].tool_calls[0]["args"] == {"a": 2, "b": 3}
    assert isinstance(again[2], ToolMessage) and again[2].tool_call_id == "c1"


def test_a_tool_call_with_malformed_arguments_survives_the_round_trip() -> None:
    broken = AIMessage("", invalid_tool_calls=[{"id": "c9", "name": "add", "args": '{"a": 2,', "error": "bad"}])
    (again,) = messages_from_rows([message_to_row(broken)])
    assert isinstance(again, AIMessage) and again.invalid_tool_calls[0]["args"] == '{"a": 2,'


def test_history_rows_come_first_and_the_system_message_is_sent_but_not_output() -> None:
    conversation = Conversation("Be brief.", history=MESSAGES[:1])
    conversation.append(AIMessage("5"))
    assert isinstance(conversation.messages[0], SystemMessage)
    assert [row["Content"] for row in conversation.rows()] == ["What is 2 + 3?", "5"]


def test_the_error_column_mode_ends_a_failed_run_with_an_error_row() -> None:
    conversation = Conversation(history=MESSAGES[:1])
    conversation.append_error("The model was still calling tools after 25 model calls.")
    rows = conversation.rows(error_column=True)
    assert rows[0][ERROR] is None
    assert rows[-1] == {**dict.fromkeys(CONVERSATION_COLUMNS), ERROR: rows[-1][ERROR]} and "25" in rows[-1][ERROR]


def test_error_rows_of_a_history_are_skipped_when_it_is_continued() -> None:
    conversation = Conversation(history=MESSAGES[:1])
    conversation.append_error("failed")
    assert len(messages_from_rows(conversation.rows(error_column=True))) == 1


def test_the_table_has_typed_string_columns_even_when_a_column_is_all_missing() -> None:
    conversation = Conversation()
    conversation.append(HumanMessage("hi"), AIMessage("hello"))
    table = conversation_table(conversation, error_column=True)
    assert table.column_names == [*CONVERSATION_COLUMNS, ERROR]
    assert all(field.type == pa.string() for field in table.schema)


def test_a_history_table_from_knime_is_read_with_its_row_ids() -> None:
    rows = [message_to_row(message) for message in MESSAGES]
    table = pa.table({"<RowID>": [f"Row{i}" for i in range(len(rows))], **{c: [r[c] for r in rows] for c in rows[0]}})
    assert len(messages_from_arrow(table)) == len(MESSAGES)


def test_hand_made_histories_may_use_other_role_names_and_leave_out_columns() -> None:
    messages = messages_from_rows([{"Role": "Human", "Content": "hi"}, {"Role": "AI", "Content": "hello"}])
    assert [type(message) for message in messages] == [HumanMessage, AIMessage]


def test_an_unknown_role_names_the_row_and_the_valid_roles() -> None:
    with pytest.raises(ConfigError, match="Row7 of the conversation has the role 'robot'") as caught:
        messages_from_rows([{"<RowID>": "Row7", "Role": "robot", "Content": "beep"}])
    assert caught.value.hint is not None and "assistant" in caught.value.hint


def test_a_tool_message_without_its_call_id_is_refused() -> None:
    with pytest.raises(ConfigError, match="tool message without a tool call ID"):
        messages_from_rows([{"Role": "tool", "Content": "5"}])


def test_tool_calls_that_are_not_json_name_the_column_and_row() -> None:
    with pytest.raises(ConfigError, match="'Tool Calls' of row 1 .* not valid JSON"):
        messages_from_rows([{"Role": "assistant", "Content": "", "Tool Calls": "[{"}])


@pytest.mark.knime_node
def test_the_conversation_table_keeps_images_as_text_which_knime_takes_as_it_is() -> None:
    import knime.extension as knext

    import node_host

    # Given a conversation whose user message holds an image
    conversation = Conversation()
    conversation.append(MESSAGES[3])
    # When KNIME takes the table and hands it to the next node
    handed_on = node_host.source_table(knext.Table.from_pyarrow(conversation_table(conversation)))
    # Then every column is text, and the image is still its data URL
    assert {str(column.ktype) for column in handed_on.schema} == {"String"}
    assert json.loads(handed_on.to_pandas()["Images"].iloc[0]) == [PNG_URL]
