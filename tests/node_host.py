"""The host that node tests drive: the headless stand-in (``tests/knext_host``) or KNIME's real node backend.

Node tests import only this module for running nodes, so one test body runs on both hosts:

    spec, = node_host.configure_node(node, ConfigureContext(), tools.schema)
    out, = node_host.execute_node(node, ExecuteContext(), tools)

``configure_node``/``execute_node`` return what downstream nodes receive; ``source_table`` builds an ``execute``
input as KNIME passes it; ``NodeCanceled`` is raised when the node was canceled. ``save_settings``,
``load_settings`` and ``validate_settings`` handle settings as KNIME saves, loads and checks them, for the extension
version ``EXTENSION_VERSION``; ``save_port_object``/``load_port_object`` keep a custom port object as a saved
workflow does. ``knext_bootstrap`` chooses the host. ``set_parameters`` sets a node's grouped parameters as
``group__name`` keywords.

Only KNIME's launcher renders node descriptions and dialogs, so ``describe_node``, ``categories`` and ``dialog``
exist on the real API only; tests using them are marked ``knime_launcher`` and collected on that leg only
(``tests/conftest.py``).
"""

from __future__ import annotations

from typing import Any

import knext_bootstrap

if knext_bootstrap.REAL_KNIME:
    from real_knime.driver import VERSION as EXTENSION_VERSION
    from real_knime.driver import (
        NodeCanceled,
        categories,
        configure_node,
        describe_node,
        dialog,
        execute_node,
        load_port_object,
        load_settings,
        save_port_object,
        save_settings,
        source_table,
        validate_settings,
    )
else:
    from knext_host_tools import (
        EXTENSION_VERSION,
        NodeCanceled,
        configure_node,
        execute_node,
        load_port_object,
        load_settings,
        save_port_object,
        save_settings,
        source_table,
        validate_settings,
    )

__all__ = [
    "EXTENSION_VERSION", "NodeCanceled", "configure_node", "execute_node", "load_port_object", "load_settings",
    "save_port_object", "save_settings", "set_parameters", "source_table", "validate_settings",
]  # fmt: skip
if knext_bootstrap.REAL_KNIME:
    __all__ += ["categories", "describe_node", "dialog"]


def set_parameters(node: Any, **settings: object) -> Any:
    """``node``, with each ``group__name=value`` set on the parameter group ``group`` (KNIME's real API keeps a
    group's values on the class, so a test passes every value an earlier test may have changed)."""
    for path, value in settings.items():
        group, name = path.split("__")
        setattr(getattr(node, group), name, value)
    return node
