"""Tools as values every layer passes around (MCPTool, its table forms, results), their schemas and policy, and the
dispatcher that calls any tool: MCP, HTTP or one that runs in this process."""
