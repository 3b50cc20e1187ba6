"""The Chat Model Connector node and its port, run as KNIME runs them (Given/When/Then), on both hosts.

The connector only describes the model: configure checks each provider's fields and hands the description on, with
the credential's name and never its key; the Agent Prompter builds the model from it, here against scripted endpoints
that speak each provider's wire format on 127.0.0.1 (``tests/fakes/scripted_providers.py``).
"""

from __future__ import annotations

import json
from typing import Any

import knime.extension as knext
import pytest

import node_host
from agent_runs import API_KEY, agent_node, chat_model_port, provider_tools_table, run_agent_node
from fakes import scripted_providers as scripted
from knime_mcp.llm.chat_model import PROVIDERS
from node_contexts import ConfigureContext, ExecuteContext
from nodes.chat_model_connector import NO_API_KEY, ChatModelConnector, ProviderOptions
from nodes.knime_io.chat_model_port import CHAT_MODEL_PORT_ID, ChatModelSpec, chat_model_port_type

pytestmark = pytest.mark.knime_node

AZURE_ENDPOINT = "https://example-resource.openai.azure.com"


@pytest.fixture(scope="module")
def demo_tools_table(demo_http_url: str) -> Any:
    return provider_tools_table((demo_http_url, "", {}))


def _connector(**settings: Any) -> ChatModelConnector:
    connector = ChatModelConnector()
    for name, value in settings.items():
        setattr(connector, name, value)
    return connector


def _configured(**settings: Any) -> ChatModelSpec:
    """The spec of a connector with ``settings``, its key (unless they say otherwise) in the credential ``llm``."""
    node = _connector(**{"credential": "llm", **settings})
    (spec,) = node_host.configure_node(node, ConfigureContext({"llm": ("", API_KEY)}))
    return spec  # type: ignore[no-any-return]


def test_the_port_type_keeps_the_id_saved_workflows_name_it_by() -> None:
    # A workflow saved with a connector names its output port's type by this id; a new id would orphan it
    assert CHAT_MODEL_PORT_ID == "io.github.knime_mcp.agent.chat_model"
    assert chat_model_port_type.id == CHAT_MODEL_PORT_ID


def test_the_chat_model_port_holds_the_configuration_and_the_credential_name_but_never_the_key() -> None:
    # Given a connector whose key is in a credentials flow variable
    port = chat_model_port("http://127.0.0.1:11434/v1")
    # When its output travels downstream (as JSON and bytes)
    # Then the spec names the credential, and the key is nowhere in it
    assert isinstance(port.spec, ChatModelSpec)
    assert port.spec.config.credential == "llm" and port.spec.config.model == "fake-gpt"
    assert API_KEY not in json.dumps(port.spec.serialize()) and port.serialize() == b""


def test_a_credential_that_is_not_connected_is_an_invalid_setting_of_the_connector() -> None:
    with pytest.raises(knext.InvalidParametersError, match="'absent' is not available"):
        node_host.configure_node(_connector(credential="absent"), ConfigureContext())


def test_a_base_url_that_is_not_a_url_is_an_invalid_setting() -> None:
    with pytest.raises(knext.InvalidParametersError, match="not an http"):
        node_host.configure_node(_connector(base_url="localhost:11434"), ConfigureContext())


def test_the_providers_offered_are_the_ones_the_core_serves() -> None:
    assert [option.name.lower() for option in ProviderOptions] == list(PROVIDERS)
    assert [option.label for option in ProviderOptions] == [info.label for info in PROVIDERS.values()]


def test_a_new_connector_is_openai_at_openais_own_endpoint() -> None:
    config = _configured().config
    assert config.provider == "openai" and config.endpoint == PROVIDERS["openai"].default_base_url


@pytest.mark.parametrize("provider", ["OPENAI", "ANTHROPIC", "GEMINI", "OLLAMA"])
def test_an_empty_base_url_is_the_providers_default_endpoint(provider: str) -> None:
    config = _configured(provider=provider, model="some-model").config
    assert config.provider == provider.lower() and config.model == "some-model"
    assert config.endpoint == PROVIDERS[config.provider].default_base_url


@pytest.mark.parametrize(
    ("provider", "base_url"),
    [("ANTHROPIC", "http://127.0.0.1:9/anthropic"), ("GEMINI", "http://127.0.0.1:9"), ("OLLAMA", "http://gpu:11434")],
)
def test_a_base_url_given_is_the_endpoint_of_any_provider(provider: str, base_url: str) -> None:
    config = _configured(provider=provider, base_url=base_url, model="some-model").config
    assert config.provider == provider.lower() and config.endpoint == base_url


def test_an_azure_connector_names_the_resource_the_deployment_and_the_api_version() -> None:
    # Given an Azure OpenAI connector with its resource's endpoint, a deployment and an API version
    settings = {"base_url": AZURE_ENDPOINT, "model": "my-deployment", "api_version": "2024-10-21"}
    # When it is configured, Then the port describes that deployment, and the key only by its credential's name
    config = _configured(provider="AZURE", credential="llm", **settings).config
    assert (config.provider, config.endpoint, config.model) == ("azure", AZURE_ENDPOINT, "my-deployment")
    assert config.api_version == "2024-10-21" and config.credential == "llm"


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"base_url": "", "api_version": "2024-10-21"}, "Base URL"),
        ({"base_url": AZURE_ENDPOINT, "api_version": " "}, "API version"),
    ],
)
def test_azure_without_its_endpoint_or_api_version_is_an_invalid_setting_naming_the_field(
    settings: dict[str, str], field: str
) -> None:
    with pytest.raises(knext.InvalidParametersError, match=field):
        _configured(provider="AZURE", model="my-deployment", **settings)


@pytest.mark.parametrize("provider", ["AZURE", "ANTHROPIC", "GEMINI"])
def test_a_provider_that_needs_a_key_without_a_credential_is_an_invalid_setting(provider: str) -> None:
    settings = {"base_url": AZURE_ENDPOINT, "api_version": "2024-10-21"} if provider == "AZURE" else {}
    with pytest.raises(knext.InvalidParametersError, match="API key credential"):
        _configured(provider=provider, model="some-model", credential=NO_API_KEY, **settings)


def test_a_base_url_left_at_another_providers_default_is_an_invalid_setting() -> None:
    # Given a connector saved for OpenAI (with OpenAI's endpoint in its Base URL), switched to Anthropic
    # When it is configured, Then it is refused, naming the setting to empty, before Anthropic's requests go to OpenAI
    with pytest.raises(knext.InvalidParametersError, match="Base URL") as caught:
        _configured(provider="ANTHROPIC", base_url=PROVIDERS["openai"].default_base_url, model="claude")
    assert "OpenAI" in str(caught.value)


def test_connector_settings_saved_by_0_4_0_load_as_the_same_openai_compatible_model() -> None:
    # Given settings a 0.4.0 connector saved: an OpenAI-compatible server, before providers and API versions existed
    node = _connector(base_url="http://127.0.0.1:11434/v1", model="llama3.2", credential="llm")
    saved = json.loads(node_host.save_settings(node))
    del saved["model"]["provider"], saved["model"]["api_version"]
    older = json.dumps(saved)
    # When KNIME checks and loads them, Then they pass and describe the same model at the same endpoint, as OpenAI
    assert node_host.validate_settings("ChatModelConnector", older, "0.4.0") is None
    loaded = node_host.load_settings("ChatModelConnector", older, "0.4.0")
    (spec,) = node_host.configure_node(loaded, ConfigureContext({"llm": ("", API_KEY)}))
    assert spec.config.provider == "openai" and spec.config.endpoint == "http://127.0.0.1:11434/v1"
    assert (spec.config.model, spec.config.credential) == ("llama3.2", "llm")


def test_a_port_saved_by_0_4_0_opens_as_the_same_openai_compatible_model() -> None:
    # Given the spec a 0.4.0 connector's output port saved (no provider, no API version)
    saved = {
        "base_url": "http://127.0.0.1:11434/v1", "model": "llama3.2", "credential": "llm", "api_key_env": None,
        "temperature": 0.2, "max_tokens": None, "timeout": 120.0,
    }  # fmt: skip
    # When the workflow opens, Then the port describes that model at that endpoint, through OpenAI's API
    spec = node_host.load_port_object(json.dumps({"id": CHAT_MODEL_PORT_ID, "data": saved}), b"").spec
    assert spec.config.provider == "openai" and spec.config.endpoint == "http://127.0.0.1:11434/v1"
    assert (spec.config.model, spec.config.credential, spec.config.temperature) == ("llama3.2", "llm", 0.2)


@pytest.mark.parametrize(
    ("provider", "settings"),
    [
        ("ANTHROPIC", {}),
        ("GEMINI", {}),
        ("AZURE", {"api_version": "2024-10-21"}),
        ("OLLAMA", {"credential": NO_API_KEY}),
    ],
)
def test_the_agent_prompter_talks_to_the_provider_the_connector_names(
    provider: str, settings: dict[str, str], demo_tools_table: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a connector for the provider at its scripted endpoint, the key (where it takes one) in a credential
    monkeypatch.delenv("OLLAMA_API_KEY", raising=False)
    script = [scripted.tool_calls(("c1", "add", {"a": 2, "b": 3})), scripted.answer("2 + 3 = 5.")]
    with scripted.ScriptedEndpoint(provider.lower(), script) as endpoint:
        connector = _connector(provider=provider, base_url=endpoint.base_url, model="model-7", credential="llm")
        for name, value in settings.items():
            setattr(connector, name, value)
        (port,) = node_host.execute_node(connector, ExecuteContext({"llm": ("", API_KEY)}))
        # When the Agent Prompter runs with the connector's port
        ctx = ExecuteContext({"llm": ("", API_KEY)})
        conversation, log = run_agent_node(agent_node("Add 2 and 3."), ctx, port, demo_tools_table)
    # Then the provider's endpoint got the requests, with the tool's result, and the key in its header only
    assert list(log["Tool"]) == ["add"] and list(log["Status"]) == ["ok"]
    assert conversation["Content"].iloc[-1] == "2 + 3 = 5."
    assert len(endpoint.dialect.tool_results(endpoint.received[1].body)) == 1
    sent = [key and key[1] for key in endpoint.keys()]
    assert sent == [None if provider == "OLLAMA" else API_KEY] * 2
    assert API_KEY not in json.dumps(port.spec.serialize()) + conversation.to_json() + log.to_json()


@pytest.mark.knime_launcher
def test_the_dialog_shows_the_api_version_for_azure_only() -> None:
    shown = node_host.dialog(_connector(), ConfigureContext())
    controls = {c["scope"].rsplit("/", 1)[-1]: c for c in _controls(shown["ui_schema"])}
    assert controls["api_version"]["rule"] == {
        "effect": "SHOW",
        "condition": {"scope": "#/properties/model/properties/provider", "schema": {"oneOf": [{"const": "AZURE"}]}},
    }
    assert "rule" not in controls["base_url"] and "rule" not in controls["model"]


def _controls(element: dict[str, Any]) -> list[dict[str, Any]]:
    found = [element] if "scope" in element else []
    for child in element.get("elements", []):
        found += _controls(child)
    return found


# -- a Base URL from a flow variable is data ------------------------------------------------------------------------


def _flow_variable_ctx(base_url: str) -> ExecuteContext:
    """A workflow whose flow variable ``model_url`` set the Base URL (KNIME applies it before the node sees it)."""
    ctx = ExecuteContext({"llm": ("", API_KEY)})
    ctx.flow_variables["model_url"] = base_url
    return ctx


def test_a_base_url_from_a_flow_variable_is_never_sent_the_api_key(demo_tools_table: Any) -> None:
    # Given a connector whose Base URL a flow variable set, pointing at a model server that records the keys it gets
    with scripted.ScriptedEndpoint("openai", [scripted.answer("Hello.")]) as endpoint:
        connector = _connector(base_url=endpoint.base_url, credential="llm")
        # When the connector and an Agent Prompter behind it execute
        with pytest.raises(knext.InvalidParametersError) as refused:
            (port,) = node_host.execute_node(connector, _flow_variable_ctx(endpoint.base_url))
            run_agent_node(agent_node("Hi."), ExecuteContext({"llm": ("", API_KEY)}), port, demo_tools_table)
    # Then the connector refuses, naming the flow variable and the switch that trusts it, and no key went anywhere
    assert endpoint.keys() == []
    assert "flow variable 'model_url'" in str(refused.value)
    assert "Trust a Base URL from a flow variable" in str(refused.value)
    assert API_KEY not in str(refused.value)


def test_a_base_url_from_a_flow_variable_reaches_only_public_addresses(demo_tools_table: Any) -> None:
    # Given a connector without a key whose Base URL a flow variable set to a server on this machine
    with scripted.ScriptedEndpoint("openai", [scripted.answer("Hello.")]) as endpoint:
        connector = _connector(base_url=endpoint.base_url, credential=NO_API_KEY)
        (port,) = node_host.execute_node(connector, _flow_variable_ctx(endpoint.base_url))
        # When the Agent Prompter runs with it, Then the SSRF guard refuses the loopback address before any request
        with pytest.raises(knext.InvalidParametersError) as refused:
            run_agent_node(agent_node("Hi."), ExecuteContext(), port, demo_tools_table)
    assert endpoint.received == []
    assert "points to 127.0.0.1, a loopback address" in str(refused.value)
    assert "flow variable 'model_url'" in str(refused.value)


def test_a_trusted_base_url_from_a_flow_variable_is_sent_the_api_key(demo_tools_table: Any) -> None:
    # Given a connector whose Base URL a flow variable set, and the switch that trusts it on
    with scripted.ScriptedEndpoint("openai", [scripted.answer("Hello.")]) as endpoint:
        connector = _connector(base_url=endpoint.base_url, credential="llm", trust_flow_variable=True)
        (port,) = node_host.execute_node(connector, _flow_variable_ctx(endpoint.base_url))
        # When the Agent Prompter runs with it, Then the model answers and got the key, as from a typed Base URL
        conversation, _ = run_agent_node(
            agent_node("Hi."), ExecuteContext({"llm": ("", API_KEY)}), port, demo_tools_table
        )
    assert conversation["Content"].iloc[-1] == "Hello."
    assert endpoint.keys() == [("authorization", API_KEY)]
