"""Node contexts with the KNIME runtime's signatures and checks (knext-api 3), as in ``knime.extension.nodes``.

KNIME builds these around a Java-side context object (``java_ctx``); tests use the no-argument contexts of
``knime.extension.testing`` instead, which subclass these. Mirrored: ``flow_variables`` is a
``collections.UserDict`` with KNIME's key rules (``str`` keys, no new ``knime*`` names, no deletion);
``set_progress`` type and range checks; ``get_workflow_data_area_dir`` is computed, not created; the connected
port numbers are 1 per plain port (even an unconnected optional one) and the size of each port group, read from the
port maps of the Java-side context (``get_input_port_map``/``get_output_port_map``). Stricter than
KNIME: unsupported flow variable values raise ``TypeError`` when set, not when KNIME reads them back after
the node ran.
"""

from __future__ import annotations

import os
from collections import UserDict
from dataclasses import dataclass
from typing import Any

from knime.extension._ports import PortGroup

_FLOW_VARIABLE_TYPES = (bool, int, float, str)


@dataclass(frozen=True)
class Credential:
    username: str
    password: str
    credential_name: str


class _FlowVariables(UserDict):
    """Flow variables as KNIME hands them to a node; incoming ``knime*`` variables are read-only."""

    def __init__(self, initial: dict[str, Any] | None = None) -> None:
        self._locked = False
        super().__init__(initial or {})
        self._locked = True

    def __setitem__(self, key: str, value: Any) -> None:
        if not isinstance(key, str):
            raise TypeError("the flow variable name must be a string")
        if self._locked and key.startswith("knime"):
            raise ValueError("setting or changing a flow variable that starts with 'knime' is not allowed")
        _check_flow_variable_value(key, value)
        super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        raise RuntimeError("deleting flow variables is not allowed")


def _check_flow_variable_value(key: str, value: Any) -> None:
    """KNIME stores bool/int/float/str and non-empty lists of one of them (Java Boolean/Integer/Long/Double/String)."""
    items = value if isinstance(value, list) else [value]
    kinds = {bool if isinstance(v, bool) else type(v) for v in items}
    if len(kinds) != 1 or not kinds <= set(_FLOW_VARIABLE_TYPES):
        raise TypeError(f"Flow variable '{key}' has an unsupported value {value!r}")
    if any(type(v) is int and not -(2**63) <= v < 2**63 for v in items):
        raise TypeError(f"Flow variable '{key}' does not fit into a Java long: {value!r}")


def _checked_progress(progress: float, message: str | None) -> float:
    """The runtime's ``set_progress`` argument rules; returns the progress clamped to [0, 1]."""
    if isinstance(progress, int):
        progress = float(progress)
    if not isinstance(progress, float):
        raise TypeError(f"progress must be of type float. Got {type(progress)}.")
    if progress < -0.0001 or progress > 1.0001:
        raise ValueError("progress must be between 0.0 and 1.0.")
    if message is not None and not isinstance(message, str):
        raise TypeError("message must be a str or None.")
    return min(1.0, max(0.0, progress))


class _BaseContext:
    def __init__(self, java_ctx: Any, flow_variables: dict[str, Any]) -> None:
        self._java_ctx = java_ctx
        self._flow_variables = _FlowVariables(flow_variables)

    @property
    def flow_variables(self) -> _FlowVariables:
        return self._flow_variables

    def get_credential_names(self) -> list[str]:
        return list(self._java_ctx.get_credential_names())

    def get_credentials(self, identifier: str) -> Credential:
        """The credentials flow variable ``identifier``; ``KeyError`` if there is none."""
        try:
            username, password, name = self._java_ctx.get_credentials(identifier)
        except KeyError:
            raise KeyError(f"Error retrieving credentials for identifier: {identifier}") from None
        return Credential(username, password, name)


class ConfigurationContext(_BaseContext):
    """Passed to ``configure``."""

    def __init__(
        self,
        java_ctx: Any,
        flow_variables: dict[str, Any],
        input_ports: list[Any] | None = None,
        output_ports: list[Any] | None = None,
    ) -> None:
        super().__init__(java_ctx, flow_variables)
        self._input_ports, self._output_ports = input_ports, output_ports

    def set_warning(self, message: str) -> None:
        self._java_ctx.set_warning(str(message))

    def get_connected_input_port_numbers(self) -> list[int]:
        """One entry per declared port: ``1`` for a plain port, even an unconnected optional one; for a port group
        the number of ports it has."""
        return _connected(self._input_ports, self._java_ctx.get_input_port_map())

    def get_connected_output_port_numbers(self) -> list[int]:
        return _connected(self._output_ports, self._java_ctx.get_output_port_map())


def _connected(ports: list[Any] | None, port_map: dict[str, list[int]]) -> list[int]:
    assert ports is not None
    port_map = dict(port_map)
    return [len(port_map.get(port.name, [])) if isinstance(port, PortGroup) else 1 for port in ports]


class ExecutionContext(ConfigurationContext):
    """Passed to ``execute``."""

    def set_progress(self, progress: float, message: str | None = None) -> None:
        progress = _checked_progress(progress, message)
        if message is None:
            self._java_ctx.set_progress(progress)
        else:
            self._java_ctx.set_progress(progress, message)

    def is_canceled(self) -> bool:
        return self._java_ctx.is_canceled()

    def get_workflow_temp_dir(self) -> str:
        return self._java_ctx.get_workflow_temp_dir()

    def get_workflow_data_area_dir(self) -> str:
        return os.path.join(self._java_ctx.get_workflow_dir(), "data")

    def get_knime_home_dir(self) -> str:
        return self._java_ctx.get_knime_home_dir()


class DialogCreationContext(_BaseContext):
    """Passed to dialog callables such as ``StringParameter(choices=...)``; never to configure/execute."""

    def __init__(self, java_ctx: Any, flow_variables: dict[str, Any], specs_to_python_converter: Any) -> None:
        super().__init__(java_ctx, flow_variables)
        self._python_specs = specs_to_python_converter(java_ctx.get_input_specs())

    def get_input_specs(self) -> list[Any]:
        return self._python_specs

    def get_flow_variables(self) -> _FlowVariables:
        return self._flow_variables
