"""Can a node of this extension take the chat-model port of KNIME's AI extension? What KNIME's real launcher does.

KNIME's AI extension (``knime-python-llm``) registers ``chat_model_port_type`` (``models/base.py``) and, per
connector, a subtype such as "OpenAI Chat Model" (``models/openai.py``), all without an explicit id, so each id is
``<group_id>.<name>.<module>.<class>`` of that extension: ``org.knime.python.llm.models.openai.
OpenAIChatModelPortObject``. KNIME's Java side knows every Python-defined port type as one Java type (see
``real_knime.driver.foreign_port_object``), so it lets such an output be connected to the Agent Prompter's model
port and hands over the spec JSON ``{"id", "data"}`` and the object's file. Then our extension's own launcher
decodes it (``_PortTypeRegistry.spec_to_python`` → ``_extract_port_type_from_spec_data``,
``port_object_to_python``): only by the id, and only among the port types registered in this extension's process.

These tests hand the Agent Prompter the AI extension's OpenAI chat model exactly as KNIME would and assert what
KNIME's launcher does (5.5.3 and master alike): it refuses it with its own error, before our node runs. They would
notice a KNIME that resolves other extensions' port types.

The launcher exists on the real API only, so the module is collected on that leg only (``knime_launcher``).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import knime.extension as knext
import knime.extension.nodes as kn
import pytest

import node_host
from agent_runs import API_KEY, agent_node
from knime_mcp.llm.chat_model import ChatModelConfig
from knime_mcp.tools.table_layout import TOOL_COLUMN
from node_contexts import ConfigureContext, ExecuteContext
from nodes.knime_io.chat_model_port import ChatModelPortObject, ChatModelSpec

pytestmark = [pytest.mark.knime_node, pytest.mark.knime_launcher]

AI_EXTENSION = "org.knime.python.llm"
"""The AI extension's id as KNIME's Java side forms it from its knime.yml: ``group_id.name``."""
CHAT_MODEL = f"{AI_EXTENSION}.models.base.ChatModelPortObject"
"""``chat_model_port_type``: the port KNIME's own Agent Prompter declares."""
OPENAI_CHAT_MODEL = f"{AI_EXTENSION}.models.openai.OpenAIChatModelPortObject"
"""What the AI extension's OpenAI Chat Model Connector outputs (a subtype of the above)."""
OPENAI_SPEC_DATA = {
    "credentials": "openai",
    "base_url": "https://api.openai.com/v1",
    "credential_spec": None,
    "custom_headers": {},
    "model": "gpt-4o-mini",
    "temperature": 0.2,
    "top_p": 0.15,
    "max_tokens": 200,
    "seed": 0,
    "n_requests": 1,
}
"""``OpenAIChatModelPortObjectSpec.serialize()`` of the AI extension (5.5.3 and master): the API key is the credentials
flow variable ``openai``, by name. Its port object serializes to ``b""``."""
UNKNOWN = (
    "The provided input is unknown and therefore incompatible with the expected type MCP Chat Model "
    f"(got {OPENAI_CHAT_MODEL}). Connect one of the following nodes: Chat Model Connector."
)
"""KNIME's own message (``_extract_port_type_from_spec_data``)."""


def _openai_chat_model() -> Any:
    from real_knime.driver import foreign_port_object  # the launcher is importable on the real leg only

    return foreign_port_object(OPENAI_CHAT_MODEL, OPENAI_SPEC_DATA)


def _tools() -> knext.Schema:
    return knext.Schema.from_columns([knext.Column(knext.string(), TOOL_COLUMN)])


def test_knimes_api_cannot_name_a_port_type_another_extension_registered() -> None:
    with pytest.raises(KeyError, match=f"No PortType for id '{CHAT_MODEL}' registered"):
        kn.get_port_type_for_id(CHAT_MODEL)
    assert not kn.has_port_type_for_id(OPENAI_CHAT_MODEL)


def test_configure_refuses_the_ai_extensions_chat_model_with_knimes_error() -> None:
    with pytest.raises(knext.InvalidParametersError) as refused:
        node_host.configure_node(
            agent_node("Hi"),
            ConfigureContext({"openai": ("", API_KEY)}),
            _openai_chat_model().getSpec(),
            _tools(),
            None,
            [],
        )
    assert str(refused.value) == UNKNOWN


def test_execute_refuses_the_ai_extensions_chat_model_with_knimes_error() -> None:
    import pandas as pd

    tools = node_host.source_table(pd.DataFrame({TOOL_COLUMN: pd.Series([], dtype="string")}))
    with pytest.raises(knext.InvalidParametersError) as refused:
        node_host.execute_node(
            agent_node("Hi"), ExecuteContext({"openai": ("", API_KEY)}), _openai_chat_model(), tools, None, []
        )
    assert str(refused.value) == UNKNOWN


class _OpenAILookAlikeSpec(ChatModelSpec):
    """What this extension would have to register to decode the AI extension's OpenAI spec: its data, read by us."""

    @classmethod
    def deserialize(cls, data: dict[str, Any], java_callback: Any = None) -> _OpenAILookAlikeSpec:
        return cls(
            ChatModelConfig(
                base_url=data["base_url"],
                model=data["model"],
                credential=data["credentials"],
                temperature=data["temperature"],
                max_tokens=data["max_tokens"],
            )
        )


class _OpenAILookAlikeObject(ChatModelPortObject):
    pass


@pytest.fixture
def openai_id_registered_here() -> Iterator[None]:
    """The AI extension's OpenAI id registered in this extension's process, with our classes; removed afterwards
    from KNIME's registry (its private dicts: KNIME has no way to unregister)."""
    registry = kn._backend._port_type_registry
    knext.port_type("OpenAI Chat Model", _OpenAILookAlikeObject, _OpenAILookAlikeSpec, id=OPENAI_CHAT_MODEL)
    yield
    del registry._port_types_by_id[OPENAI_CHAT_MODEL]
    del registry._port_types_by_object_class[_OpenAILookAlikeObject]
    del registry._port_types_by_spec_class[_OpenAILookAlikeSpec]


@pytest.mark.usefixtures("openai_id_registered_here")
def test_the_launcher_decodes_it_only_by_an_id_registered_in_this_process() -> None:
    """The one thing missing is the id in our own registry: with it (and classes that are subclasses of the port's
    declared ones) the same spec decodes, read by our class; nothing of the AI extension is imported."""
    ctx = ConfigureContext({"openai": ("", API_KEY)})
    conversation, _, _ = node_host.configure_node(
        agent_node("Hi"), ctx, _openai_chat_model().getSpec(), _tools(), None, []
    )
    assert "Content" in conversation.column_names
    assert not [name for name in sys.modules if name == "models" or name.startswith("models.")]
