"""Where the tools of an OpenAPI document may send their requests, and the person's credential with them.

A document is data wherever it was read from: a hostile one names another host, this machine or a cloud metadata
address as its server (for the whole document, a path or one operation), to receive the API's credential or to
reach the local network from a workflow. So two places only are the person's: the Base URL they set, and the origin
(scheme, host and port) of the URL they read the document from. A tool that calls either carries the credential and
is sealed (unless the address came from data). Any other server the document names, and every server of a document
read from a file, which has no origin:

- with a credential, its operations are left out, with a note; if that leaves none, a ConfigError says to set the
  server as Base URL if it should get the credential;
- without one, its tools are kept unsealed, so that agent and caller nodes check the address as they check a server
  from data (public addresses only, pinned against a second DNS answer), and a note names the server.

Layer: between :mod:`knime_mcp.http.openapi`, which makes the tools, and :mod:`knime_mcp.calls.listing`.

    tools, notes = judge_servers(tools, document.url, credential=True, seal=True)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from knime_mcp.config import ServerSpec
from knime_mcp.errors import ConfigError
from knime_mcp.http.document import OpenApiDocument
from knime_mcp.http.schemas import DocumentSchemas
from knime_mcp.net.urlguard import origin_of, shown_url
from knime_mcp.seal import seal_spec
from knime_mcp.tools.tool import MCPTool

__all__ = ["judge_servers", "missing_credential_note"]


def judge_servers(
    tools: Sequence[MCPTool],
    document_url: str | None,
    *,
    base_url: str | None = None,
    credential: bool,
    seal: bool,
    described_as: str = "OpenAPI document",
) -> tuple[list[MCPTool], list[str]]:
    """The tools that may call where they call, sealed if ``seal`` and on the person's origin, and the notes on the
    others; ``credential``: the tools carry authentication; ``described_as``: what was read (a "UTCP manual")."""
    own = {origin_of(url) for url in (document_url, base_url) if url}
    kept: list[MCPTool] = []
    foreign: dict[str, list[str]] = {}
    sealed: dict[ServerSpec, ServerSpec] = {}
    for tool in tools:
        target = tool.server.target
        if origin_of(target) in own:
            if seal:
                if tool.server not in sealed:  # one spec per server and headers (a UTCP tool's own)
                    sealed[tool.server] = seal_spec(tool.server)
                tool = dataclasses.replace(tool, server=sealed[tool.server])
            kept.append(tool)
            continue
        foreign.setdefault(target, []).append(_label(tool))
        if not credential:
            kept.append(tool)
    whose = f"not where it was read from ({shown_url(document_url)})" if document_url else "read from a file"
    if credential and foreign and not kept:
        target = next(iter(foreign))
        raise ConfigError(
            f"The {described_as}, {whose}, sends its requests to {shown_url(target)}; a credential goes only to the "
            "origin a document was read from or to a Base URL you set.",
            hint=f"Set Base URL to {shown_url(target)} if that server should get the credential.",
        )
    noun = described_as.rpartition(" ")[2]
    notes = [_note(target, labels, f"the {noun} ({whose})", credential) for target, labels in foreign.items()]
    return kept, notes


def _note(target: str, labels: list[str], whose: str, credential: bool) -> str:
    shown = shown_url(target)
    if credential:
        return (
            f"Left out {_operations(labels)}: {whose} sends them to {shown}, and a credential goes only "
            f"to the document's own origin or to a Base URL you set (set it to {shown} to call them there)."
        )
    return (
        f"The tools of {_operations(labels)} call {shown}, a server {whose} names: they count as data, "
        f"so agent and caller nodes call it only at a public address; set Base URL to {shown} to trust it."
    )


def _operations(labels: list[str]) -> str:
    return ", ".join(labels) if len(labels) <= 3 else f"{len(labels)} operations ({', '.join(labels[:3])}, …)"


def _label(tool: MCPTool) -> str:
    return f"{tool.http.method} {tool.http.path}" if tool.http is not None else tool.name


def missing_credential_note(document: OpenApiDocument) -> list[str]:
    """The note for a document whose every operation asks for a credential (a ``security`` requirement at its top,
    without an empty one that makes it optional) when none is set: the tools would call the API without one."""
    required = document.data.get("security")
    if not isinstance(required, list) or not required or not all(isinstance(each, dict) and each for each in required):
        return []
    schemes = (document.data.get("components") or {}).get("securitySchemes") or {}
    schemas = DocumentSchemas(document.data)
    named = []
    for name in dict.fromkeys(name for each in required for name in each):
        scheme = schemas.deref(schemes.get(name), f"security scheme {name}") if name in schemes else None
        kind = scheme.get("scheme") or scheme.get("type") if isinstance(scheme, dict) else None
        named.append(f"{name!r} ({kind})" if isinstance(kind, str) else repr(name))
    return [
        f"The document asks a credential of every operation ({', '.join(named)}), but no authentication is set, so "
        "the tools call the API without a credential; set the Authentication setting to send one"
    ]
