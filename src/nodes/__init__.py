"""The KNIME layer: one module per node (parameters, ports, one call into the core, progress and cancel), above two
rooms they share. ``parameters`` declares the settings several nodes show (each group one section of the dialog)
and translates them into the core's configuration; ``knime_io`` carries values between KNIME and the core (tables,
the conversation, images, tool cells, the chat model port, credentials, errors and warnings, the team seal).
Nothing below a node module imports one (import-linter's contracts in pyproject.toml)."""

CATEGORY = "/community/mcp"
"""Where the nodes appear in KNIME's node repository; registered by extension.py."""
