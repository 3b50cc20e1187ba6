"""What MCP sessions and HTTP tools share below them: one HTTP connection pool, bounded reads, the circuit breaker,
the SSRF guard for addresses that come from data, and masking secrets in the HTTP libraries' logs."""
