"""Chat Model Connector: a source node for a chat model of one of the providers the core serves, at this extension's
chat model port (``nodes.knime_io.chat_model_port``), which carries the *name* of the API key's credential, never
the key."""

from __future__ import annotations

from typing import cast

import knime.extension as knext

from knime_mcp.errors import ConfigError
from knime_mcp.llm.chat_model import DEFAULT_REQUEST_TIMEOUT, PROVIDERS, ChatModelConfig, Provider
from nodes import CATEGORY
from nodes.knime_io.chat_model_port import ChatModelPortObject, ChatModelSpec, chat_model_port_type
from nodes.knime_io.errors import knime_errors
from nodes.parameters.credentials import NO_CREDENTIAL, chosen_credential, credential_names
from nodes.parameters.server import untrusted_hint

NO_API_KEY = NO_CREDENTIAL
"""The credential setting of a server that needs no key."""


class ProviderOptions(knext.EnumParameterOptions):
    """The chat model APIs the core serves: each option's name is a key of :data:`PROVIDERS` in upper case."""

    OPENAI = (
        "OpenAI",
        "OpenAI's chat completions API, which many servers speak too: vLLM, LM Studio, llama.cpp's server, "
        "OpenRouter, Ollama's /v1 endpoint (enter the server's API root as the Base URL).",
    )
    AZURE = (
        "Azure OpenAI",
        "A model deployment of an Azure OpenAI resource: the Base URL is the resource's endpoint, the Model the "
        "deployment's name, and the API version is required.",
    )
    ANTHROPIC = ("Anthropic", "Anthropic's Messages API (Claude models).")
    GEMINI = ("Google Gemini", "Google's Gemini API (generateContent), with a Google AI Studio API key.")
    OLLAMA = ("Ollama", "An Ollama server's own chat API, which needs no API key.")


_DEFAULT_ENDPOINTS = ", ".join(
    f"{info.label}: {info.default_base_url}" for info in PROVIDERS.values() if info.default_base_url
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
    """Configures a chat model of OpenAI, Azure OpenAI, Anthropic, Google Gemini or Ollama for the Agent Prompter.

    Choose the **Provider**, then the model and, where needed, its endpoint. The OpenAI provider also serves any
    server that speaks the OpenAI chat completions API (vLLM, LM Studio, llama.cpp's server, OpenRouter and the
    like) at the Base URL entered. The model must support tool calling. Nothing is sent to the provider here; the
    Agent Prompter connects when it executes.

    The API key is read from a **credentials flow variable** (its password field) when the Agent Prompter
    executes; only the credential's name is stored in the settings and in the output port. Choose `<none>` for
    servers that need no key, such as Ollama or a local OpenAI-compatible server.

    A **Base URL set by a flow variable** may come from data (a table, a web form), so it is treated as a server
    from data is: no API key is sent to it (a credential is refused), it may only be a public http(s) address (not
    this machine, the local network or a cloud metadata service), and the requests go to the address checked. Switch
    on *Trust a Base URL from a flow variable* if the flow variable is yours, e.g. set by a configuration node.
    """

    provider = knext.EnumParameter(
        "Provider",
        "The API the model is served by; settings saved before there was a choice use OpenAI's.",
        ProviderOptions.OPENAI.name,
        ProviderOptions,
        since_version="0.5.0",
    )
    base_url = knext.StringParameter(
        "Base URL",
        f"Where the provider's API is; empty: the provider's own ({_DEFAULT_ENDPOINTS}). Azure OpenAI: required, "
        "the resource's endpoint, e.g. https://my-resource.openai.azure.com. OpenAI: the API root of any server that "
        "speaks its API, e.g. http://localhost:8000/v1 (vLLM). Ollama: its server, e.g. http://gpu-host:11434.",
        "",
    )
    api_version = knext.StringParameter(
        "API version",
        "Azure OpenAI only: the version of Azure's API the requests use, e.g. 2024-10-21 (Azure's documentation "
        "lists the versions it serves).",
        "",
        since_version="0.5.0",
    ).rule(knext.OneOf(provider, [ProviderOptions.AZURE.name]), knext.Effect.SHOW)
    model = knext.StringParameter(
        "Model",
        "The model's name as the provider knows it, e.g. gpt-4o-mini (OpenAI), claude-sonnet-4-5 (Anthropic), "
        "gemini-2.5-flash (Google Gemini), llama3.2 (Ollama); for Azure OpenAI the name of the deployment. The model "
        "must support tool calling.",
        "gpt-4o-mini",
    )
    credential = knext.StringParameter(
        "API key credential",
        "The credentials flow variable whose password is the API key (OpenAI, Azure OpenAI, Anthropic, Google "
        f"Gemini); `{NO_API_KEY}` when the server needs no key (Ollama, a local OpenAI-compatible server).",
        NO_API_KEY,
        choices=credential_names,
    )
    set_temperature = knext.BoolParameter(
        "Set temperature", "Send a sampling temperature; some reasoning models accept only their default.", True
    )
    temperature = knext.DoubleParameter(
        "Temperature",
        "Lower is more focused and repeatable, higher more varied (0 to 2; Anthropic takes 0 to 1).",
        0.2,
        min_value=0.0,
        max_value=2.0,
    ).rule(knext.OneOf(set_temperature, [True]), knext.Effect.SHOW)
    max_tokens = knext.IntParameter(
        "Maximum response tokens",
        "Upper bound on the tokens of one reply; 0 leaves it to the provider.",
        0,
        min_value=0,
    )
    timeout = knext.DoubleParameter(
        "Request timeout (s)",
        "Seconds to wait for one reply of the model.",
        DEFAULT_REQUEST_TIMEOUT,
        min_value=1.0,
        is_advanced=True,
    )
    trust_flow_variable = knext.BoolParameter(
        "Trust a Base URL from a flow variable",
        "A Base URL set by a flow variable may come from data (a table, a web form), so by default it is sent no API "
        "key and may only be a public http(s) address. Switch this on if the flow variable is yours, e.g. set by a "
        "configuration node.",
        False,
        since_version="0.5.0",
        is_advanced=True,
    )

    def configure(self, ctx: knext.ConfigurationContext) -> ChatModelSpec:
        with knime_errors():
            config = self._config(ctx)
            if config.untrusted_hint is not None and config.credential:
                raise ConfigError(
                    "The Base URL was set by a flow variable, and the API key is sent only to a Base URL a person "
                    "entered.",
                    hint=config.untrusted_hint,
                )
            if config.credential and config.credential not in ctx.get_credential_names():
                raise ConfigError(
                    f"Credential {config.credential!r} is not available.",
                    hint="Connect the credentials flow variable that holds the API key, or choose another one.",
                )
            if not config.credential and PROVIDERS[config.provider].needs_key:
                raise ConfigError(
                    f"{PROVIDERS[config.provider].label} needs an API key.",
                    hint="Choose the API key credential: the credentials flow variable whose password is the key.",
                )
        return ChatModelSpec(config)

    def execute(self, ctx: knext.ExecutionContext) -> ChatModelPortObject:
        return ChatModelPortObject(self.configure(ctx))

    def _config(self, ctx: knext.ConfigurationContext) -> ChatModelConfig:
        provider = cast("Provider", self.provider.lower())  # the options are the providers' names
        base_url = self.base_url.strip()
        _check_base_url(provider, base_url)
        hint = untrusted_hint(
            ctx, (base_url,), trusted=self.trust_flow_variable, subject="The Chat Model Connector's Base URL",
            switch="Trust a Base URL from a flow variable",
        )  # fmt: skip
        return ChatModelConfig(
            provider=provider,
            base_url=base_url or None,
            model=self.model.strip(),
            api_version=(self.api_version.strip() or None) if PROVIDERS[provider].needs_api_version else None,
            credential=chosen_credential(self.credential),
            temperature=self.temperature if self.set_temperature else None,
            max_tokens=self.max_tokens or None,
            timeout=self.timeout,
            untrusted_hint=hint,
        )


def _check_base_url(provider: Provider, base_url: str) -> None:
    """The Base URL a provider without an endpoint of its own needs, named as the dialog names it; and not another
    provider's endpoint, left over from switching the provider (connectors saved before there was a choice hold
    OpenAI's), which would send this provider's requests to that one."""
    info = PROVIDERS[provider]
    if not base_url and info.default_base_url is None:
        raise ConfigError(
            f"{info.label} needs the Base URL: the endpoint of your resource.",
            hint=f"Enter it, e.g. {info.example_base_url}.",
        )
    for name, other in PROVIDERS.items():
        if name != provider and other.default_base_url and base_url.rstrip("/") == other.default_base_url:
            raise ConfigError(
                f"The Base URL is {other.label}'s endpoint, but the provider is {info.label}.",
                hint="Empty the Base URL to use the provider's own endpoint, or enter the server to use.",
            )
