"""Stand-ins for KNIME workflow tools, which exist only inside KNIME 5.5+ and which the headless host cannot run.

``StandInWorkflowTool`` has the documented fields of ``knime.types.tool.WorkflowTool``; ``ExecutesWorkflowTools``
gives an execution context KNIME's private ``_execute_tool``, which records each call (and the thread it came from)
and answers in the shape of the KNIME version given, or fails as KNIME does (``RuntimeError`` with the message).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any


@dataclass
class StandInWorkflowTool:
    name: str
    description: str
    parameter_schema: dict[str, Any]
    message_output_port_index: int = 0
    input_ports: list[Any] | None = None
    output_ports: list[Any] | None = None


class ExecutesWorkflowTools:
    """Mix into a context class, or use alone; call ``_setup_tools`` from ``__init__``."""

    def _setup_tools(self, version: str = "5.6", failure: str | None = None) -> None:
        self.version = version
        self.failure = failure
        self.calls: list[tuple[Any, dict[str, Any], list[Any], dict[str, str]]] = []
        self.threads: list[int] = []

    def _execute_tool(self, tool: Any, parameters: dict[str, Any], inputs: list[Any], hints: dict[str, str]) -> Any:
        """``(message, outputs)`` in KNIME 5.5, ``(message, outputs, view_node_ids)`` since 5.6."""
        self.calls.append((tool, parameters, inputs, hints))
        self.threads.append(threading.get_ident())
        if self.failure:
            raise RuntimeError(self.failure)
        message = f"{tool.name} processed {parameters}"
        return (message, []) if self.version == "5.5" else (message, [], ["view-1"])
