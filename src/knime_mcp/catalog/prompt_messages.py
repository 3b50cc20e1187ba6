"""The MCP Prompt node's behaviour: list a server's prompts, and get one as a conversation an agent can continue.

Layer: above :class:`~knime_mcp.mcp.client.McpClient`; below the KNIME node and Python users. A prompt's messages become
rows of :mod:`knime_mcp.conversation`, exactly what the Agent Prompter reads as history, each fenced as the
server's words (:func:`prompt_messages`): text as the content, an
image (also an embedded image resource) as a ``data:`` URL in the images column and a PNG in the image column, the text
of an embedded resource as the content, and what a conversation cannot hold (audio, binary resources, resource links)
as a note that names it. No KNIME import.

Arguments come from a JSON object, or from each row of a table (columns named like the arguments, overriding the
object's values). A missing required argument is refused before anything is sent, naming it: per row, that row's
error in ``column`` mode.

    run = get_prompt_sync(spec, "review_chart", arguments={"values": "3,1,2"})
    run.conversation               # Arrow, in conversation_columns() order
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, assert_never

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from knime_mcp.calls.rows import InputBatches, OnError, json_object
from knime_mcp.columns import row_label
from knime_mcp.config import CredentialLookup, ServerSpec
from knime_mcp.conversation import CONVERSATION_COLUMNS, ERROR, message_to_row, rows_table
from knime_mcp.errors import ConfigError, ToolError
from knime_mcp.mcp.prompts import MCPPrompt, RenderedPrompt
from knime_mcp.mcp.session import server_client
from knime_mcp.mcp.sync import ProgressCallback, run_sync
from knime_mcp.tools.fences import between_fences, new_fence
from knime_mcp.tools.results import AudioPart, ContentPart, ImagePart, ResourceLinkPart, ResourcePart, TextPart

if TYPE_CHECKING:
    import pyarrow as pa

    from knime_mcp.mcp.client import McpClient

__all__ = [
    "PROMPT_COLUMNS",
    "PromptRun",
    "get_prompt",
    "get_prompt_sync",
    "parse_arguments",
    "prompt_messages",
    "prompts_table",
    "select_prompt",
]

PROMPT_COLUMNS: tuple[str, ...] = ("Name", "Title", "Description", "Arguments", "Required arguments")
"""One text row per prompt; *Arguments* is a JSON list of ``{"name", "description", "required"}``, *Required
arguments* the required names, comma-separated."""


@dataclass(frozen=True)
class PromptRun:
    """What a run gave: the server's prompts (and as an Arrow table of :data:`PROMPT_COLUMNS`), the conversation
    (an Arrow table as :func:`knime_mcp.conversation.rows_table` makes it), and how many rows failed."""

    prompts: list[MCPPrompt]
    listing: pa.Table
    conversation: pa.Table
    errors: int


def prompts_table(prompts: Sequence[MCPPrompt]) -> pa.Table:
    import pyarrow as pa

    rows = [
        {
            "Name": prompt.name,
            "Title": prompt.title,
            "Description": prompt.description,
            "Arguments": json.dumps(prompt.to_dict()["arguments"], ensure_ascii=False),
            "Required arguments": ", ".join(a.name for a in prompt.arguments if a.required),
        }
        for prompt in prompts
    ]
    schema = pa.schema([(name, pa.string()) for name in PROMPT_COLUMNS])
    return pa.Table.from_batches([pa.RecordBatch.from_pylist(rows, schema=schema)])  # one batch, also without rows


def select_prompt(prompts: Sequence[MCPPrompt], name: str) -> MCPPrompt:
    """The listed prompt called ``name``; a name the server does not list is a setting to fix."""
    for prompt in prompts:
        if prompt.name == name.strip():
            return prompt
    listed = ", ".join(repr(prompt.name) for prompt in prompts) or "none"
    raise ConfigError(f"The server has no prompt {name.strip()!r}.", hint=f"Its prompts: {listed}.")


def parse_arguments(text: str) -> dict[str, str]:
    """The arguments setting: a JSON object; values that are not text are sent as their JSON text."""
    if not text.strip():
        return {}
    value = json_object(text, "The prompt arguments", '{"city": "Bern"}')
    return {name: _text(item) for name, item in value.items() if item is not None}


def _text(value: Any) -> str:
    """Prompt arguments are text: a number, a boolean or a list is sent as its JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def prompt_messages(prompt: RenderedPrompt, server: str, fence: str) -> list[BaseMessage]:
    """The prompt's messages as the agent's messages: ``assistant`` ones as the model's, any other as the user's.

    The server wrote them all, so each is fenced as tool output is: between ``<mcp-prompt>`` tags that name
    ``server`` and the role and carry the run's ``fence`` value; a server cannot put words in the model's mouth
    unmarked. An image gets a fenced line before it."""
    messages: list[BaseMessage] = []
    for message in prompt.messages:
        content = _content(message.content)
        if isinstance(content, str):
            content = between_fences("mcp-prompt", content, fence, server=server, role=message.role)
        else:
            note = between_fences("mcp-prompt", _IMAGE_NOTE, fence, server=server, role=message.role)
            content = [{"type": "text", "text": note}, *content]
        messages.append(AIMessage(content) if message.role == "assistant" else HumanMessage(content))
    return messages


_IMAGE_NOTE = "[The prompt's image follows.]"


def _content(part: ContentPart) -> str | list[str | dict[str, Any]]:
    match part:
        case TextPart():
            return part.text
        case ImagePart():
            return [_image(part.mime_type, part.data)]
        case ResourcePart(text=str(text)):
            return text
        case ResourcePart(blob=str(blob), mime_type=str(mime_type)) if mime_type.startswith("image/"):
            return [_image(mime_type, blob)]
        case ResourcePart():
            return f"[Embedded resource <{part.uri}> holds binary data ({part.mime_type or 'of no stated type'}).]"
        case AudioPart():
            return f"[An audio clip ({part.mime_type}) is not kept in a conversation table.]"
        case ResourceLinkPart():
            about = f" - {part.description}" if part.description else ""
            return f"[Linked resource {part.name} <{part.uri}>{about}]"
        case _:
            assert_never(part)


def _image(mime_type: str, data: str) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:{mime_type};base64,{data}"}}


class _Getter:
    """The gets of one run over one client, with the rows they make."""

    def __init__(self, client: McpClient, prompt: MCPPrompt | None, on_error: OnError | None) -> None:
        """``prompt``: None when no name was given; ``on_error``: None for a single get, whose error is the run's."""
        self.client, self.prompt, self.on_error = client, prompt, on_error
        self.fence = new_fence()
        """One fence value for every message of the run."""
        self.rows: list[dict[str, str | None]] = []
        self.errors = 0

    async def get(self, arguments: Mapping[str, str], label: str | None = None) -> None:
        if self.prompt is None:
            raise ConfigError(
                "Enter the name of the prompt to get.", hint="The first output lists the server's prompts."
            )
        try:
            rendered = await self.client.get_prompt(self.prompt, arguments)
        except ToolError as exc:
            if label is None:
                raise
            if self.on_error == "fail":
                raise type(exc)(f"{label}: {exc.message}", server=exc.server, hint=exc.hint) from exc
            self.errors += 1
            self.rows.append({**dict.fromkeys(CONVERSATION_COLUMNS), ERROR: f"{label}: {exc}"})
            return
        extra = {} if self.on_error is None else {ERROR: None}
        messages = prompt_messages(rendered, self.client.server, self.fence)
        self.rows += [{**message_to_row(message), **extra} for message in messages]


async def get_prompt(
    spec: ServerSpec,
    name: str,
    *,
    arguments: Mapping[str, str] | None = None,
    batches: Iterable[Any] | None = None,
    on_error: OnError = "fail",
    credentials: CredentialLookup | None = None,
    total_rows: int | None = None,
    progress: ProgressCallback | None = None,
    untrusted_hint: str | None = None,
    show_sign_in: Callable[[str], None] | None = None,
) -> PromptRun:
    """List the server's prompts, then get prompt ``name`` (empty: list only) with ``arguments``, or once per row of
    ``batches`` (Arrow batches or tables, read in a worker thread), whose columns named like the prompt's arguments
    override ``arguments``; the messages of every row follow one another. With ``batches`` the conversation has the
    :data:`~knime_mcp.conversation.ERROR` column: ``column`` records a row's failure there and goes on, ``fail``
    raises it naming the row."""
    async with server_client(
        spec, credentials=credentials, untrusted_hint=untrusted_hint, show_sign_in=show_sign_in, progress=progress
    ) as client:
        prompts = await client.list_prompts()
        prompt = select_prompt(prompts, name) if name.strip() else None
        getter = _Getter(client, prompt, None if batches is None else on_error)
        if batches is not None:
            await _get_rows(getter, batches, dict(arguments or {}), total_rows, progress)
        elif name.strip():
            await getter.get(dict(arguments or {}))
    conversation = rows_table(getter.rows, error_column=batches is not None)
    return PromptRun(prompts, prompts_table(prompts), conversation, getter.errors)


async def _get_rows(
    getter: _Getter,
    batches: Iterable[Any],
    fixed: dict[str, str],
    total: int | None,
    progress: ProgressCallback | None,
) -> None:
    names = {argument.name for argument in getter.prompt.arguments} if getter.prompt is not None else set()
    number = 0
    async for batch in InputBatches(batches, threaded=True):
        for row in batch.to_pylist():
            number += 1
            given = {key: _text(value) for key, value in row.items() if key in names and value is not None}
            await getter.get({**fixed, **given}, row_label(number, row))
            if progress is not None:
                progress(min(number / total, 1.0) if total else 0.0, f"Prompt got for {number:,} rows")


def get_prompt_sync(
    spec: ServerSpec,
    name: str,
    *,
    cancelled: Callable[[], bool] | None = None,
    progress: ProgressCallback | None = None,
    **kwargs: Any,
) -> PromptRun:
    """Blocking :func:`get_prompt` for the KNIME node and plain scripts; ``cancelled`` is polled, and once true the
    run is cancelled and :class:`~knime_mcp.mcp.sync.CancelledByUser` raised."""
    return run_sync(get_prompt, spec, name, cancelled=cancelled, progress=progress, **kwargs)
