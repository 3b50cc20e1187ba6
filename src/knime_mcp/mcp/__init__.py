"""Talking to MCP servers: transports, one session per server shared by a run's calls, and what servers ask back."""
