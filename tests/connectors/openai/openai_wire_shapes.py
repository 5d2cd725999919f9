"""Chat Completions response shapes as OpenAI-compatible servers send them, for MockTransport."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
from agentsdk_openai import OpenAIChatModel, RetryPolicy, engine_profile


def completion(
    content: str | None = None,
    tool_calls: list[tuple[str, str, str]] | None = None,
    *,
    finish_reason: str = "stop",
    prompt_tokens: int = 11,
    completion_tokens: int = 7,
) -> dict[str, Any]:
    """A /chat/completions body; tool_calls are (id, name, arguments-text) triples."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
            for i, n, a in tool_calls
        ]
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "served-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": 3},
        },
    }


def chunk(
    delta: dict[str, Any] | None = None,
    *,
    finish_reason: str | None = None,
    usage: dict[str, int] | None = None,
) -> str:
    """One SSE event of a streamed completion."""
    body: dict[str, Any] = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": []}
    if delta is not None or finish_reason is not None:
        body["choices"] = [{"index": 0, "delta": delta or {}, "finish_reason": finish_reason}]
    if usage is not None:
        body["usage"] = usage
    return f"data: {json.dumps(body)}\n\n"


DONE = "data: [DONE]\n\n"


class FakeClock:
    """Records the waits a RetryPolicy asks for instead of sleeping."""

    def __init__(self) -> None:
        self.sleeps: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)


class Recorder:
    """A MockTransport handler that replays responses in order and keeps the requests."""

    def __init__(
        self, *responses: httpx.Response | Callable[[httpx.Request], httpx.Response] | Exception
    ):
        self.responses = list(responses)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        item = self.responses.pop(0) if len(self.responses) > 1 else self.responses[0]
        if isinstance(item, Exception):
            raise item
        return item(request) if callable(item) else item

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests]


def mock_model(
    recorder: Recorder, *, engine: str = "vllm", clock: FakeClock | None = None, **kwargs: Any
) -> OpenAIChatModel:
    """A connector whose HTTP goes to ``recorder`` and whose retries use ``clock``."""
    profile = engine_profile(engine)
    retry = RetryPolicy(sleep=(clock or FakeClock()).sleep)
    return OpenAIChatModel(
        "test-model",
        base_url="http://engine.test/v1",
        api_key="sk-test-secret-123",
        engine=profile,
        retry=retry,
        transport=httpx.MockTransport(recorder),
        **kwargs,
    )


def sse_response(*events: str, status: int = 200) -> httpx.Response:
    return httpx.Response(
        status, content="".join(events).encode(), headers={"content-type": "text/event-stream"}
    )
