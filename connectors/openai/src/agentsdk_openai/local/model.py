"""``LocalChatModel``: the OpenAI-compatible connector bound to a ``LocalEngine``."""

from __future__ import annotations

from typing import Any

from ..model import OpenAIChatModel
from ..profiles import engine_profile
from .engine import LocalEngine

__all__ = ["LocalChatModel"]


class LocalChatModel(OpenAIChatModel):
    """A model served by the embedded llama.cpp engine; the engine starts on first use.

    ``aclose`` closes this model's connections but leaves the shared engine running
    for other agents; the engine stops at interpreter exit or on ``engine.stop()``.
    """

    def __init__(self, engine: LocalEngine, **kwargs: Any):
        profile = engine_profile("local")
        capabilities = profile.model
        if engine.builtin is not None:
            capabilities = capabilities.model_copy(
                update={
                    "supports_tools": engine.builtin.supports_tools,
                    "context_window": engine.builtin.context_window,
                }
            )
        kwargs.setdefault("timeout", 600.0)  # CPU generation of a long answer is slow
        super().__init__(
            engine.model,
            base_url="http://127.0.0.1",  # replaced by the engine's address once it runs
            engine=profile,
            profile=capabilities,
            name=f"local:{engine.model}",
            **kwargs,
        )
        self.local_engine = engine

    def __repr__(self) -> str:
        return f"LocalChatModel(name={self.name!r}, engine={self.local_engine!r})"

    async def _endpoint(self) -> tuple[str, str | None]:
        await self.local_engine.start()
        return self.local_engine.base_url, self.local_engine.token

    async def __aenter__(self) -> LocalChatModel:
        await self.local_engine.start()
        return self
