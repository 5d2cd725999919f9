"""The ``agentsdk.models`` entry point and model strings."""

from __future__ import annotations

from importlib.metadata import entry_points

import pytest
from agentsdk.plugins import resolve_model
from agentsdk_anthropic import ANTHROPIC_PROFILE, AnthropicModel, connect

from agentsdk import Agent, Model


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-env-key")
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    return "sk-ant-env-key"


def test_entry_point_is_declared() -> None:
    (ep,) = [ep for ep in entry_points(group="agentsdk.models") if ep.name == "anthropic"]
    assert ep.load() is connect


@pytest.mark.anyio
async def test_model_string_resolves_through_the_core(api_key: str) -> None:
    model = resolve_model("anthropic:claude-sonnet-4-5")
    assert isinstance(model, AnthropicModel) and isinstance(model, Model)
    assert model.name == "anthropic:claude-sonnet-4-5" and model.model == "claude-sonnet-4-5"
    assert model.base_url == "https://api.anthropic.com"
    assert model.profile == ANTHROPIC_PROFILE
    assert model.profile.images_in_tool_results and model.profile.image_input
    await model.aclose()


@pytest.mark.anyio
async def test_agent_accepts_the_model_string(api_key: str) -> None:
    agent = Agent("anthropic:claude-haiku-4-5")
    assert agent.model.name == "anthropic:claude-haiku-4-5"
    await agent.aclose()


@pytest.mark.anyio
async def test_base_url_suffix_and_env(api_key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    model = connect("anthropic:claude-sonnet-4-5@http://127.0.0.1:8089")
    assert (model.model, model.base_url) == ("claude-sonnet-4-5", "http://127.0.0.1:8089")
    await model.aclose()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9000/")
    model = connect("anthropic:claude-sonnet-4-5")
    assert model.base_url == "http://127.0.0.1:9000"
    await model.aclose()


@pytest.mark.parametrize("bad", ["claude-sonnet-4-5", "openai:gpt-4.1", "anthropic:"])
def test_bad_model_strings_are_rejected(bad: str) -> None:
    with pytest.raises(ValueError, match="anthropic:<model>"):
        connect(bad)
