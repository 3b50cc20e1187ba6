"""Talking to MCP servers: transports, one session per server shared by a run's calls, what servers ask back, and
the resources and prompts they offer as this project's values."""
