"""HTTP tools beside MCP tools: the operations of an OpenAPI document, and webhooks, each a tool with a JSON contract.

An HTTP tool is an :class:`~knime_mcp.tools.tool.MCPTool` whose ``http`` says how its arguments become a request
(:class:`HttpOperation`); its ``server`` is the API's base URL, or the webhook's URL, with the authentication,
headers and timeouts an MCP server's spec has. So tables, seals, the tool policy and the SSRF guard treat both kinds
alike, and one tools table can hold both.
"""

from knime_mcp.tools.http_operation import BODY_ARGUMENTS, HttpOperation, HttpParameter, ParameterLocation

__all__ = ["BODY_ARGUMENTS", "HttpOperation", "HttpParameter", "ParameterLocation"]
