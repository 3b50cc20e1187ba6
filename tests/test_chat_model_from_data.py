"""A chat model whose Base URL came from data (a flow variable): the SSRF guard checks it, its requests go to the
address checked, and no API key goes there, neither one configured nor one an integration reads from the
environment. Against the scripted provider endpoints on 127.0.0.1 (``tests/fakes/scripted_providers.py``)."""

from __future__ import annotations

from urllib.parse import urlsplit

import anyio
import pytest

from fakes import scripted_providers as scripted
from knime_mcp.errors import ConfigError
from knime_mcp.llm.chat_model import ChatModelConfig, build_chat_model
from knime_mcp.net.urlguard import PinnedHost

HINT = "The Base URL comes from flow variable 'model_url'; if you trust it, switch on 'Trust a Base URL'."
API_KEY = "sk-data-canary-31f0"


@pytest.mark.parametrize(
    ("provider", "key"),
    [("openai", API_KEY), ("ollama", API_KEY), ("anthropic", None), ("gemini", None), ("azure", None)],
)
def test_no_api_key_goes_to_a_base_url_from_data(provider: str, key: str | None) -> None:
    # Given a Base URL from data, and a key (or a provider that cannot work without one)
    version = {"api_version": "2024-10-21"} if provider == "azure" else {}
    config = ChatModelConfig(
        provider=provider, base_url="https://models.example.com", model="m", untrusted_hint=HINT, **version
    )  # type: ignore[arg-type]
    # When the model is built, Then it is refused before any request, saying how to trust the Base URL
    with pytest.raises(ConfigError, match="API key") as refused:
        build_chat_model(config, key)
    assert refused.value.hint == HINT and API_KEY not in str(refused.value)


def test_a_base_url_from_data_that_points_inside_is_refused_by_the_ssrf_guard() -> None:
    config = ChatModelConfig(base_url="http://169.254.169.254/v1", model="m", untrusted_hint=HINT)
    with pytest.raises(ConfigError, match="169.254.169.254, a link-local address") as refused:
        build_chat_model(config, None)
    assert refused.value.hint == HINT


@pytest.mark.parametrize("provider", ["openai", "ollama"])
def test_requests_to_a_base_url_from_data_go_to_the_checked_address_with_no_key_of_the_environment(
    provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given keys in the environment the integrations would read, and a model server that records what it gets
    monkeypatch.setenv("OLLAMA_API_KEY", API_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    with scripted.ScriptedEndpoint(provider, [scripted.answer("First."), scripted.answer("Second.")]) as endpoint:
        # And a Base URL from data whose name the SSRF guard found public at this endpoint's address (a name that
        # resolves nowhere: only the pin can lead there)
        port = urlsplit(endpoint.base_url).port
        checked = PinnedHost("model.invalid", "127.0.0.1")
        monkeypatch.setattr("knime_mcp.llm.pinned.check_url", _checked_as(checked))
        base_url = f"http://model.invalid:{port}{endpoint.dialect.root}"
        config = ChatModelConfig(provider=provider, base_url=base_url, model="m", untrusted_hint=HINT)  # type: ignore[arg-type]
        model = build_chat_model(config, None)
        # When it is asked, asynchronously as the agent asks and synchronously
        answers = [anyio.run(model.ainvoke, "Hello").text, model.invoke("Hello").text]
    # Then both requests reached the checked address, named as the Base URL names it, and carried no key
    assert answers == ["First.", "Second."]
    assert [request.headers["host"] for request in endpoint.received] == [f"model.invalid:{port}"] * 2
    assert endpoint.keys() == [None, None]


def _checked_as(pin: PinnedHost):  # type: ignore[no-untyped-def]
    async def check(url: str, *, hint: str | None = None) -> PinnedHost:
        assert urlsplit(url).hostname == pin.host and hint == HINT
        return pin

    return check


def test_every_provider_that_works_without_a_key_can_be_built_for_a_base_url_from_data() -> None:
    from knime_mcp.llm.chat_model import PROVIDERS
    from knime_mcp.llm.providers import PINNED_BUILDERS

    assert set(PINNED_BUILDERS) == {name for name, info in PROVIDERS.items() if not info.needs_key}
