"""The wire to chat model providers: a LangChain chat model from its settings, and its errors in knime-mcp's terms,
for the agent and for servers that ask the client to sample."""
