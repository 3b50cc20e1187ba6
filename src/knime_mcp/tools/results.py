"""ToolResult: a tool call's outcome as this project's own value, mapped exhaustively from the SDK's content blocks.

Every content kind the protocol defines has a part type here, so nothing a server returns is dropped silently.
Binary data stays base64 text exactly as it arrived; :attr:`ImagePart.bytes` decodes on demand. A part keeps whom the
server meant it for (``annotations.audience``): :meth:`ToolResult.for_audience` gives the model and the person each
their own parts, while the result itself, as the tool-call log and the Tool Caller keep it, has them all.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Literal, assert_never

import mcp_types

from knime_mcp.errors import scrub

__all__ = [
    "Audience",
    "AudioPart",
    "ContentPart",
    "ImagePart",
    "ResourceLinkPart",
    "ResourcePart",
    "TextPart",
    "ToolResult",
    "content_part",
    "masked_part",
    "part_to_dict",
]

Audience = Literal["user", "assistant"]
"""Whom a part is for: the person (``user``) or the model (``assistant``), as MCP's ``annotations.audience`` says."""


def _audience() -> Any:
    """The ``audience`` field of every part: who the server meant it for; None (for everyone) unless it said."""
    return field(default=None, kw_only=True)


@dataclass(frozen=True)
class TextPart:
    text: str
    type: Literal["text"] = "text"
    audience: tuple[Audience, ...] | None = _audience()


@dataclass(frozen=True)
class ImagePart:
    data: str
    """Base64, as the server sent it."""
    mime_type: str
    type: Literal["image"] = "image"
    audience: tuple[Audience, ...] | None = _audience()

    @property
    def bytes(self) -> bytes:
        return base64.b64decode(self.data)


@dataclass(frozen=True)
class AudioPart:
    data: str
    mime_type: str
    type: Literal["audio"] = "audio"
    audience: tuple[Audience, ...] | None = _audience()


@dataclass(frozen=True)
class ResourceLinkPart:
    uri: str
    name: str
    description: str | None = None
    mime_type: str | None = None
    type: Literal["resource_link"] = "resource_link"
    audience: tuple[Audience, ...] | None = _audience()


@dataclass(frozen=True)
class ResourcePart:
    """An embedded resource: its text, or its binary contents as base64."""

    uri: str
    mime_type: str | None = None
    text: str | None = None
    blob: str | None = None
    type: Literal["resource"] = "resource"
    audience: tuple[Audience, ...] | None = _audience()


ContentPart = TextPart | ImagePart | AudioPart | ResourceLinkPart | ResourcePart


def part_to_dict(part: ContentPart) -> dict[str, Any]:
    """A content block as the result's JSON form has it: its fields that are set."""
    return {k: v for k, v in vars(part).items() if v is not None}


def content_part(block: mcp_types.ContentBlock) -> ContentPart:
    """One SDK content block as its part, with the audience its annotations name; tool results and prompt messages
    share the kinds."""
    part = _content_part(block)
    audience = block.annotations.audience if block.annotations is not None else None
    return part if audience is None else replace(part, audience=tuple(audience))


def _content_part(block: mcp_types.ContentBlock) -> ContentPart:
    match block:
        case mcp_types.TextContent():
            return TextPart(block.text)
        case mcp_types.ImageContent():
            return ImagePart(block.data, block.mime_type)
        case mcp_types.AudioContent():
            return AudioPart(block.data, block.mime_type)
        case mcp_types.ResourceLink():
            return ResourceLinkPart(str(block.uri), block.name, block.description, block.mime_type)
        case mcp_types.EmbeddedResource():
            contents = block.resource
            match contents:
                case mcp_types.TextResourceContents():
                    return ResourcePart(str(contents.uri), contents.mime_type, text=contents.text)
                case mcp_types.BlobResourceContents():
                    return ResourcePart(str(contents.uri), contents.mime_type, blob=contents.blob)
                case _:
                    assert_never(contents)
        case _:
            assert_never(block)


@dataclass(frozen=True)
class ToolResult:
    """What a tool returned: content parts, optional structured content, and whether it is an error."""

    content: tuple[ContentPart, ...] = ()
    structured: dict[str, Any] | None = None
    is_error: bool = False

    mismatch: str | None = None
    """Why a result the server sent as a success is an error here: its structured content breaks the tool's own
    output schema. The content is kept as it arrived."""

    @property
    def error_text(self) -> str:
        """What went wrong, for a result that is an error: the mismatch, or the tool's own text."""
        return f"The result does not match the tool's output schema: {self.mismatch}" if self.mismatch else self.text

    @classmethod
    def from_sdk(cls, result: mcp_types.CallToolResult, *, mismatch: str | None = None) -> ToolResult:
        return cls(
            content=tuple(content_part(block) for block in result.content),
            structured=result.structured_content,
            is_error=bool(result.is_error) or mismatch is not None,
            mismatch=mismatch,
        )

    def masked(self, secrets: Collection[str]) -> ToolResult:
        """This result with every secret value in its texts masked: careless servers quote what they were given, and
        a result goes on to tables, logs and models."""
        if not secrets:
            return self
        return replace(
            self,
            content=tuple(masked_part(part, secrets) for part in self.content),
            structured=_masked_json(self.structured, secrets),
            mismatch=self.mismatch and scrub(self.mismatch, secrets),
        )

    @property
    def text(self) -> str:
        """All text parts and embedded text resources joined by newlines."""
        texts = [p.text for p in self.content if isinstance(p, TextPart | ResourcePart) and p.text is not None]
        return "\n".join(texts)

    def for_audience(self, audience: Audience) -> ToolResult:
        """This result with only the parts meant for ``audience`` (the parts that name no audience are for both)."""
        kept = tuple(part for part in self.content if part.audience is None or audience in part.audience)
        return self if len(kept) == len(self.content) else replace(self, content=kept)

    @property
    def images(self) -> list[ImagePart]:
        return [p for p in self.content if isinstance(p, ImagePart)]

    def to_dict(self) -> dict[str, Any]:
        parts = [part_to_dict(p) for p in self.content]
        data = {"content": parts, "structured": self.structured, "is_error": self.is_error}
        return data if self.mismatch is None else {**data, "mismatch": self.mismatch}

    def to_json(self) -> str:
        return self._json

    @cached_property
    def _json(self) -> str:
        """Serialised once: the dispatcher measures it and the agent's log keeps it, for results of any size."""
        return json.dumps(self.to_dict(), ensure_ascii=False)


def masked_part(part: ContentPart, secrets: Collection[str]) -> ContentPart:
    """``part`` with every secret value in its text masked."""
    match part:
        case TextPart():
            return replace(part, text=scrub(part.text, secrets))
        case ResourcePart(text=str(text)):
            return replace(part, text=scrub(text, secrets))
        case ResourceLinkPart(description=str(description)):
            return replace(part, description=scrub(description, secrets))
        case _:
            return part


def _masked_json(value: Any, secrets: Collection[str]) -> Any:
    match value:
        case str():
            return scrub(value, secrets)
        case dict():
            return {key: _masked_json(item, secrets) for key, item in value.items()}
        case list():
            return [_masked_json(item, secrets) for item in value]
        case _:
            return value
