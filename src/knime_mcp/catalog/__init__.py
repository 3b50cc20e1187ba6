"""The Resource Reader's and the Prompt node's behaviour: MCP resources and prompts read row by row into tables (their
values are the MCP client's: :mod:`knime_mcp.mcp.resources`, :mod:`knime_mcp.mcp.prompts`)."""
