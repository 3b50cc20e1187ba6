"""Test layer: the Agent Chat's view data service on whichever host runs the node tests.

On the real API the service KNIME's UI reaches when the view opens (KNIME's launcher: ``getDataService``, then
``handleJsonRpcRequest``); on the headless stand-in, which has no view machinery, the node's own ``get_data_service``,
called by name as KNIME's bridge calls it. Either way ``service.request("send", "Hi")``.

    service = view_service(AgentChat(), chat_model_port(endpoint.base_url), tools, CREDENTIALS)
    service.request("send", "Hi"); until(service, lambda event: event["type"] == "turn_end")
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import knext_bootstrap
from node_contexts import ExecuteContext

__all__ = ["until", "view_service"]


class _StandInService:
    """The node's own data service, its methods called by name."""

    def __init__(self, service: Any) -> None:
        self._service = service

    def request(self, method: str, *args: Any) -> Any:
        return getattr(self._service, method)(*args)


def view_service(node: Any, model: Any, tools: Any, credentials: dict[str, tuple[str, str]]) -> Any:
    """The data service of ``node``'s view over ``model`` and ``tools`` (no history, no data tables)."""
    ctx = ExecuteContext(credentials)
    if knext_bootstrap.REAL_KNIME:
        from real_knime.driver import data_service

        return data_service(node, ctx, model, tools, None, [])
    return _StandInService(node.get_data_service(ctx, model, tools, None, []))


def until(service: Any, check: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """Polls as the page does until an event ``check`` accepts arrives; the last such event."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = [event for event in service.request("poll", 0)["events"] if check(event)]
        if found:
            return found[-1]
        time.sleep(0.02)
    raise AssertionError("The event did not come")
