"""KNIME node classes: thin shells over knime_mcp (parameters, ports, one core call, progress and cancel)."""

CATEGORY = "/community/mcp"
"""Where the nodes appear in KNIME's node repository; registered by extension.py."""
