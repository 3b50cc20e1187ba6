"""Finding MCP servers: the MCP Registry's read API (:mod:`~knime_mcp.registry.client`), the presets shipped with the
package (:mod:`~knime_mcp.registry.presets`), and a chosen entry as a server setup (:mod:`~knime_mcp.registry.setup`);
:mod:`~knime_mcp.registry.catalog` is what the CLI, the MCP Tool Provider and the Python API call (``knime_mcp``
exports it). Nothing is imported here, so that the CLI's ``--help`` and the nodes load no HTTP stack for it."""
