"""The tools of an API description, an OpenAPI document or a UTCP manual alike, judged by where they send requests.

Layer: above :mod:`knime_mcp.http.openapi` and :mod:`knime_mcp.http.utcp_manual` (which make the tools) and
:mod:`knime_mcp.http.origins` (which decides which may carry the credential and be sealed), below
:mod:`knime_mcp.calls.listing`, which shapes them as the MCP provider does.

    tools, notes = description_tools(await load_document(source), auth=auth, seal=True)
"""

from __future__ import annotations

from knime_mcp.config import DEFAULT_TIMEOUTS, DEFAULT_TLS, AuthRef, Timeouts, TlsSettings
from knime_mcp.http.document import ApiDescription, OpenApiDocument
from knime_mcp.http.openapi import DocumentApiKey, api_key_scheme, openapi_tools
from knime_mcp.http.origins import judge_servers, missing_credential_note
from knime_mcp.http.utcp_manual import manual_api_key_name, manual_credential_note, utcp_tools
from knime_mcp.tools.tool import MCPTool

__all__ = ["description_tools"]


def description_tools(
    description: ApiDescription,
    *,
    base_url: str | None = None,
    auth: AuthRef | DocumentApiKey | None = None,
    timeouts: Timeouts = DEFAULT_TIMEOUTS,
    tls: TlsSettings = DEFAULT_TLS,
    max_response_bytes: int | None = None,
    seal: bool,
) -> tuple[list[MCPTool], list[str]]:
    """The description's tools that may call where they call, sealed if ``seal`` where they call the person's
    origin, and the notes on what was left out or counts as data. An API key whose name is left to the description
    takes the OpenAPI document's security scheme's, or the UTCP manual's ``api_key`` auth's."""
    openapi = isinstance(description, OpenApiDocument)
    if isinstance(auth, DocumentApiKey):
        named = api_key_scheme(description, auth.kind) if openapi else manual_api_key_name(description, auth.kind)
        auth = auth.named(named)
    limits = {"timeouts": timeouts, "tls": tls, "max_response_bytes": max_response_bytes}
    if isinstance(description, OpenApiDocument):  # narrows the type, as ``openapi`` cannot
        tools, left_out = openapi_tools(description, base_url=base_url, auth=auth, **limits), []
    else:
        tools, left_out = utcp_tools(description, base_url=base_url, auth=auth, **limits)
    credential = auth is not None and auth.kind != "none"
    tools, notes = judge_servers(
        tools,
        description.url,
        base_url=base_url,
        credential=credential,
        seal=seal,
        described_as="OpenAPI document" if openapi else "UTCP manual",
    )
    if not credential and tools:
        notes += missing_credential_note(description) if openapi else manual_credential_note(description)
    return tools, left_out + notes
