"""Token traces: the ids the engine evaluated and sampled, with their log-probabilities.

With ``ModelSettings(record_tokens=True)`` a turn goes through llama.cpp's own endpoints
instead of the chat one, so nothing has to be re-tokenised afterwards:

1. ``/apply-template`` renders the chat exactly as the chat endpoint would (same template,
   same tools, same grammar-mode tool list);
2. ``/tokenize`` turns that text into ids (special tokens parsed, BOS as the model wants);
3. ``/completion`` is sent *those ids* as the prompt, so the prompt ids in the trace are by
   construction what the engine evaluated; it answers with the sampled ids
   (``return_tokens``) and each one's log-probability (``n_probs``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentsdk import (
    ModelError,
    ModelRequest,
    ModelResponse,
    TextPart,
    TokenTrace,
    ToolCallPart,
    Usage,
)

from .._response import Completion
from ..prompted import response_parts
from .grammar import TURN_GRAMMAR

if TYPE_CHECKING:
    from .model import LocalChatModel

__all__ = ["complete_with_tokens"]

# Request fields that belong to the chat endpoint only; the rest of `extra` is passed on.
_CHAT_ONLY = frozenset(
    {"chat_template_kwargs", "grammar", "tools", "tool_choice", "messages", TURN_GRAMMAR}
)


async def complete_with_tokens(
    model: LocalChatModel, request: ModelRequest, constrained: bool
) -> ModelResponse:
    """One non-streamed turn whose response carries a ``TokenTrace``."""
    settings = request.settings
    chat = model.chat_body(request, constrained=constrained, stream=False)
    rendered = await model.post_engine("/apply-template", chat)
    prompt = rendered.get("prompt") if isinstance(rendered, dict) else None
    if not isinstance(prompt, str):
        raise ModelError(f"{model.name}: /apply-template sent no prompt", model_name=model.name)
    prompt_ids = await model.tokenize(prompt)

    offered = bool(request.tools) and settings.tool_choice != "none"
    body: dict[str, Any] = {
        "prompt": prompt_ids,
        "n_predict": settings.max_tokens if settings.max_tokens is not None else -1,
        "cache_prompt": True,
        "return_tokens": True,
        "n_probs": 1,
        "stream": False,
    }
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.seed is not None:
        body["seed"] = settings.seed
    if constrained:
        grammar, _ = model.grammar_for(request.tools, settings.tool_choice)
        grammar = settings.extra.get(TURN_GRAMMAR) or grammar
        if grammar is not None:
            body["grammar"] = grammar
    elif request.output_schema is not None and not offered:
        body["json_schema"] = request.output_schema
    body.update({k: v for k, v in settings.extra.items() if k not in _CHAT_ONLY})
    data = await model.post_engine("/completion", body)
    if not isinstance(data, dict):
        raise ModelError(f"{model.name}: /completion sent no object", model_name=model.name)

    text = str(data.get("content") or "")
    response_ids = [int(t) for t in data.get("tokens") or []]
    probabilities = data.get("completion_probabilities") or []
    logprobs = [
        float(p["logprob"]) for p in probabilities if isinstance(p, dict) and "logprob" in p
    ]
    trace = TokenTrace(
        prompt_ids=prompt_ids,
        response_ids=response_ids,
        response_logprobs=logprobs if len(logprobs) == len(response_ids) else None,
    )
    parts: list[TextPart | ToolCallPart]
    if offered and not constrained:
        parts = response_parts(text, [t.name for t in request.tools])
    else:  # a constrained call is read out of the text by the model's own check
        parts = [TextPart(text=text)] if text else []
    timings = data.get("timings")
    if not isinstance(timings, dict):
        timings = {}
    usage = Usage(
        input_tokens=int(data.get("tokens_evaluated") or len(prompt_ids)),
        output_tokens=int(data.get("tokens_predicted") or len(response_ids)),
        cache_read_tokens=int(timings.get("cache_n") or 0),
        requests=1,
    )
    finish = "length" if data.get("stop_type") == "limit" else None
    # The same usability checks as any other turn (empty, cut off...), then the trace.
    checked = model._checked(Completion(parts, usage, finish), request)
    return checked.model_copy(update={"token_trace": trace})
