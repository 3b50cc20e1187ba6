"""The ``knime-mcp`` command line: the core's features outside KNIME."""
