"""KNIME I/O: this extension's chat model port, from the Chat Model Connector to the agent nodes.

The port carries a :class:`ChatModelConfig` (provider, endpoint, model, the *name* of the credential holding the API
key) and never the key: the agent nodes read the credential when they execute (``nodes.knime_io.agent_run``).
"""

from __future__ import annotations

from typing import Any

import knime.extension as knext

from knime_mcp.llm.chat_model import ChatModelConfig

__all__ = ["CHAT_MODEL_PORT_ID", "ChatModelPortObject", "ChatModelSpec", "chat_model_port_type"]

CHAT_MODEL_PORT_ID = "io.github.knime_mcp.agent.chat_model"
"""Fixed, so that saved workflows keep working when the classes move."""


class ChatModelSpec(knext.PortObjectSpec):
    """What downstream nodes know before execution: the whole configuration (it holds no secret)."""

    def __init__(self, config: ChatModelConfig) -> None:
        self._config = config

    @property
    def config(self) -> ChatModelConfig:
        return self._config

    def serialize(self) -> dict[str, Any]:
        return self._config.to_dict()

    @classmethod
    def deserialize(cls, data: dict[str, Any], java_callback: Any = None) -> ChatModelSpec:
        return cls(ChatModelConfig.from_dict(data))


class ChatModelPortObject(knext.PortObject):
    """The model itself is built from the spec at execution time, so the object stores nothing more."""

    @property
    def config(self) -> ChatModelConfig:
        return self.spec.config  # type: ignore[attr-defined, no-any-return]

    def serialize(self) -> bytes:
        return b""

    @classmethod
    def deserialize(cls, spec: ChatModelSpec, storage: bytes) -> ChatModelPortObject:
        return cls(spec)


chat_model_port_type = knext.port_type("MCP Chat Model", ChatModelPortObject, ChatModelSpec, id=CHAT_MODEL_PORT_ID)
