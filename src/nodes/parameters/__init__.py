"""Parameters: the settings the nodes declare alike, each parameter group a class KNIME renders as one section of
the dialog (server, authentication, TLS, timeouts, tool selection) and factories for settings saved at a node's top
level (agent, tool policy, approval, team seal key), with their translation into the core's configuration.
Imports no other room of the node layer."""
