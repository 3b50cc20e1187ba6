"""The Agent Chat view's data service answers only the methods it declares: a page message naming any other
attribute (``__setattr__``, ``__class__``, ``_session``, …) is "method not found" and nothing runs, through the
stand-in's bridge (tests/view_harness.py) and through KNIME's own ``_JsonRpcDataService`` (both API versions)."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Any

import pytest

from fakes.fake_chat_session import FakeChatSession
from nodes.agent_chat.service import ChatViewService, DeclaredMethods
from view_harness import answer_json_rpc

NOT_DECLARED = [
    ("__setattr__", ["_show_tool_calls", False]), ("__setattr__", ["_session", None]), ("__class__", []),
    ("__init__", [None]), ("__getattribute__", ["_session"]), ("__dict__", []), ("_session", []),
    ("__reduce_ex__", [2]), ("methods", []), ("get_view_data", []), ("__dir__", []),
]  # fmt: skip
"""Page messages naming attributes that are not the page's methods."""


def _script(session: FakeChatSession, text: str) -> None:
    session.emit("assistant", text="Hi.")


def _ask(bridge: Callable[[str], str], method: str, params: list[Any]) -> dict[str, Any]:
    return json.loads(bridge(json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})))


def _check(bridge: Callable[[str], str], session: FakeChatSession) -> None:
    for method, params in NOT_DECLARED:
        answer = _ask(bridge, method, params)
        assert answer["error"]["code"] == -32601, (method, answer)
    # Nothing changed: the declared methods still answer, with the settings and the session they had
    settings = {"show_tool_calls": True, "show_apps": True}
    assert _ask(bridge, "init", [])["result"] == {**settings, "events": [], "running": False}
    assert _ask(bridge, "send", ["Hello"])["result"] is None
    assert session.events()[0] == {"seq": 1, "type": "user", "text": "Hello"}


def test_the_data_service_answers_only_its_declared_methods() -> None:
    session = FakeChatSession(_script)
    service = DeclaredMethods(ChatViewService(session, show_tool_calls=True))  # type: ignore[arg-type]
    _check(lambda request: answer_json_rpc(service, request), session)
    with pytest.raises(AttributeError):
        service._session = None  # type: ignore[attr-defined]


@pytest.mark.knime_node
@pytest.mark.knime_launcher
def test_knimes_own_bridge_reaches_only_the_declared_methods() -> None:
    import _node_backend_launcher as launcher

    session = FakeChatSession(_script)
    service = DeclaredMethods(ChatViewService(session, show_tool_calls=True))  # type: ignore[arg-type]
    registry = [None] if len(inspect.signature(launcher._JsonRpcDataService).parameters) == 2 else []  # 5.6+
    _check(launcher._JsonRpcDataService(*registry, service).handleJsonRpcRequest, session)
