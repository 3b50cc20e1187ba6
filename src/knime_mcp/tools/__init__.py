"""Tools as values every layer passes around (MCPTool, its hints, its table and Arrow forms, results), their schemas,
names and policy; nothing here connects or calls (that is :mod:`knime_mcp.calls`)."""
