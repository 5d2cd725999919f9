"""``local:tiered``: the 0.5B model for routine turns, the 1.5B one when a turn matters.

Not the default yet: whether ``local:default`` becomes this is decided on eval numbers.
"""

from __future__ import annotations

from typing import Any, Literal

from agentsdk import Model, Tiers, TurnInfo

from .engine import LocalEngine
from .model import LocalChatModel

__all__ = ["TIERED", "connect_local", "local_tier_policy"]

TIERED = {"fast": "qwen2.5-coder-0.5b", "standard": "qwen2.5-coder-1.5b"}
"""The built-in models behind ``local:tiered``."""


def local_tier_policy(info: TurnInfo) -> Literal["fast", "standard"]:
    """Standard (1.5B) for the first turn, which plans, and for the turn after a tool
    error, which has to change course; fast (0.5B) for the routine turns in between."""
    if info.turn <= 1:  # turns count from 1
        return "standard"
    messages = info.request.messages
    last = messages[-1] if messages else None
    if last is not None and any(result.is_error for result in last.tool_results):
        return "standard"
    return "fast"


def connect_local(name: str, **options: Any) -> Model:
    """The model for ``local:<name>``: a built-in name, a GGUF path, or ``tiered``.

    ``parallel`` sets the shared engine's slots (concurrent requests, e.g. for evals); the
    other ``options`` go to every ``LocalChatModel`` made (``constrained``,
    ``prefix_cache``, ``timeout``...).
    """
    parallel = options.pop("parallel", None)
    if name == "tiered":
        # Model strings when there are no options: Tiers then closes the models it made.
        fast: Model | str = f"local:{TIERED['fast']}"
        standard: Model | str = f"local:{TIERED['standard']}"
        if options or parallel:
            fast = LocalChatModel(LocalEngine.shared(TIERED["fast"], parallel=parallel), **options)
            standard = LocalChatModel(
                LocalEngine.shared(TIERED["standard"], parallel=parallel), **options
            )
        tiers = Tiers(fast=fast, standard=standard, policy=local_tier_policy)
        # Tiers is what Agent(model=...) takes in place of a Model; the loop picks per turn.
        return tiers  # type: ignore[return-value]
    return LocalChatModel(LocalEngine.shared(name, parallel=parallel), **options)
