"""Model strings, engine profiles and API keys."""

from __future__ import annotations

import logging
import time

import httpx
import pytest
from agentsdk.plugins import resolve_model
from agentsdk_openai import ENGINE_PROFILES, LocalChatModel, LocalEngine, OpenAIChatModel, connect
from openai_wire_shapes import Recorder, completion

from agentsdk import Agent, ModelAuthError, ModelRequest


def test_every_engine_has_a_profile_and_an_entry_point() -> None:
    assert set(ENGINE_PROFILES) == {
        "openai",
        "vllm",
        "sglang",
        "ollama",
        "llamacpp",
        "dashscope",
        "deepseek",
        "local",
    }
    for scheme in ENGINE_PROFILES:
        model = resolve_model(f"{scheme}:some-model")
        assert model.name.startswith(f"{scheme}:")


@pytest.mark.parametrize(
    ("model_string", "base_url", "model_id"),
    [
        ("openai:gpt-4.1", "https://api.openai.com/v1", "gpt-4.1"),
        ("vllm:Qwen/Qwen3-8B@http://gpu-box:8000/v1", "http://gpu-box:8000/v1", "Qwen/Qwen3-8B"),
        ("ollama:qwen3:8b", "http://127.0.0.1:11434/v1", "qwen3:8b"),
        (
            "dashscope:qwen-max",
            "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
            "qwen-max",
        ),
        ("deepseek:deepseek-chat", "https://api.deepseek.com/v1", "deepseek-chat"),
    ],
)
def test_model_strings(model_string: str, base_url: str, model_id: str) -> None:
    model = connect(model_string)
    assert isinstance(model, OpenAIChatModel)
    assert (model.base_url, model.model_id) == (base_url, model_id)


def test_base_url_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SGLANG_BASE_URL", "http://10.0.0.5:30000/v1")
    assert connect("sglang:qwen").base_url == "http://10.0.0.5:30000/v1"  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_api_key_from_the_environment_never_in_repr_or_logs(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("DASHSCOPE_API_KEY", "sk-dash-very-secret")
    recorder = Recorder(
        httpx.Response(503, text="busy"), httpx.Response(200, json=completion("ok"))
    )
    model = connect("dashscope:qwen-max", transport=httpx.MockTransport(recorder))
    model.retry.sleep = _no_sleep  # type: ignore[attr-defined]
    with caplog.at_level(logging.DEBUG):
        await model.request(ModelRequest(messages=[]))
    assert recorder.requests[0].headers["authorization"] == "Bearer sk-dash-very-secret"
    assert "sk-dash-very-secret" not in repr(model) and "sk-dash-very-secret" not in caplog.text
    assert "retrying" in caplog.text


async def _no_sleep(seconds: float) -> None:
    return None


@pytest.mark.anyio
async def test_missing_key_for_a_hosted_api_is_an_auth_error_at_first_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    model = connect("deepseek:deepseek-chat")  # connecting never fails on the key
    with pytest.raises(ModelAuthError, match="DEEPSEEK_API_KEY"):
        await model.request(ModelRequest(messages=[]))


def test_bad_model_strings() -> None:
    with pytest.raises(ValueError, match="engine:model"):
        connect("gpt-4.1")
    with pytest.raises(ValueError, match="known engines"):
        connect("nosuch:model")
    with pytest.raises(ValueError, match="llamacpp:model@url"):
        connect("local:default@http://127.0.0.1:8080/v1")


def test_local_default_is_instant_and_starts_nothing() -> None:
    shared = LocalEngine.shared("default")
    pid_before = shared.pid  # other tests may have started the shared engine already
    started = time.perf_counter()
    model = connect("local:qwen2.5-coder-0.5b")
    default = connect("local:default")  # the two tiers: nothing starts either
    elapsed = time.perf_counter() - started
    assert isinstance(model, LocalChatModel) and model.name == "local:qwen2.5-coder-0.5b"
    assert elapsed < 0.5 and model.local_engine is shared and shared.pid == pid_before
    assert connect("local:qwen2.5-coder-0.5b").local_engine is shared  # one shared engine
    assert default.name == "tiers(fast=local:qwen2.5-coder-0.5b, standard=local:qwen2.5-coder-1.5b)"
    assert Agent(model="local:default").model.name == default.name
    fresh = connect("local:/models/not-started-yet.gguf")
    assert fresh.local_engine.pid is None and fresh.local_engine is not shared  # type: ignore[attr-defined]
