"""MCP resources as this project's own values: listing rows, template rows and the contents of a read.

Layer: wire, the MCP client's values as :mod:`knime_mcp.tools.tool` holds tools';
:class:`~knime_mcp.mcp.client.McpClient` converts the SDK's types with these, and the CLI prints them, so SDK models
never reach a table or the terminal. Templates are filled with the SDK's own
RFC 6570 implementation, so a URI comes out exactly as the server's SDK matches it.

    template = (await client.list_resource_templates())[0]
    contents = await client.read_resource(template.fill({"resourceId": "1"}))
    print(contents[0].text or contents[0].data)
"""

from __future__ import annotations

import base64
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import mcp_types
from mcp.shared.uri_template import InvalidUriTemplate, UriTemplate

from knime_mcp.errors import ResourceError, scrub

__all__ = [
    "ContentAnnotations",
    "MCPResource",
    "MCPResourceTemplate",
    "ResourceContent",
    "fill_template",
    "read_contents",
    "read_refused",
]

_RESOURCE_NOT_FOUND = -32002
"""The JSON-RPC error code the MCP specification gives an unknown resource URI."""

_UNKNOWN = ("not found", "unknown resource")
"""How servers that answer an unknown URI with another code (an internal error, say) word it."""


@dataclass(frozen=True, kw_only=True)
class ContentAnnotations:
    """Hints on whom a resource is for and how much it matters."""

    audience: tuple[str, ...] = ()
    """``user`` and/or ``assistant``; empty when the server did not say."""
    priority: float | None = None
    """0 (optional) to 1 (required)."""
    last_modified: str | None = None
    """An ISO 8601 timestamp."""

    @classmethod
    def from_sdk(cls, annotations: mcp_types.Annotations | None) -> ContentAnnotations | None:
        if annotations is None:
            return None
        return cls(
            audience=tuple(annotations.audience or ()),
            priority=annotations.priority,
            last_modified=annotations.last_modified,
        )


@dataclass(frozen=True, kw_only=True)
class MCPResource:
    """One resource a server lists.

    resources = await client.list_resources()
    contents = await client.read_resource(resources[0].uri)
    """

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    """The size in bytes, when the server knows it."""
    annotations: ContentAnnotations | None = None
    meta: dict[str, Any] | None = None
    """The entry's ``_meta`` (an MCP App's ``ui`` settings, say); not part of :meth:`to_dict`."""

    @classmethod
    def from_sdk(cls, resource: mcp_types.Resource) -> MCPResource:
        return cls(
            uri=str(resource.uri),
            name=resource.name,
            title=resource.title,
            description=resource.description,
            mime_type=resource.mime_type,
            size=resource.size,
            annotations=ContentAnnotations.from_sdk(resource.annotations),
            meta=resource.meta,
        )

    def to_dict(self) -> dict[str, Any]:
        data = _as_dict(self)
        del data["meta"]
        return data


@dataclass(frozen=True, kw_only=True)
class MCPResourceTemplate:
    """A family of resources a server offers under an RFC 6570 URI template.

    template = (await client.list_resource_templates())[0]
    contents = await client.read_resource(template.fill({"id": "7"}))
    """

    uri_template: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    annotations: ContentAnnotations | None = None

    @classmethod
    def from_sdk(cls, template: mcp_types.ResourceTemplate) -> MCPResourceTemplate:
        return cls(
            uri_template=template.uri_template,
            name=template.name,
            title=template.title,
            description=template.description,
            mime_type=template.mime_type,
            annotations=ContentAnnotations.from_sdk(template.annotations),
        )

    @property
    def variables(self) -> list[str]:
        """The template's variables, in order."""
        return _parse(self.uri_template).variable_names

    def fill(self, arguments: Mapping[str, str | Sequence[str]]) -> str:
        return fill_template(self.uri_template, arguments)

    def to_dict(self) -> dict[str, Any]:
        return {**_as_dict(self), "variables": self.variables}


def fill_template(template: str, arguments: Mapping[str, str | Sequence[str]]) -> str:
    """The URI ``template`` names with ``arguments`` filled in.

    RFC 6570 leaves a variable without a value out, which for a path segment makes another URI than the one meant:
    every variable but the optional query ones (``{?page}``) must be given.
    """
    parsed = _parse(template)
    missing = [name for name in parsed.variable_names if name not in arguments]
    required = [name for name in missing if name not in parsed.query_variable_names]
    if required:
        raise ResourceError(
            f"The resource template {template!r} needs the argument {', '.join(map(repr, required))}.",
            hint=f"Give a value for each of its variables: {', '.join(parsed.variable_names)}.",
        )
    try:
        return parsed.expand(arguments)
    except TypeError as exc:
        raise ResourceError(f"The arguments for resource template {template!r} must be text: {exc}.") from exc


def _parse(template: str) -> UriTemplate:
    try:
        return UriTemplate.parse(template)
    except InvalidUriTemplate as exc:
        raise ResourceError(f"{template!r} is not a URI template this client can fill: {exc}.") from exc


@dataclass(frozen=True, kw_only=True)
class ResourceContent:
    """One item of what a read returned: text, or binary data decoded from the base64 the server sent."""

    uri: str
    mime_type: str | None = None
    text: str | None = None
    data: bytes | None = None
    """The binary contents; None for text."""
    meta: dict[str, Any] | None = None
    """The item's ``_meta`` (an MCP App's ``ui`` settings: :mod:`knime_mcp.mcp.app_resource`); not part of
    :meth:`to_dict`."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: text as it is, binary data as base64 with its size in bytes."""
        item: dict[str, Any] = {"uri": self.uri, "mime_type": self.mime_type}
        if self.data is None:
            return {**item, "text": self.text}
        return {**item, "blob": base64.b64encode(self.data).decode("ascii"), "size": len(self.data)}

    def masked(self, secrets: Collection[str]) -> ResourceContent:
        """The contents with every secret value in their text masked: servers quote what they were given."""
        return self if self.text is None else replace(self, text=scrub(self.text, secrets))


def read_contents(
    result: mcp_types.ReadResourceResult, *, uri: str, server: str, max_bytes: int | None = None
) -> list[ResourceContent]:
    """The contents of a read; binary contents larger than ``max_bytes`` (decoded) fail the read, so that a
    caller's limit holds however large a server's answer is (the transport's own limit is
    :data:`~knime_mcp.net.http_pool.MAX_MESSAGE_BYTES` per message)."""
    contents: list[ResourceContent] = []
    for item in result.contents:
        if isinstance(item, mcp_types.TextResourceContents):
            contents.append(
                ResourceContent(uri=str(item.uri), mime_type=item.mime_type, text=item.text, meta=item.meta)
            )
            continue
        data = base64.b64decode(item.blob)
        if max_bytes is not None and len(data) > max_bytes:
            raise ResourceError(
                f"Resource {uri!r} holds {len(data):,} bytes of binary contents, more than the limit of "
                f"{max_bytes:,} bytes.",
                server=server,
                hint="Raise the size limit, or read a smaller resource.",
            )
        contents.append(ResourceContent(uri=str(item.uri), mime_type=item.mime_type, data=data, meta=item.meta))
    return contents


def read_refused(uri: str, code: int, message: str, server: str) -> ResourceError:
    """The server's JSON-RPC error for a read, saying what to do: an unknown URI (the usual case) is told apart from
    a read that failed on the server."""
    said = " ".join(message.split())
    if code in (_RESOURCE_NOT_FOUND, mcp_types.INVALID_PARAMS) or any(word in said.lower() for word in _UNKNOWN):
        return ResourceError(
            f"The server has no resource at {uri!r} ({said}).",
            server=server,
            hint="List the server's resources and resource templates to see the URIs it serves.",
        )
    return ResourceError(f"The server could not read resource {uri!r}: {said}", server=server)


def _as_dict(row: MCPResource | MCPResourceTemplate) -> dict[str, Any]:
    data = dict(vars(row))
    if row.annotations is not None:
        data["annotations"] = {**vars(row.annotations), "audience": list(row.annotations.audience)}
    return data
