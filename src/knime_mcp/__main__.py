from knime_mcp.cli import run

run()
