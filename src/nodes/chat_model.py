"""Chat Model Connector: a source node for an OpenAI-compatible chat model, and this extension's chat model port.

The port carries a :class:`ChatModelConfig` (endpoint, model, the *name* of the credential holding the API key) and
never the key: the Agent Prompter reads the credential when it executes.
"""

from __future__ import annotations

from typing import Any

import knime.extension as knext

from knime_mcp.errors import ConfigError
from knime_mcp.llm.chat_model import DEFAULT_BASE_URL, DEFAULT_REQUEST_TIMEOUT, ChatModelConfig
from nodes import CATEGORY
from nodes._credentials import credential_names
from nodes._errors import knime_errors

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


NO_API_KEY = "<none>"
"""The credential setting of a server that needs no key (as the empty setting of earlier settings)."""


def _api_key_choices(ctx: knext.DialogCreationContext) -> list[str]:
    """No key, then the workflow's credentials. Without a choice for no key the dialog could not go back to it, and
    an empty default would make KNIME take the first credential as the default of new connectors, whose key would then
    go to any server, a local one too. (KNIME refuses an empty choice.)"""
    return [NO_API_KEY, *credential_names(ctx)]


chat_model_port_type = knext.port_type(
    "MCP Chat Model", ChatModelPortObject, ChatModelSpec, id=CHAT_MODEL_PORT_ID
)


@knext.node(
    "Chat Model Connector",
    knext.NodeType.SOURCE,
    "icons/chat_model.png",
    category=CATEGORY,
    id="ChatModelConnector",
)
@knext.output_port("Chat model", "The configured chat model, for the Agent Prompter.", chat_model_port_type)
class ChatModelConnector:
    """Configures an OpenAI-compatible chat model for the Agent Prompter.

    Works with any server that speaks the OpenAI chat completions API and supports tool calling: OpenAI, Azure
    OpenAI (with its OpenAI-compatible endpoint), Ollama, vLLM, LM Studio, llama.cpp's server, OpenRouter and
    the like. Nothing is sent to the server here; the Agent Prompter connects when it executes.

    The API key is read from a **credentials flow variable** (its password field) when the Agent Prompter
    executes; only the credential's name is stored in the settings and in the output port. Choose `<none>` for local
    servers that need no key.
    """

    base_url = knext.StringParameter(
        "Base URL",
        "The API root of the server, e.g. https://api.openai.com/v1, http://localhost:11434/v1 (Ollama) or "
        "http://localhost:8000/v1 (vLLM).",
        DEFAULT_BASE_URL,
    )
    model = knext.StringParameter("Model", "The model's name as the server knows it, e.g. gpt-4o-mini.", "gpt-4o-mini")
    credential = knext.StringParameter(
        "API key credential",
        f"The credentials flow variable whose password is the API key; `{NO_API_KEY}` when the server needs no key.",
        NO_API_KEY,
        choices=_api_key_choices,
    )
    set_temperature = knext.BoolParameter(
        "Set temperature", "Send a sampling temperature; some reasoning models accept only their default.", True
    )
    temperature = knext.DoubleParameter(
        "Temperature", "Lower is more focused and repeatable, higher more varied (0 to 2).", 0.2,
        min_value=0.0, max_value=2.0,
    ).rule(knext.OneOf(set_temperature, [True]), knext.Effect.SHOW)
    max_tokens = knext.IntParameter(
        "Maximum response tokens", "Upper bound on the tokens of one reply; 0 leaves it to the server.", 0,
        min_value=0,
    )
    timeout = knext.DoubleParameter(
        "Request timeout (s)", "Seconds to wait for one reply of the model.", DEFAULT_REQUEST_TIMEOUT,
        min_value=1.0, is_advanced=True,
    )

    def configure(self, ctx: knext.ConfigurationContext) -> ChatModelSpec:
        with knime_errors():
            config = self._config()
            if config.credential and config.credential not in ctx.get_credential_names():
                raise ConfigError(
                    f"Credential {config.credential!r} is not available.",
                    hint="Connect the credentials flow variable that holds the API key, or choose another one.",
                )
        return ChatModelSpec(config)

    def execute(self, ctx: knext.ExecutionContext) -> ChatModelPortObject:
        return ChatModelPortObject(self.configure(ctx))

    def _config(self) -> ChatModelConfig:
        return ChatModelConfig(
            base_url=self.base_url.strip(),
            model=self.model.strip(),
            credential=None if self.credential in ("", NO_API_KEY) else self.credential,
            temperature=self.temperature if self.set_temperature else None,
            max_tokens=self.max_tokens or None,
            timeout=self.timeout,
        )
