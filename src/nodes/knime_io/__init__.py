"""KNIME I/O: the one way between KNIME's values and the core's: tables and their empty cases, the conversation,
PNG image cells, tools tables and KNIME's tool cells, the chat model port, the agent nodes' inputs, credentials and
sign-in, servers' connections, errors and warnings, the team seal. Reads settings (``nodes.parameters``), never a
node module."""
