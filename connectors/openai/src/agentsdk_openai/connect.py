"""``connect("scheme:name[@base_url]")``: the ``agentsdk.models`` entry point."""

from __future__ import annotations

import os
from typing import Any

from agentsdk import Model, ModelAuthError

from .model import OpenAIChatModel
from .profiles import EngineProfile, engine_profile

__all__ = ["connect"]


def _split(model_string: str) -> tuple[str, str, str | None]:
    scheme, sep, rest = model_string.partition(":")
    if not sep or not rest:
        raise ValueError(
            f"model string {model_string!r} must look like 'engine:model', e.g. 'vllm:Qwen/Qwen3-8B'"
        )
    name, at, url = rest.rpartition("@")
    if at and url.startswith(("http://", "https://")):
        return scheme, name, url
    return scheme, rest, None


class _HostedModel(OpenAIChatModel):
    """Checks for the API key only when a request is made, so ``connect`` never fails on it."""

    async def _endpoint(self) -> tuple[str, str | None]:
        if self._api_key is None and self.engine.api_key_required:
            raise ModelAuthError(
                f"{self.name}: no API key; set the {self.engine.api_key_env} environment variable",
                model_name=self.name,
            )
        return await super()._endpoint()


def connect(model_string: str, **options: Any) -> Model:
    """A model for a string such as ``openai:gpt-4.1``, ``vllm:Qwen/Qwen3-8B@http://host:8000/v1``,
    ``ollama:qwen3``, ``dashscope:qwen-max``, ``local:default`` or ``local:/path/model.gguf``.

    Cheap to call: nothing is contacted or started until the first request. API keys come
    from the engine's usual environment variable (``OPENAI_API_KEY``, ``DASHSCOPE_API_KEY``,
    ``DEEPSEEK_API_KEY`` ...); ``<SCHEME>_BASE_URL`` overrides the default address.
    Extra keyword arguments go to ``OpenAIChatModel`` (``timeout``, ``retry``, ``transport``...).
    """
    scheme, name, url = _split(model_string)
    engine: EngineProfile = engine_profile(scheme)
    if scheme == "local":
        if url is not None:
            raise ValueError(
                "local models run on the embedded engine; use 'llamacpp:model@url' for a server of your own"
            )
        from .local import connect_local  # built-in names, GGUF paths and "tiered"

        return connect_local(name, **options)
    base_url = url or os.environ.get(f"{scheme.upper()}_BASE_URL") or engine.base_url
    if base_url is None:
        raise ValueError(f"{scheme} needs a server address: '{scheme}:{name}@http://host:port/v1'")
    api_key = os.environ.get(engine.api_key_env) if engine.api_key_env else None
    return _HostedModel(name, base_url=base_url, api_key=api_key or None, engine=engine, **options)
