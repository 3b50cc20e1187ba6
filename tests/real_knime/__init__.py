"""KNIME's real node backend for tests, with a test double of KNIME's Java side (``KNIME_MCP_TEST_API=real``).

- :mod:`real_knime.sources`: where KNIME's own Python sources are (test data outside the repository).
- :mod:`real_knime.driver`: ``source_table``, ``configure_node``, ``execute_node``, ``NodeCanceled`` and the
  settings and port-object functions, as in ``knext_host_tools``, running nodes through ``_node_backend_launcher`` as
  KNIME does; also what only the launcher builds: ``describe_node``, ``categories``, ``dialog``.
- :mod:`real_knime.java`: the Java objects KNIME hands the launcher (data sinks and sources, port objects, file
  stores, callbacks, contexts), modelled on what KNIME sends.
- :mod:`real_knime.value_types`: the column types KNIME registers (PNG images, workflow tools).
- :mod:`real_knime.gateway`: the only adapters of KNIME's code, for the three calls that need a live py4j gateway:
  ``client_server.jvm`` (the columnar schema ``ArrowDataSink`` reports), ``_to_java_list`` (outputs go to Java as a
  list) and ``_create_linked_hashmap`` (flow variables go to Java as a map that accepts only what py4j can send).
"""
