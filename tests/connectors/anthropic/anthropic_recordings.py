"""Response shapes as Anthropic documents them, replayed through httpx.MockTransport.

Sources (read through the search tool, re-typed here, not copied):
- platform.claude.com/docs/build-with-claude/streaming — the event flow: ``message_start``
  (a Message with empty content), per block ``content_block_start`` / ``content_block_delta``
  (``text_delta`` or ``input_json_delta`` with ``partial_json``) / ``content_block_stop``,
  ``message_delta`` (stop_reason and cumulative usage), ``message_stop``; ``ping`` may come
  anywhere; an ``error`` event (e.g. ``overloaded_error``) can arrive after the 200.
- platform.claude.com/docs/api/errors — ``{"type": "error", "error": {"type", "message"},
  "request_id"}``; 400 invalid_request_error, 401 authentication_error, 403 permission_error,
  404 not_found_error, 429 rate_limit_error (with ``retry-after``), 500 api_error,
  529 overloaded_error.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

TEXT_STREAM = """\
event: message_start
data: {"type": "message_start", "message": {"id": "msg_01TextStream", "type": "message", "role": "assistant", "content": [], "model": "claude-sonnet-4-5", "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 25, "output_tokens": 1}}}

event: content_block_start
data: {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}

event: ping
data: {"type": "ping"}

event: content_block_delta
data: {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hello"}}

event: content_block_delta
data: {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "!"}}

event: content_block_stop
data: {"type": "content_block_stop", "index": 0}

event: message_delta
data: {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 15}}

event: message_stop
data: {"type": "message_stop"}

"""

# A text block, then two tool_use blocks whose input arrives as input_json_delta fragments.
TWO_TOOLS_STREAM = """\
event: message_start
data: {"type":"message_start","message":{"id":"msg_01TwoTools","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":472,"cache_creation_input_tokens":100,"cache_read_input_tokens":2048,"output_tokens":2}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: ping
data: {"type": "ping"}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Checking both "}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"cities."}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01Paris","name":"get_weather","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\\"city\\": \\"Par"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"is\\", \\"unit\\": \\"c\\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: content_block_start
data: {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_01Oslo","name":"get_weather","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\\"ci"}}

event: content_block_delta
data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"ty\\": \\"Oslo\\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":2}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":89}}

event: message_stop
data: {"type":"message_stop"}

"""

# The stream starts fine, then the server reports overload after the 200.
OVERLOADED_MID_STREAM = (
    TEXT_STREAM.split("event: content_block_stop")[0]
    + """event: error
data: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}

"""
)

# The connection closes after the first delta: no content_block_stop, no message_stop.
BROKEN_OFF_STREAM = TEXT_STREAM.split(
    'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "!"}}'
)[0]

MALFORMED_JSON_STREAM = TEXT_STREAM.replace(
    '{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "!"}}',
    '{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "!"',
)

# A tool_use whose streamed input is not valid JSON once joined.
BAD_TOOL_JSON_STREAM = """\
event: message_start
data: {"type":"message_start","message":{"id":"msg_01Bad","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_01Bad","name":"get_weather","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\\"city\\": Paris"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":7}}

event: message_stop
data: {"type":"message_stop"}

"""


def message_body(
    content: list[dict[str, Any]],
    *,
    stop_reason: str | None = "end_turn",
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A complete (non-streamed) Message as the API returns it."""
    return {
        "id": "msg_01NonStream",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage or {"input_tokens": 12, "output_tokens": 6},
    }


def error_body(error_type: str, message: str) -> dict[str, Any]:
    """An error body as the API documents it."""
    return {
        "type": "error",
        "error": {"type": error_type, "message": message},
        "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy",
    }


SECRET_KEY = "sk-ant-api03-test-SECRET-do-not-leak-1234567890"
"""The API key every test model uses; tests assert it never leaks."""

Reply = httpx.Response | Exception
"""What the fake server answers to one request: a response, or an exception to raise."""


@dataclass
class FakeAnthropic:
    """A scripted Messages API: answers requests in order and records what it was sent."""

    replies: list[Reply | Callable[[httpx.Request], Reply]]
    requests: list[httpx.Request] = field(default_factory=list)

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if not self.replies:
            raise AssertionError("the fake Anthropic server got more requests than scripted")
        reply = self.replies.pop(0)
        if callable(reply) and not isinstance(reply, httpx.Response | Exception):
            reply = reply(request)
        if isinstance(reply, Exception):
            raise reply
        return reply

    @property
    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handler)

    def body(self, index: int = -1) -> dict[str, Any]:
        """The JSON body of a recorded request."""
        body: dict[str, Any] = json.loads(self.requests[index].content)
        return body


def sse(text: str) -> httpx.Response:
    """A 200 event-stream response."""
    return httpx.Response(
        200, headers={"content-type": "text/event-stream; charset=utf-8"}, content=text.encode()
    )


def json_reply(
    status: int, body: dict[str, Any], headers: dict[str, str] | None = None
) -> httpx.Response:
    """A JSON response with a status."""
    return httpx.Response(status, json=body, headers=headers)


class FakeClock:
    """Time that only moves when the connector sleeps; records every sleep."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.now = start
        self.sleeps: list[float] = []

    def time(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def stream_of(message: dict[str, Any], *, chunk: int = 7) -> str:
    """The documented event sequence for a complete Message, cutting text and tool input
    into ``chunk``-character deltas (so assembly across fragments is exercised)."""

    def event(name: str, data: dict[str, Any]) -> str:
        return f"event: {name}\ndata: {json.dumps(data)}\n\n"

    start = {**message, "content": [], "stop_reason": None}
    start["usage"] = {**message["usage"], "output_tokens": 1}
    out = [event("message_start", {"type": "message_start", "message": start})]
    out.append(event("ping", {"type": "ping"}))
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            opening: dict[str, Any] = {"type": "text", "text": ""}
            kind, key, payload = "text_delta", "text", block["text"]
        else:
            opening = {**block, "input": {}}
            kind, key, payload = "input_json_delta", "partial_json", json.dumps(block["input"])
        out.append(
            event(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": opening},
            )
        )
        for at in range(0, len(payload), chunk):
            delta = {"type": kind, key: payload[at : at + chunk]}
            out.append(
                event(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            )
        out.append(event("content_block_stop", {"type": "content_block_stop", "index": index}))
    out.append(
        event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": message["usage"]["output_tokens"]},
            },
        )
    )
    out.append(event("message_stop", {"type": "message_stop"}))
    return "".join(out)


def answer(message: dict[str, Any]) -> Callable[[httpx.Request], httpx.Response]:
    """A reply that serves ``message`` streamed or whole, as the request asks."""

    def reply(request: httpx.Request) -> httpx.Response:
        if json.loads(request.content).get("stream"):
            return sse(stream_of(message))
        return json_reply(200, message)

    return reply


MakeModel = Callable[..., tuple[Any, FakeAnthropic]]
"""The ``make_model`` fixture: ``make_model(*replies, **model_kwargs)`` → (model, fake server)."""
