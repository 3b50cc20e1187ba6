"""How a node's declared ports become connected ports, shared by both test hosts (``knext_host_tools`` and
``real_knime.driver``), so the stand-in and the real-API driver lay ports out the same way.

A declared port is a plain port (one connected port, or none when it is optional and unconnected) or a port group
(as many connected ports as the user added, possibly none). A test passes a port group's value as a list (one item
per added port) and gets a list back for an output group. Each host builds a :class:`PortLayout` with its own
``PortGroup`` class: nothing here imports either host's ``knime`` package.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


class PortLayout:
    """The port layout of nodes whose port groups are instances of ``group_class``."""

    def __init__(self, group_class: type) -> None:
        self._group_class = group_class

    def is_group(self, port: Any) -> bool:
        return isinstance(port, self._group_class)

    def check_inputs(self, node_id: str, ports: Sequence[Any], inputs: Sequence[Any]) -> None:
        """One input per declared port: a list without ``None`` for a group, ``None`` only for an optional port."""
        if len(inputs) != len(ports):
            raise TypeError(f"{node_id} has {len(ports)} input ports, got {len(inputs)} inputs")
        for port, value in zip(ports, inputs, strict=True):
            if self.is_group(port):
                if not isinstance(value, list) or any(item is None for item in value):
                    raise TypeError(f"Port group '{port.name}' needs a list with one input per port, got {value!r}")
            elif value is None and not port.optional:
                raise ValueError(
                    f"Input port '{port.name}' is not optional; KNIME runs a node only when it is connected"
                )

    def items(self, port: Any, value: Any) -> list[Any]:
        """The connected ports' values of one declared port: a group's list, a plain port's value, or none."""
        if self.is_group(port):
            return list(value)
        return [] if value is None else [value]

    def input_sizes(self, ports: Sequence[Any], inputs: Sequence[Any]) -> list[int]:
        """The number of connected ports of each declared input port."""
        return [len(self.items(port, value)) for port, value in zip(ports, inputs, strict=True)]

    def output_sizes(self, node_id: str, ports: Sequence[Any], output_groups: Mapping[str, int] | None) -> list[int]:
        """The number of connected ports of each declared output port: ``output_groups`` gives a group's (default
        0), a plain port has one."""
        groups = dict(output_groups or {})
        known = {port.name for port in ports if self.is_group(port)}
        if set(groups) - known:
            raise ValueError(
                f"{node_id} has no output port groups {sorted(set(groups) - known)}; it has {sorted(known)}"
            )
        return [groups.get(port.name, 0) if self.is_group(port) else 1 for port in ports]

    def port_map(self, ports: Sequence[Any], sizes: Sequence[int], side: str) -> dict[str, list[int]]:
        """KNIME's map from declared ports to positions among the connected ones: a group or an optional port by its
        name (an unconnected optional port is left out), any other port as ``"<side> <name> # <port index>"``."""
        port_map: dict[str, list[int]] = {}
        position = 0
        for index, (port, size) in enumerate(zip(ports, sizes, strict=True)):
            group = self.is_group(port)
            if size or group:
                name = port.name if group or port.optional else f"{side} {port.name} # {index}"
                port_map[name] = list(range(position, position + size))
            position += size
        return port_map

    @staticmethod
    def connected(ports: Sequence[Any], sizes: Sequence[int], count: int) -> list[Any]:
        """The declared port of each of ``count`` values handed on, one per connected port. What KNIME does with
        another number of values happens on its Java side, outside KNIME's Python sources; here it fails with both
        counts."""
        if count != sum(sizes):
            raise RuntimeError(f"The node returned {count} port objects for {sum(sizes)} output ports")
        return [port for port, size in zip(ports, sizes, strict=True) for _ in range(size)]

    def grouped(self, values: Sequence[Any], ports: Sequence[Any], sizes: Sequence[int]) -> list[Any]:
        """What downstream nodes receive: ``values``, one per connected port, regrouped (a list for a port group)."""
        self.connected(ports, sizes, len(values))
        remaining = iter(values)
        result = []
        for port, size in zip(ports, sizes, strict=True):
            items = [next(remaining) for _ in range(size)]
            result.append(items if self.is_group(port) else items[0])
        return result
