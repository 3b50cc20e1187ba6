"""The agent: a chat model's tool-calling loop over MCP, HTTP and KNIME workflow tools, with its tool call log and
data repository (its conversation's table form is :mod:`knime_mcp.conversation`)."""
