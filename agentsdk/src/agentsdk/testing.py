"""Models for testing agents without a network: ``ScriptedModel`` and ``FunctionModel``."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

from .messages import TextPart, ToolCallPart, Usage, _text_part, _trusted
from .models import ModelProfile, ModelRequest, ModelResponse, StreamDelta

Step = str | ToolCallPart | list[ToolCallPart] | BaseException | ModelResponse
FunctionResult = str | ToolCallPart | list[ToolCallPart] | ModelResponse

__all__ = ["FunctionModel", "ScriptedModel"]


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4) if text else 0


def _response(value: FunctionResult, name: str, request: ModelRequest) -> ModelResponse:
    if isinstance(value, ModelResponse):
        return value
    parts: list[TextPart | ToolCallPart]
    if isinstance(value, str):
        parts = [_text_part(value) if type(value) is str else TextPart(text=value)]
        out = _estimate_tokens(value)
    elif isinstance(value, ToolCallPart):
        parts = [value]
        out = 8
    else:
        parts = list(value)
        out = 8 * len(parts)
    last = request.messages[-1].text if request.messages else ""
    usage = _trusted(
        Usage,
        {
            "input_tokens": _estimate_tokens(last),
            "output_tokens": out,
            "cache_read_tokens": 0,
            "cache_write_tokens": 0,
            "requests": 1,
        },
        {"input_tokens", "output_tokens", "requests"},
    )
    return _trusted(
        ModelResponse,
        {
            "parts": parts,
            "usage": usage,
            "model_name": name,
            "finish_reason": None,
            "token_trace": None,
        },
        {"parts", "usage", "model_name", "finish_reason"},
    )


async def _stream_of(response: ModelResponse) -> AsyncIterator[StreamDelta | ModelResponse]:
    for part in response.parts:
        if isinstance(part, TextPart):
            words = part.text.split(" ")
            for i, word in enumerate(words):
                yield StreamDelta(text=word if i == len(words) - 1 else word + " ")
    for i, part in enumerate(response.tool_calls):
        yield StreamDelta(tool_call_index=i, tool_name=part.name)
    yield response


class ScriptedModel:
    """Answers each turn with the next scripted step.

    A step is assistant text, a ``ToolCallPart`` (or a list of them: calls in
    one turn), an exception instance (raised), or a full ``ModelResponse``.
    ``requests`` records what the model received.
    """

    def __init__(
        self,
        steps: Sequence[Step],
        *,
        name: str = "scripted",
        profile: ModelProfile | None = None,
    ):
        self.steps = list(steps)
        self.name = name
        self.profile = profile or ModelProfile(images_in_tool_results=True, image_input=True)
        self.requests: list[ModelRequest] = []
        self._next = 0

    def _take(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        if self._next >= len(self.steps):
            raise AssertionError(
                f"ScriptedModel ran out of steps: turn {len(self.requests)} asked for a step "
                f"but only {len(self.steps)} were scripted"
            )
        step = self.steps[self._next]
        self._next += 1
        if isinstance(step, BaseException):
            raise step
        return _response(step, self.name, request)

    @property
    def remaining(self) -> int:
        """Steps not yet used."""
        return len(self.steps) - self._next

    def assert_consumed(self) -> None:
        """Fail if any scripted step was not used."""
        if self.remaining:
            raise AssertionError(f"ScriptedModel has {self.remaining} unused step(s)")

    async def request(self, request: ModelRequest) -> ModelResponse:
        """The next step as a response."""
        return self._take(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamDelta | ModelResponse]:
        """The next step, streamed word by word."""
        response = self._take(request)
        async for item in _stream_of(response):
            yield item

    async def aclose(self) -> None:
        """Nothing to release."""


class FunctionModel:
    """Calls ``fn(request)`` (sync or async) for each turn to decide the answer."""

    def __init__(
        self,
        fn: Callable[[ModelRequest], FunctionResult | Awaitable[FunctionResult]],
        *,
        name: str = "function",
        profile: ModelProfile | None = None,
    ):
        self.fn = fn
        self.name = name
        self.profile = profile or ModelProfile(images_in_tool_results=True, image_input=True)
        self.requests: list[ModelRequest] = []

    async def request(self, request: ModelRequest) -> ModelResponse:
        """What ``fn`` returns, as a response."""
        self.requests.append(request)
        value = self.fn(request)
        if inspect.isawaitable(value):
            value = await value
        return _response(value, self.name, request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamDelta | ModelResponse]:
        """What ``fn`` returns, streamed word by word."""
        response = await self.request(request)
        async for item in _stream_of(response):
            yield item

    async def aclose(self) -> None:
        """Nothing to release."""
