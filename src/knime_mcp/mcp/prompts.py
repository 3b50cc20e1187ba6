"""MCP prompts as this project's own values: listing rows with their arguments, and the messages a prompt gives.

Layer: beside :mod:`knime_mcp.mcp.resources`; :class:`~knime_mcp.mcp.client.McpClient` converts the SDK's types with
these. Message content reuses the content parts of :mod:`knime_mcp.tools.results`, so a prompt's images, audio and
embedded resources arrive as a tool result's do.

    prompt = next(p for p in await client.list_prompts() if p.name == "summarise")
    got = await client.get_prompt(prompt, {"topic": "KNIME"})     # a listed prompt: arguments checked first
    print(got.messages[0].role, got.messages[0].content)
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from typing import Any

import mcp_types

from knime_mcp.errors import PromptError, scrub
from knime_mcp.tools.results import ContentPart, content_part, masked_part, part_to_dict

__all__ = ["MCPPrompt", "PromptArgument", "PromptMessage", "RenderedPrompt", "check_arguments", "prompt_refused"]


@dataclass(frozen=True, kw_only=True)
class PromptArgument:
    """One argument a prompt takes; every value is text."""

    name: str
    description: str | None = None
    required: bool = False


@dataclass(frozen=True, kw_only=True)
class MCPPrompt:
    """One prompt a server lists.

    prompts = await client.list_prompts()
    got = await client.get_prompt(prompts[0], {})
    """

    name: str
    title: str | None = None
    description: str | None = None
    arguments: tuple[PromptArgument, ...] = ()

    @classmethod
    def from_sdk(cls, prompt: mcp_types.Prompt) -> MCPPrompt:
        return cls(
            name=prompt.name,
            title=prompt.title,
            description=prompt.description,
            arguments=tuple(
                PromptArgument(name=argument.name, description=argument.description, required=bool(argument.required))
                for argument in prompt.arguments or ()
            ),
        )

    def to_dict(self) -> dict[str, Any]:
        return {**vars(self), "arguments": [vars(argument) for argument in self.arguments]}


def check_arguments(prompt: MCPPrompt, arguments: Mapping[str, str], server: str) -> None:
    """Refuse, before sending, arguments that leave out one the listed prompt requires."""
    missing = [argument.name for argument in prompt.arguments if argument.required and argument.name not in arguments]
    if missing:
        described = ", ".join(f"{a.name}{'' if a.required else ' (optional)'}" for a in prompt.arguments)
        raise PromptError(
            f"Prompt {prompt.name!r} needs the argument {', '.join(map(repr, missing))}; nothing was sent.",
            server=server,
            hint=f"Its arguments: {described}.",
        )


def prompt_refused(name: str, message: str, server: str) -> PromptError:
    """The server's JSON-RPC error for a prompt (unknown, or arguments it refuses), saying what to do."""
    return PromptError(
        f"The server refused prompt {name!r}: {' '.join(message.split())}",
        server=server,
        hint="List the server's prompts to see their names and arguments.",
    )


@dataclass(frozen=True)
class PromptMessage:
    """One message of a prompt: who says it, and one content part (text, image, audio or a resource)."""

    role: str
    content: ContentPart

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role, "content": part_to_dict(self.content)}


@dataclass(frozen=True, kw_only=True)
class RenderedPrompt:
    """What a server gave for a prompt and its arguments: the messages to send a model."""

    description: str | None = None
    messages: tuple[PromptMessage, ...] = ()

    @classmethod
    def from_sdk(cls, result: mcp_types.GetPromptResult) -> RenderedPrompt:
        return cls(
            description=result.description,
            messages=tuple(PromptMessage(message.role, content_part(message.content)) for message in result.messages),
        )

    def to_dict(self) -> dict[str, Any]:
        return {"description": self.description, "messages": [message.to_dict() for message in self.messages]}

    def masked(self, secrets: Collection[str]) -> RenderedPrompt:
        """The prompt with every secret value in its texts masked: servers quote what they were given."""
        messages = tuple(replace(message, content=masked_part(message.content, secrets)) for message in self.messages)
        return replace(self, description=self.description and scrub(self.description, secrets), messages=messages)
