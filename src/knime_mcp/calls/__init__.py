"""Running any tool, whatever it is: the dispatcher (MCP, HTTP, in-process), the run's session pool, the providers'
listings, and what every row-by-row run shares. Every feature (agent, caller, catalog) calls through here."""
