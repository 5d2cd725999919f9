"""``local:default`` (also ``local:tiered``): the 0.5B model for the turns after reads, the 1.5B
one when a turn matters.

It became the default on the demo's and the suites' numbers (connectors/openai/README.md,
*Which local model is the default*): the 1.5B plans and corrects, the 0.5B answers.
``local:qwen2.5-coder-0.5b`` and ``local:qwen2.5-coder-1.5b`` are the single models.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from agentsdk import Message, Model, ModelRequest, ModelResponse, Tiers, TurnInfo

from .answers import not_an_answer
from .engine import LocalEngine
from .model import LocalChatModel, changed_the_world

__all__ = ["TIERED", "TIERED_NAMES", "connect_local", "local_escalation", "local_tier_policy"]

logger = logging.getLogger("agentsdk_openai.local")

TIERED = {"fast": "qwen2.5-coder-0.5b", "standard": "qwen2.5-coder-1.5b"}
"""The built-in models behind ``local:default`` and ``local:tiered``."""

TIERED_NAMES = ("default", "tiered")
"""The ``local:`` names that mean the two tiers (an engine's own default stays the 0.5B)."""


_ATTENTION = ("hint:", "Loop detected:", "WARNING")
"""Line starts in a tool result that say something needs fixing: a visibility report's
hints (agentsdk.vision), the loop guard's note, a toolkit's warnings."""


def _needs_attention(text: str) -> bool:
    return any(line.lstrip().startswith(_ATTENTION) for line in text.splitlines())


_PREFILL_RATIO = 2.0
"""How much faster the 0.5B model reads a prompt than the 1.5B one on 2 cores, both with 2
threads (measured on a 3,000-token demo prompt: 63-66 against 30-32 tokens/s). A switch
to the other model makes that engine read the whole conversation, since only the shared
system prompt and tools are in its cache, while the model that served the last turn reads
only what came since."""

_SWITCH_SLACK = 500
"""Characters (~180 tokens of the 1.5B reading) the 0.5B model's quicker writing is worth:
a 40-token answer at ~12.6 against ~6.7 tokens/s on that prompt."""


def _chars(messages: list[Message]) -> int:
    return sum(
        len(part.text) if hasattr(part, "text") else len(str(getattr(part, "arguments", "")))
        for message in messages
        for part in message.parts
    )


def _cheaper_to_stay(info: TurnInfo) -> bool:
    """The standard model served the last turn and the fast one would read more of the
    conversation than it saves: stay where the conversation already sits in the KV cache."""
    if info.previous_tier != "standard":
        return False
    messages = [m for m in info.request.messages if m.role != "system"]
    last_reply = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=-1)
    new = _chars(messages[last_reply + 1 :])
    return _chars(messages) > _PREFILL_RATIO * new + _SWITCH_SLACK


def _several(value: object) -> bool:
    if isinstance(value, list):
        return len(value) >= 2
    if isinstance(value, str) and "," in value:
        items = [v.strip() for v in value.split(",")]
        return len(items) >= 2 and all(0 < len(v) <= 12 and " " not in v for v in items)
    return False


def _read_several(messages: list[Message]) -> bool:
    """The newest turn's calls covered several items (two or more calls, or an argument
    listing several names: symbols="AAPL,MSFT,IBM", nodes=["Floor", "Crate"]), so the
    answer has to weigh them against each other: the 0.5B model gave one of four returns
    on finance/rank-four and garbled the comparison on finance/compare-aapl-ibm."""
    asked = next((m for m in reversed(messages) if m.role == "assistant"), None)
    calls = asked.tool_calls if asked is not None else []
    return len(calls) >= 2 or any(_several(v) for c in calls for v in c.arguments.values())


def local_escalation(info: TurnInfo, response: ModelResponse) -> bool | ModelRequest:
    """The fast (0.5B) tier's reply is not an answer (:func:`.answers.not_an_answer`): the
    1.5B model is asked for the answer, with no tools offered. The policy gives the fast
    tier only turns after reads, which write the answer; with tools left on, the 1.5B
    model wrote out the calling format and then re-read with a tool nobody asked for
    (``compare`` on finance/aapl-cagr) until the loop guard stopped the run. Before, the
    non-answer itself closed the run, so no run loses a step it would have taken."""
    if not not_an_answer(info.request, response):
        return False
    logger.info("the fast tier did not answer (%.60r); asking the standard tier", response.text)
    if not info.request.tools:
        return True
    quiet = info.request.settings.model_copy(update={"tool_choice": "none"})
    return info.request.model_copy(update={"settings": quiet})


def local_tier_policy(info: TurnInfo) -> Literal["fast", "standard"]:
    """Standard (1.5B) for the first turn, which plans; for a turn after a tool error or a
    result that says something needs fixing (a render's "hint:" lines: the box is cut off,
    the frame is black), which has to change course; and for a turn after a call that
    changed the world (a tool with ``side_effects``), which must judge whether the request
    needs another step: the 0.5B model cannot, it re-sends the call or stops after one.
    Fast (0.5B) for the turns after reads (a price history, a scene listing), which mostly
    write the answer from what was read, unless the 1.5B model served the last turn of a
    long conversation whose newest result is short: the 0.5B engine would then read it all
    anew, which takes longer than the 1.5B reading only that result."""
    if info.turn <= 1:  # turns count from 1
        return "standard"
    messages = info.request.messages
    last = messages[-1] if messages else None
    if last is not None and any(
        result.is_error or _needs_attention(result.text) for result in last.tool_results
    ):
        return "standard"
    if changed_the_world(info.request):
        return "standard"
    if last is not None and last.role == "user" and _needs_attention(last.text):
        return "standard"  # images for models without vision arrive in a trailing message
    if _read_several(messages):
        return "standard"
    return "standard" if _cheaper_to_stay(info) else "fast"


def connect_local(name: str, **options: Any) -> Model:
    """The model for ``local:<name>``: ``default``/``tiered`` (the two tiers), a built-in
    model's name, or a GGUF path.

    ``parallel`` sets the shared engine's slots (concurrent requests, e.g. for evals); the
    other ``options`` go to every ``LocalChatModel`` made (``constrained``,
    ``prefix_cache``, ``timeout``...).
    """
    parallel = options.pop("parallel", None)
    if name in TIERED_NAMES:
        # Model strings when there are no options: Tiers then closes the models it made.
        fast: Model | str = f"local:{TIERED['fast']}"
        standard: Model | str = f"local:{TIERED['standard']}"
        if options or parallel:
            fast = LocalChatModel(LocalEngine.shared(TIERED["fast"], parallel=parallel), **options)
            standard = LocalChatModel(
                LocalEngine.shared(TIERED["standard"], parallel=parallel), **options
            )
        tiers = Tiers(
            fast=fast, standard=standard, policy=local_tier_policy, escalate=local_escalation
        )
        # Tiers is what Agent(model=...) takes in place of a Model; the loop picks per turn.
        return tiers  # type: ignore[return-value]
    return LocalChatModel(LocalEngine.shared(name, parallel=parallel), **options)
