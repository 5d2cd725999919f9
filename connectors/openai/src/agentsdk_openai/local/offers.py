"""A refused call sent again unchanged becomes the call its refusal offered
(:func:`offer_taken`), the last of :class:`~agentsdk_openai.local.reask.Reasking`'s steps.

A tool that refuses a call can say which call would do what it meant
(``ToolError(instead=...)``, kept on the result as ``ToolResultPart.instead``): Godot's
``add_node`` offers the call without a made-up property, or with a capsule's size in the
order it takes. On new users' prompts the 1.5B model read such a refusal and sent the
refused call again, unchanged, until the loop guard stopped the run: a Camera's
``"direction": "front"`` (s16/7), a capsule of ``[2, 2, 1]`` (s22/7). The same call, sent
again, is taken to mean what it meant the first time: the call offered for it is sent
instead. A call changed in any way is the model's own and is left alone, and so is an
offer that does not validate against the tool's schema.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from agentsdk.tools import SchemaProblem, compile_schema

from agentsdk import ModelRequest, ModelResponse, ToolCallPart

from .unmade import newest_request_at

__all__ = ["offer_taken", "valid_arguments"]

logger = logging.getLogger("agentsdk_openai.local")


def _plain(value: object) -> object:
    """The value with every integral float written as an int: ``[2.0, 3.0]`` and ``[2, 3]``
    are the same call (s20/9: a resend with floats missed the refusal written with ints)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _key(name: str, arguments: dict[str, Any]) -> str:
    return name + "\x00" + json.dumps(_plain(arguments), sort_keys=True, default=str)


def _offers(request: ModelRequest) -> dict[str, dict[str, Any]]:
    """Each call refused with an offer since the newest request -> the offered arguments
    (the newest offer, when the same call was refused twice)."""
    start = newest_request_at(request)
    messages = request.messages[0 if start is None else start + 1 :]
    results = {r.call_id: r for m in messages for r in m.tool_results}
    offers: dict[str, dict[str, Any]] = {}
    for message in messages:
        for call in message.tool_calls:
            result = results.get(call.id)
            if result is not None and result.is_error and result.instead is not None:
                offers[_key(call.name, call.arguments)] = result.instead
    return offers


def valid_arguments(request: ModelRequest, name: str, arguments: dict[str, Any]) -> bool:
    """The arguments pass the schema of the offered tool of that name (False for a tool not
    offered, and beyond the compiled checks: the grammar then decides)."""
    spec = next((s for s in request.tools if s.name == name), None)
    if spec is None:
        return False
    try:
        return not compile_schema(spec.parameters)(arguments)
    except SchemaProblem:
        return False


def offer_taken(request: ModelRequest, response: ModelResponse) -> ModelResponse:
    """The response with each call that repeats, name and arguments, a call refused with
    an offer since the newest request replaced by that offer (same id, so the turn reads as
    the model's)."""
    calls = response.tool_calls
    offers = _offers(request) if calls else {}
    if not offers:
        return response
    parts = []
    for part in response.parts:
        if isinstance(part, ToolCallPart) and part.raw_arguments is None:
            offer = offers.get(_key(part.name, part.arguments))
            if (
                offer is not None
                and _plain(offer) != _plain(part.arguments)
                and valid_arguments(request, part.name, offer)
            ):
                logger.info("%s sent again after its refusal: the offered call instead", part.name)
                part = part.model_copy(update={"arguments": offer})
        parts.append(part)
    return response.model_copy(update={"parts": parts})
