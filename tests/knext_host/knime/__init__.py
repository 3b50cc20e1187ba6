"""Headless stand-in for KNIME's ``knime`` package, used by the tests only when the real one is missing.

It is a regular package on purpose: ``knime.types.*`` (host-provided modules such as ``knime.types.tool``)
must not be importable here, just as outside a KNIME Analytics Platform.
"""
