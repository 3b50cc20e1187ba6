"""The agent: a chat model's tool-calling loop over MCP, HTTP and KNIME workflow tools, and its conversation."""
