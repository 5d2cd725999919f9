"""Measure the connector's own overhead (no network): SSE assembly and request building.

Run: ``uv run python connectors/anthropic/measure_overhead.py``. Serves recorded-shape
responses through httpx.MockTransport, so the numbers are this code's cost, not the API's.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import anyio
import httpx
from agentsdk_anthropic import AnthropicModel

from agentsdk import (
    ImagePart,
    Message,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)


def _event(name: str, data: dict[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n"


def long_stream(text_deltas: int, json_fragments: int) -> bytes:
    """A documented-shape stream: one text block, one tool_use block, in many small deltas."""
    usage = {"input_tokens": 1000, "output_tokens": 1}
    start = {"id": "msg_x", "type": "message", "role": "assistant", "content": [], "usage": usage}
    out = [_event("message_start", {"type": "message_start", "message": start})]
    out.append(
        _event(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        )
    )
    for _ in range(text_deltas):
        delta = {"type": "text_delta", "text": "word "}
        out.append(
            _event(
                "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
            )
        )
    out.append(_event("content_block_stop", {"type": "content_block_stop", "index": 0}))
    tool = {"type": "tool_use", "id": "toolu_x", "name": "write", "input": {}}
    out.append(
        _event(
            "content_block_start",
            {"type": "content_block_start", "index": 1, "content_block": tool},
        )
    )
    pieces = ['{"text": "'] + ["abcd"] * json_fragments + ['"}']
    for piece in pieces:
        delta = {"type": "input_json_delta", "partial_json": piece}
        out.append(
            _event(
                "content_block_delta", {"type": "content_block_delta", "index": 1, "delta": delta}
            )
        )
    out.append(_event("content_block_stop", {"type": "content_block_stop", "index": 1}))
    end = {
        "type": "message_delta",
        "delta": {"stop_reason": "tool_use"},
        "usage": {"output_tokens": 2000},
    }
    out.append(_event("message_delta", end))
    out.append(_event("message_stop", {"type": "message_stop"}))
    return "".join(out).encode()


def long_history(turns: int, image_bytes: int) -> list[Message]:
    """A conversation of tool rounds, each result carrying an image."""
    messages = [Message.system("You render scenes."), Message.user("Build a city.")]
    image = ImagePart(data=os.urandom(image_bytes), media_type="image/png")
    for n in range(turns):
        call = ToolCallPart(id=f"toolu_{n}", name="render", arguments={"step": n})
        messages.append(Message(role="assistant", parts=[TextPart(text=f"Step {n}."), call]))
        result = ToolResultPart(call_id=call.id, name="render", parts=[TextPart(text="ok"), image])
        messages.append(Message(role="tool", parts=[result]))
    return messages


async def main() -> None:
    rows: list[tuple[str, str]] = []
    stream_body = long_stream(2000, 500)
    final_ok = json.dumps(
        {"content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn", "usage": {}}
    ).encode()

    def handler(request: httpx.Request) -> httpx.Response:
        if json.loads(request.content).get("stream"):
            return httpx.Response(200, content=stream_body)
        return httpx.Response(200, content=final_ok)

    model = AnthropicModel(
        "claude-sonnet-4-5", api_key="measure", transport=httpx.MockTransport(handler)
    )
    ask = ModelRequest(messages=[Message.user("Write a lot.")])
    runs = 20
    began = time.perf_counter()
    deltas = 0
    for _ in range(runs):
        async for item in model.stream(ask):
            if not isinstance(item, ModelResponse):
                deltas += 1
    per_stream = (time.perf_counter() - began) / runs
    rows.append(
        ("stream of 2,504 deltas (text + tool JSON) assembled", f"{per_stream * 1000:.1f} ms")
    )
    rows.append(("stream assembly rate", f"{deltas / runs / per_stream:,.0f} deltas/s"))

    history = ModelRequest(messages=long_history(40, 100_000))
    began = time.perf_counter()
    for _ in range(runs):
        await model.request(history)
    per_request = (time.perf_counter() - began) / runs
    rows.append(("request with 40 tool rounds, 40 x 100 KB images", f"{per_request * 1000:.1f} ms"))

    short = ModelRequest(messages=[Message.user("hi")])
    began = time.perf_counter()
    for _ in range(200):
        await model.request(short)
    rows.append(
        ("one-message request round trip", f"{(time.perf_counter() - began) / 200 * 1000:.2f} ms")
    )
    await model.aclose()

    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


if __name__ == "__main__":
    anyio.run(main)
