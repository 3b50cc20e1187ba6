"""A conversation as langchain messages and as table rows: the agent's memory and the Agent Prompter's output.

Layer: values, used by the agent loop (messages), by the node and the CLI (rows), and by the Prompt node's messages
(:mod:`knime_mcp.catalog.prompt_messages`). One row per message with the
text columns of :data:`CONVERSATION_COLUMNS`; a history table in that form continues a conversation, history first,
then the new messages. The system message is sent to the model on every run and is not part of the rows, as in
KNIME's own Agent Prompter. In the error-column mode a failed run ends with a row that holds only the error.

The table (:func:`conversation_table`) adds :data:`IMAGE`, each message's first image as PNG bytes, so that KNIME
can show it: the node turns that binary column into PNG image cells (KNIME's tables have no raw binary column), as
for the Tool Caller. :data:`IMAGES` stays the lossless form that a history table is read back from; the image
column is only for looking at, and a history table without it (from an older version) continues as well.

    conversation = Conversation("You are terse.", history=messages_from_rows(rows))
    conversation.append(HumanMessage("hi"))
    conversation_table(conversation, error_column=False)
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from knime_mcp.columns import ROW_ID_COLUMN, ColumnKind
from knime_mcp.errors import ConfigError
from knime_mcp.redaction import redact

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "CONTENT",
    "CONVERSATION_COLUMNS",
    "ERROR",
    "IMAGE",
    "IMAGES",
    "ROLE",
    "TOOL_CALLS",
    "TOOL_CALL_ID",
    "TOOL_NAME",
    "Conversation",
    "awaiting_message",
    "conversation_columns",
    "conversation_table",
    "message_to_row",
    "messages_from_arrow",
    "messages_from_rows",
    "rows_table",
]

ROLE = "Role"
CONTENT = "Content"
TOOL_CALLS = "Tool Calls"
"""JSON list of ``{"id", "name", "arguments"}``; ``arguments`` is a string when the model sent malformed JSON."""
TOOL_CALL_ID = "Tool Call ID"
TOOL_NAME = "Tool Name"
IMAGES = "Images"
"""JSON list of ``data:`` URLs of the images a message carries (tool images reach the model this way)."""
IMAGE = "Image"
"""The message's first image as PNG bytes (converted from other formats); missing when it has none, and when that
image cannot be decoded (it is still in :data:`IMAGES`). Only in the table, for KNIME to show; never read back."""
ERROR = "Error"

CONVERSATION_COLUMNS: tuple[str, ...] = (ROLE, CONTENT, TOOL_CALLS, TOOL_CALL_ID, TOOL_NAME, IMAGES)
"""The columns of a conversation row, all strings; the table adds :data:`IMAGE`, the error-column mode
:data:`ERROR` (see :func:`conversation_columns`)."""

"""A conversation column's type: text, or PNG bytes (Arrow ``large_binary``), which KNIME shows as PNG image cells."""

_ROLES: dict[str, str] = {
    "system": "system",
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "tool": "tool",
}
_HISTORY_HINT = "Connect a conversation table as the Agent Prompter outputs it (Role, Content, Tool Calls, ...)."


class Conversation:
    """The messages of one agent run: the system message, the history, then what this run adds."""

    def __init__(self, system_message: str | None = None, history: Sequence[BaseMessage] = ()) -> None:
        self._system = [SystemMessage(system_message)] if system_message else []
        self._history = list(history)
        self._new: list[BaseMessage] = []
        self.error: str | None = None
        """Why the run stopped early, in the error-column mode."""

    @property
    def messages(self) -> list[BaseMessage]:
        """Everything the model is sent: the system message, the history and the new messages."""
        return [*self._system, *self._history, *self._new]

    @property
    def new_messages(self) -> list[BaseMessage]:
        return list(self._new)

    def append(self, *messages: BaseMessage) -> None:
        self._new.extend(messages)

    def add_to_system(self, section: str) -> None:
        """Add ``section`` to the end of the system message: what is known only once the run started (the servers'
        instructions, which come with their sessions)."""
        text = f"{self._system[0].text}\n\n{section}" if self._system else section
        self._system = [SystemMessage(text)]

    def append_error(self, error: str) -> None:
        self.error = error

    def rows(self, *, error_column: bool = False) -> list[dict[str, str | None]]:
        """History rows, then new rows, then (with ``error_column``) the error row if the run failed."""
        rows = [message_to_row(message) for message in [*self._history, *self._new]]
        if not error_column:
            return rows
        rows = [{**row, ERROR: None} for row in rows]
        if self.error is not None:
            rows.append({**dict.fromkeys(CONVERSATION_COLUMNS), ERROR: self.error})
        return rows


def awaiting_message(messages: Sequence[BaseMessage]) -> AIMessage | None:
    """The last message when it is the model's, with tool calls none of which is answered yet: a run stopped there
    awaiting a person's approval (:mod:`knime_mcp.agent.approval`), and the next run resumes its calls."""
    last = messages[-1] if messages else None
    return last if isinstance(last, AIMessage) and (last.tool_calls or last.invalid_tool_calls) else None


def message_to_row(message: BaseMessage) -> dict[str, str | None]:
    """One conversation row; texts are joined, images become ``data:`` URLs, tool calls JSON."""
    calls = _tool_calls(message) if isinstance(message, AIMessage) else []
    images = _image_urls(message.content)
    return {
        ROLE: _role(message),
        CONTENT: message.text,
        TOOL_CALLS: json.dumps(calls, ensure_ascii=False) if calls else None,
        TOOL_CALL_ID: message.tool_call_id if isinstance(message, ToolMessage) else None,
        TOOL_NAME: message.name if isinstance(message, ToolMessage) else None,
        IMAGES: json.dumps(images) if images else None,
    }


def _role(message: BaseMessage) -> str:
    match message:
        case SystemMessage():
            return "system"
        case HumanMessage():
            return "user"
        case AIMessage():
            return "assistant"
        case ToolMessage():
            return "tool"
        case _:
            raise TypeError(f"Cannot store a message of type {message.type!r} in a conversation table.")


def _tool_calls(message: AIMessage) -> list[dict[str, Any]]:
    """Valid calls with their arguments as an object, malformed ones with the text the model sent; secret-looking
    arguments masked (:func:`~knime_mcp.redaction.redact`), as the table is saved with the workflow. A run continuing
    from the table needs only each call's id and name, which pair it with its tool message."""
    calls = [*message.tool_calls, *message.invalid_tool_calls]
    return [{"id": call["id"], "name": call["name"], "arguments": redact(call["args"])} for call in calls]


def _image_urls(content: str | list[Any]) -> list[str]:
    if isinstance(content, str):
        return []
    urls = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "image_url":
            url = block["image_url"]
            urls.append(url["url"] if isinstance(url, dict) else url)
        elif block.get("type") == "image" and "base64" in block:
            urls.append(f"data:{block.get('mime_type', 'image/png')};base64,{block['base64']}")
    return urls


def messages_from_arrow(table: pa.Table) -> list[BaseMessage]:
    """The messages of a conversation table read with ``to_pyarrow()``; the RowID column labels the rows. Only the
    row columns are read: the :data:`IMAGE` column (whose images :data:`IMAGES` holds) and any other are left out."""
    read = {ROW_ID_COLUMN, *CONVERSATION_COLUMNS, ERROR}
    return messages_from_rows(table.select([name for name in table.column_names if name in read]).to_pylist())


def messages_from_rows(rows: Iterable[Mapping[str, Any]]) -> list[BaseMessage]:
    """The messages of conversation rows; error rows (no role, an error) are skipped, other problems name the row."""
    messages = []
    for number, row in enumerate(rows, start=1):
        label = str(row.get(ROW_ID_COLUMN) or f"row {number}")
        if _missing(row.get(ROLE)) and not _missing(row.get(ERROR)):
            continue
        messages.append(_message(row, label))
    return messages


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def _text(row: Mapping[str, Any], column: str) -> str | None:
    value = row.get(column)
    return None if _missing(value) else str(value)


def _message(row: Mapping[str, Any], label: str) -> BaseMessage:
    if ROLE not in row:
        raise ConfigError(f"The conversation table has no {ROLE!r} column.", hint=_HISTORY_HINT)
    role = _ROLES.get((_text(row, ROLE) or "").strip().lower())
    if role is None:
        raise ConfigError(
            f"{label} of the conversation has the role {_text(row, ROLE)!r}.",
            hint="Use one of system, user, assistant and tool.",
        )
    content: str | list[Any] = _text(row, CONTENT) or ""
    images = _json(row, IMAGES, label)
    if images:
        content = [{"type": "text", "text": content}, *({"type": "image_url", "image_url": {"url": u}} for u in images)]
    match role:
        case "system":
            return SystemMessage(content)
        case "user":
            return HumanMessage(content)
        case "assistant":
            return _ai_message(content, _json(row, TOOL_CALLS, label) or [], label)
        case _:
            call_id = _text(row, TOOL_CALL_ID)
            if call_id is None:
                raise ConfigError(f"{label} of the conversation is a tool message without a tool call ID.")
            return ToolMessage(content, tool_call_id=call_id, name=_text(row, TOOL_NAME))


def _json(row: Mapping[str, Any], column: str, label: str) -> Any:
    text = _text(row, column)
    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"The {column!r} of {label} of the conversation is not valid JSON: {exc.msg}.") from exc
    if not isinstance(value, list):
        raise ConfigError(f"The {column!r} of {label} of the conversation must be a JSON list.")
    return value


def _ai_message(content: str | list[Any], calls: list[Any], label: str) -> AIMessage:
    valid, invalid = [], []
    for call in calls:
        if not isinstance(call, dict) or "name" not in call or "id" not in call:
            raise ConfigError(f"A tool call of {label} of the conversation lacks its id or name.")
        arguments = call.get("arguments", {})
        if isinstance(arguments, dict):
            valid.append({"name": call["name"], "args": arguments, "id": call["id"], "type": "tool_call"})
        else:
            invalid.append({"name": call["name"], "args": str(arguments), "id": call["id"], "error": None})
    return AIMessage(content, tool_calls=valid, invalid_tool_calls=invalid)


def conversation_columns(*, error_column: bool = False) -> list[tuple[str, ColumnKind]]:
    """The columns of :func:`conversation_table` in order, with their kinds: the row's, :data:`IMAGE` right after
    :data:`IMAGES`, then :data:`ERROR` in the error-column mode."""
    names = [*CONVERSATION_COLUMNS, ERROR] if error_column else list(CONVERSATION_COLUMNS)
    columns: list[tuple[str, ColumnKind]] = [(name, "string") for name in names]
    columns.insert(names.index(IMAGES) + 1, (IMAGE, "image"))
    return columns


def conversation_table(conversation: Conversation, *, error_column: bool = False) -> pa.Table:
    """The conversation as an Arrow table of the columns of :func:`conversation_columns`: strings, and PNG bytes
    (``large_binary``) in :data:`IMAGE`. Missing values stay typed, unlike in pandas."""
    return rows_table(conversation.rows(error_column=error_column), error_column=error_column)


def rows_table(rows: Sequence[Mapping[str, str | None]], *, error_column: bool = False) -> pa.Table:
    """Conversation rows (:func:`message_to_row`, with :data:`ERROR` in the error-column mode) as the table
    :func:`conversation_table` makes, for rows that come from elsewhere than one :class:`Conversation`."""
    import pyarrow as pa

    arrays = {}
    for name, kind in conversation_columns(error_column=error_column):
        if kind == "image":
            arrays[name] = pa.array([_first_png(row[IMAGES]) for row in rows], pa.large_binary())
        else:
            arrays[name] = pa.array([row[name] for row in rows], pa.string())
    return pa.table(arrays)


def _first_png(images: str | None) -> bytes | None:
    """The first image of an :data:`IMAGES` value as PNG bytes; ``None`` without images, and when the first is not a
    base64 ``data:`` URL of an image that can be decoded (a web address, damaged data): the table stays whole."""
    from knime_mcp.tools.images import ImageError, to_png
    from knime_mcp.tools.results import ImagePart

    urls = json.loads(images) if images else []
    if not urls or not isinstance(urls[0], str):
        return None
    header, comma, data = urls[0].partition(",")
    if not comma or not header.startswith("data:") or not header.endswith(";base64"):
        return None
    mime_type = header.removeprefix("data:").split(";")[0] or "image/png"
    try:
        return to_png(ImagePart(data, mime_type))
    except ImageError:
        return None
