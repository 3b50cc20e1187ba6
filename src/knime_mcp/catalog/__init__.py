"""MCP resources and prompts: their values, and the Resource Reader's and Prompt node's behaviour."""
