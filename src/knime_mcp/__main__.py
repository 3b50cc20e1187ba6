from knime_mcp.cli.main import run

run()
