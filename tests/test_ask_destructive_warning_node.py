"""*Ask before calling destructive tools* with *Destructive tools* blocking them asks nothing (blocked tools are never
offered): both agent nodes say so at configure, naming the setting to change, and keep the policy as saved."""

from __future__ import annotations

from typing import Any

import pytest

import node_host
from agent_runs import agent_node, chat_model_port, provider_tools_table
from node_contexts import ConfigureContext
from nodes.agent_chat import AgentChat

pytestmark = pytest.mark.knime_node

WARNING = "'Ask before calling destructive tools' is on, but 'Destructive tools' blocks destructive tools"


@pytest.fixture(scope="module")
def tools_table(demo_http_url: str) -> Any:
    return provider_tools_table((demo_http_url, "", {}))


def _chat(**settings: Any) -> AgentChat:
    node = AgentChat()
    for name, value in settings.items():
        setattr(node, name, value)
    return node


def _configured(node: Any, tools_table: Any) -> list[str]:
    """The node's configure warnings."""
    ctx = ConfigureContext()
    model_spec = chat_model_port("http://127.0.0.1:1/v1").spec
    node_host.configure_node(node, ctx, model_spec, tools_table.schema, None, [])
    return ctx.warnings


@pytest.mark.parametrize("make", [lambda **s: agent_node("Hi", **s), _chat], ids=["prompter", "chat"])
@pytest.mark.parametrize("destructive", ["BLOCK", "READ_ONLY"])
def test_asking_about_destructive_tools_the_policy_blocks_is_a_configure_warning_naming_the_setting(
    make: Any, destructive: str, tools_table: Any
) -> None:
    # Given an agent node asking before destructive calls while its policy blocks destructive tools
    node = make(ask_destructive=True, destructive=destructive)
    # When it is configured
    warnings = _configured(node, tools_table)
    # Then the warning says nothing will be asked and which setting to change, and the policy is kept as saved
    assert len(warnings) == 1 and warnings[0].startswith(WARNING), warnings
    assert "set 'Destructive tools' to 'Allow all'" in warnings[0]
    assert node.destructive == destructive


@pytest.mark.parametrize("make", [lambda **s: agent_node("Hi", **s), _chat], ids=["prompter", "chat"])
@pytest.mark.parametrize(("ask", "destructive"), [(True, "ALLOW"), (False, "BLOCK")])
def test_no_warning_when_asking_can_happen_or_was_not_asked_for(
    make: Any, ask: bool, destructive: str, tools_table: Any
) -> None:
    assert _configured(make(ask_destructive=ask, destructive=destructive), tools_table) == []
