"""Conversations as table rows and back: what the Agent Prompter outputs and accepts as history."""

from __future__ import annotations

import base64
import io
import json

import pyarrow as pa
import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from knime_mcp.conversation import (
    CONVERSATION_COLUMNS,
    ERROR,
    IMAGE,
    IMAGES,
    Conversation,
    conversation_columns,
    conversation_table,
    message_to_row,
    messages_from_arrow,
    messages_from_rows,
)
from knime_mcp.errors import ConfigError

PNG_URL = "data:image/png;base64,iVBORw0KGgo="
"""The PNG signature alone: a data URL of no image that can be decoded."""

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


def test_the_table_has_typed_columns_even_when_a_column_is_all_missing() -> None:
    conversation = Conversation()
    conversation.append(HumanMessage("hi"), AIMessage("hello"))
    table = conversation_table(conversation, error_column=True)
    assert table.column_names == [*CONVERSATION_COLUMNS, IMAGE, ERROR]
    assert [name for name, _ in conversation_columns(error_column=True)] == table.column_names
    assert table.schema.field(IMAGE).type == pa.large_binary() and table.column(IMAGE).null_count == 2
    assert all(field.type == pa.string() for field in table.schema if field.name != IMAGE)
    assert conversation_table(conversation).column_names == [*CONVERSATION_COLUMNS, IMAGE]


def _data_url(fmt: str, size: tuple[int, int]) -> str:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", size, (255, 216, 0)).save(buffer, format=fmt)
    return f"data:image/{fmt.lower()};base64,{base64.b64encode(buffer.getvalue()).decode()}"


def _with_images(*urls: str) -> HumanMessage:
    images = [{"type": "image_url", "image_url": {"url": url}} for url in urls]
    return HumanMessage([{"type": "text", "text": "Images:"}, *images])


def test_the_image_column_holds_each_messages_first_image_as_png_and_images_keeps_them_all() -> None:
    from PIL import Image

    # Given messages with a JPEG and a PNG, with a PNG, and without images
    jpeg, png = _data_url("JPEG", (7, 3)), _data_url("PNG", (5, 4))
    conversation = Conversation()
    conversation.append(_with_images(jpeg, png), HumanMessage("no image"), _with_images(png))
    # When the conversation becomes a table
    table = conversation_table(conversation)
    # Then the Image column holds the first image of each message as PNG, the JPEG converted, missing without images
    first, none, only = table.column(IMAGE).to_pylist()
    assert none is None and first is not None and only is not None
    assert [(image.format, image.size) for image in map(Image.open, map(io.BytesIO, [first, only]))] == [
        ("PNG", (7, 3)),
        ("PNG", (5, 4)),
    ]
    # And Images still lists every image as it came
    assert json.loads(table.column(IMAGES)[0].as_py()) == [jpeg, png]


@pytest.mark.parametrize(
    "url",
    [PNG_URL, "data:image/png;base64,not base64!", "https://example.com/chart.png", "data:image/png,rawtext"],
    ids=["undecodable", "not-base64", "web-address", "not-a-base64-url"],
)
def test_an_image_that_cannot_be_decoded_leaves_the_image_cell_missing_and_stays_in_images(url: str) -> None:
    conversation = Conversation()
    conversation.append(_with_images(url, _data_url("PNG", (2, 2))))
    table = conversation_table(conversation)
    assert table.column(IMAGE).to_pylist() == [None]
    assert json.loads(table.column(IMAGES)[0].as_py())[0] == url


def test_a_history_table_is_read_from_its_images_with_or_without_the_image_column() -> None:
    # Given a conversation table as this version makes it (with Image) and one as earlier versions did (without)
    conversation = Conversation()
    conversation.append(_with_images(_data_url("PNG", (3, 3))), AIMessage("A yellow square."))
    table = conversation_table(conversation)
    older = table.drop_columns([IMAGE])
    # When each is read back as history
    # Then both give the same messages, their images from the Images column
    again, before = messages_from_arrow(table), messages_from_arrow(older)
    assert [message_to_row(m) for m in again] == [message_to_row(m) for m in before] == conversation.rows()


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
def test_knime_takes_the_conversation_table_with_its_images_as_png_cells_and_as_text() -> None:
    import knime.extension as knext
    import pandas as pd
    from PIL import Image

    import node_host
    from nodes.knime_io.images import with_png_cells

    # Given a conversation whose first message holds an undecodable image and whose second a chart
    chart = _data_url("PNG", (6, 4))
    conversation = Conversation()
    conversation.append(MESSAGES[3], _with_images(chart))
    # When KNIME takes the table, its Image column as PNG image cells, and hands it to the next node
    (batch,) = conversation_table(conversation).to_batches()
    with_cells = pa.Table.from_batches([with_png_cells(batch, [IMAGE])])
    handed_on = node_host.source_table(knext.Table.from_pyarrow(with_cells))
    # Then Image is a PNG image column, the other columns text, and Images still holds the data URLs
    assert {column.name: str(column.ktype) for column in handed_on.schema} == {
        **dict.fromkeys(CONVERSATION_COLUMNS, "String"),
        IMAGE: "PNG Image",
    }
    frame = handed_on.to_pandas()
    assert [json.loads(images) for images in frame[IMAGES]] == [[PNG_URL], [chart]]
    assert frame[IMAGE].iloc[0] is None or pd.isna(frame[IMAGE].iloc[0])
    assert isinstance(frame[IMAGE].iloc[1], Image.Image)
    assert frame[IMAGE].iloc[1].size == (6, 4)
    # And read back as history, the table gives the same messages
    assert [message_to_row(m) for m in messages_from_arrow(handed_on.to_pyarrow())] == conversation.rows()
