"""What the fault server says for each fault: OpenAI Chat Completions and Anthropic Messages
shapes, whole and streamed, built from one scripted conversation.

The conversation is always the same small task: the user says ``run <id>: add <a> and <b>``;
the model calls ``add(a, b)``; once a tool result with the right sum comes back it answers
``The sum is <a+b>.`` A wrong or broken tool result makes it call ``add`` again.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["ANTHROPIC_FAULTS", "OPENAI_FAULTS", "Turn", "anthropic_events", "openai_events", "plan"]

# fault -> weight. "ok" answers properly; the rest are what misbehaving servers do.
OPENAI_FAULTS: dict[str, float] = {
    "ok": 40,
    "429": 4,  # Retry-After 0 or 1
    "500": 3,
    "502": 2,
    "503": 3,
    "401": 1,
    "drop": 3,  # the connection closes before any answer
    "cut_body": 3,  # Content-Length announced, half sent (whole answers only)
    "cut_stream_early": 3,  # the stream stops before its first delta
    "cut_stream_late": 2,  # the stream stops after some deltas
    "stall": 2,  # nothing for longer than the client's read timeout
    "bad_json": 3,  # a 200 whose body (or an event) is not JSON
    "error_event_early": 2,  # a mid-stream error before any delta
    "error_event_late": 1,  # ... after some
    "bad_args": 4,  # a tool call whose arguments are not JSON: the model must fix it
    "empty": 3,  # no choices / nothing in the message
    "content_filter": 1,  # finish_reason content_filter, no content
    "length": 1,  # cut at the token limit
    "odd_shapes": 6,  # numeric ids, arguments as an object, usage as strings: still fine
    "malformed_shape": 3,  # a null choice, usage that is not a number
}
ANTHROPIC_FAULTS: dict[str, float] = {
    **{k: v for k, v in OPENAI_FAULTS.items() if k not in ("502", "content_filter", "length")},
    "529": 4,  # overloaded_error
    "refusal": 1,
    "max_tokens": 1,
}

TRANSIENT = frozenset(
    {"429", "500", "502", "503", "529", "drop", "cut_body", "cut_stream_early", "stall"}
    | {"bad_json", "error_event_early", "empty", "malformed_shape"}
)
"""Faults a connector retries (before anything was shown) until its attempts run out."""

_PROMPT = re.compile(r"run (\S+): add (-?\d+) and (-?\d+)")
CREATED = 1_767_225_600  # every OpenAI body carries its creation time; some clients insist


@dataclass
class Turn:
    """What the scripted model does next: call ``add`` or answer with the sum."""

    run: str
    a: int
    b: int
    answer: str | None  # None: call add

    @property
    def arguments(self) -> dict[str, int]:
        return {"a": self.a, "b": self.b}


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    out: list[str] = []
    for block in content or []:
        if isinstance(block, dict):
            if isinstance(block.get("text"), str):
                out.append(block["text"])
            if block.get("type") == "tool_result":
                out.extend(_texts(block.get("content")))
    return out


def plan(body: dict[str, Any]) -> Turn:
    """The next turn of the conversation in an OpenAI or Anthropic request body."""
    messages = body.get("messages") or []
    run, a, b = "?", 0, 0
    for message in messages:
        if message.get("role") == "user":
            found = _PROMPT.search(" ".join(_texts(message.get("content"))))
            if found:
                run, a, b = found.group(1), int(found.group(2)), int(found.group(3))
                break
    last = messages[-1] if messages else {}
    result: str | None = None
    if last.get("role") == "tool":
        result = " ".join(_texts(last.get("content")))
    elif last.get("role") == "user" and any(
        isinstance(block, dict) and block.get("type") == "tool_result"
        for block in last.get("content") or []
    ):
        result = " ".join(_texts(last.get("content")))
    if result is not None and result.strip() == str(a + b):
        return Turn(run, a, b, f"The sum is {a + b}.")
    return Turn(run, a, b, None)


def _broken_arguments(turn: Turn) -> str:
    """Arguments cut off mid-object: not JSON, so the model is asked to fix them."""
    return '{"a": ' + str(turn.a) + ', "b": '


# --- OpenAI ------------------------------------------------------------------------------


def _usage(odd: bool) -> dict[str, Any]:
    if odd:  # numbers as strings, as some servers send them
        return {"prompt_tokens": "31", "completion_tokens": "9", "total_tokens": "40"}
    return {"prompt_tokens": 31, "completion_tokens": 9, "total_tokens": 40}


def openai_completion(turn: Turn, fault: str) -> dict[str, Any]:
    """A whole /chat/completions body for ``turn`` under ``fault`` (a shape fault or ok)."""
    odd = fault == "odd_shapes"
    message: dict[str, Any] = {"role": "assistant", "content": None}
    finish = "stop"
    if fault == "empty":
        return {
            "id": "x",
            "object": "chat.completion",
            "created": CREATED,
            "model": "faulty",
            "choices": [],
        }
    if fault == "content_filter":
        finish = "content_filter"
    elif turn.answer is not None:
        message["content"] = [{"type": "text", "text": turn.answer}] if odd else turn.answer
        if fault == "length":
            message["content"], finish = turn.answer[:9], "length"
    else:
        arguments: Any = json.dumps(turn.arguments)
        if odd:
            arguments = turn.arguments  # an object, not its JSON text
        elif fault == "bad_args":
            arguments = _broken_arguments(turn)
        elif fault == "length":
            arguments, finish = arguments[:6], "length"
        call_id: Any = 7 if odd else f"call_{turn.run}"
        message["tool_calls"] = [
            {"id": call_id, "type": "function", "function": {"name": "add", "arguments": arguments}}
        ]
        finish = "tool_calls" if finish == "stop" else finish
    body: dict[str, Any] = {
        "id": "chatcmpl-f",
        "object": "chat.completion",
        "created": CREATED,
        "model": "faulty",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": _usage(odd),
    }
    if fault == "malformed_shape":
        if turn.a % 2:
            body["choices"] = [None]
        else:
            body["usage"] = {"prompt_tokens": "lots", "completion_tokens": 9}
    return body


def _data(value: Any) -> bytes:
    return b"data: " + json.dumps(value).encode() + b"\n\n"


def _chunk(delta: dict[str, Any] | None = None, finish: str | None = None) -> bytes:
    return _data(
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": "faulty",
            "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}],
        }
    )


def openai_events(turn: Turn, fault: str) -> tuple[list[bytes], bool]:
    """The SSE pieces of a streamed answer, and whether the stream ends properly."""
    odd = fault == "odd_shapes"
    head = [_chunk({"role": "assistant", "content": ""})]
    if fault == "cut_stream_early":
        return head, False
    if fault == "error_event_early":
        return [
            *head,
            _data({"error": {"message": "worker crashed", "type": "server_error"}}),
        ], True
    if fault == "bad_json":
        return [*head, b'data: {"choices": [{"delta": \n\n'], True
    if fault == "empty":
        return [*head, _chunk(finish="stop"), b"data: [DONE]\n\n"], True
    if fault == "content_filter":
        return [*head, _chunk(finish="content_filter"), b"data: [DONE]\n\n"], True
    if fault == "malformed_shape":
        return [*head, _data({"id": "c", "choices": [None]})], True
    body: list[bytes] = []
    finish = "stop"
    if turn.answer is not None:
        text = turn.answer[:9] if fault == "length" else turn.answer
        body = [_chunk({"content": text[i : i + 5]}) for i in range(0, len(text), 5)]
        finish = "length" if fault == "length" else "stop"
    else:
        arguments = json.dumps(turn.arguments)
        if fault == "bad_args":
            arguments = _broken_arguments(turn)
        elif fault == "length":
            arguments, finish = arguments[:6], "length"
        index: Any = "0" if odd else 0
        call_id: Any = 7 if odd else f"call_{turn.run}"
        start = {
            "index": index,
            "id": call_id,
            "type": "function",
            "function": {"name": "add", "arguments": ""},
        }
        body = [_chunk({"tool_calls": [start]})]
        if odd:
            pieces: list[Any] = [turn.arguments]  # the whole object in one piece
        else:
            pieces = [arguments[:5], arguments[5:]]
        body += [
            _chunk({"tool_calls": [{"index": index, "function": {"arguments": p}}]}) for p in pieces
        ]
        finish = "tool_calls" if finish == "stop" else finish
    if fault == "cut_stream_late":
        return [*head, *body[:1]], False
    if fault == "error_event_late":
        return [
            *head,
            *body[:1],
            _data({"error": {"message": "worker crashed", "type": "server_error"}}),
        ], True
    usage = _data(
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": "faulty",
            "choices": [],
            "usage": _usage(odd),
        }
    )
    return [*head, *body, _chunk(finish=finish), usage, b"data: [DONE]\n\n"], True


# --- Anthropic ---------------------------------------------------------------------------


def anthropic_message(turn: Turn, fault: str) -> dict[str, Any]:
    """A whole Messages API body for ``turn`` under ``fault``."""
    odd = fault == "odd_shapes"
    stop = "end_turn"
    content: list[dict[str, Any]] = []
    if fault == "refusal":
        stop = "refusal"
    elif fault == "empty":
        content = []
    elif turn.answer is not None:
        text = turn.answer[:9] if fault == "max_tokens" else turn.answer
        content = [{"type": "text", "text": text}]
        stop = "max_tokens" if fault == "max_tokens" else stop
    else:
        tool_input: Any = turn.arguments
        if odd:
            tool_input = json.dumps(turn.arguments)  # the object as JSON text
        elif fault == "bad_args":
            tool_input = _broken_arguments(turn)
        block_id: Any = 7 if odd else f"toolu_{turn.run}"
        content = [{"type": "tool_use", "id": block_id, "name": "add", "input": tool_input}]
        stop = "max_tokens" if fault == "max_tokens" else "tool_use"
    usage: dict[str, Any] = (
        {"input_tokens": "31", "output_tokens": "9"}
        if odd
        else {"input_tokens": 31, "output_tokens": 9}
    )
    if fault == "malformed_shape":
        usage = {"input_tokens": "lots", "output_tokens": 9}
    return {
        "id": "msg_f",
        "type": "message",
        "role": "assistant",
        "model": "faulty",
        "content": content,
        "stop_reason": stop,
        "usage": usage,
    }


def _event(data: dict[str, Any]) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


_OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


def anthropic_events(turn: Turn, fault: str) -> tuple[list[bytes], bool]:
    """The SSE events of a streamed message, and whether the stream ends properly."""
    odd = fault == "odd_shapes"
    usage: dict[str, Any] = (
        {"input_tokens": "31", "output_tokens": 1}
        if odd
        else {"input_tokens": 31, "output_tokens": 1}
    )
    if fault == "malformed_shape":
        usage = {"input_tokens": "lots"}
    start = {
        "id": "msg_f",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": "faulty",
        "stop_reason": None,
        "usage": usage,
    }
    head = [_event({"type": "message_start", "message": start})]
    if fault == "cut_stream_early":
        return head, False
    if fault == "error_event_early":
        return [*head, _event(_OVERLOADED)], True
    if fault == "bad_json":
        return [*head, b'event: content_block_start\ndata: {"type": "content_block_st\n\n'], True
    blocks: list[bytes] = []
    stop = "end_turn"
    if fault == "refusal":
        stop = "refusal"
    elif fault == "empty":
        pass
    elif turn.answer is not None:
        text = turn.answer[:9] if fault == "max_tokens" else turn.answer
        blocks.append(
            _event(
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                }
            )
        )
        for i in range(0, len(text), 5):
            delta = {"type": "text_delta", "text": text[i : i + 5]}
            blocks.append(_event({"type": "content_block_delta", "index": 0, "delta": delta}))
        blocks.append(_event({"type": "content_block_stop", "index": 0}))
        stop = "max_tokens" if fault == "max_tokens" else stop
    else:
        arguments = json.dumps(turn.arguments)
        if fault == "bad_args":
            arguments = _broken_arguments(turn)
        block_id: Any = 7 if odd else f"toolu_{turn.run}"
        index: Any = "0" if odd else 0
        opening = {
            "type": "tool_use",
            "id": block_id,
            "name": "add",
            "input": turn.arguments if odd else {},
        }
        blocks.append(
            _event({"type": "content_block_start", "index": index, "content_block": opening})
        )
        if not odd:  # odd: the whole input came with the start, as some gateways send it
            for piece in (arguments[:5], arguments[5:]):
                delta = {"type": "input_json_delta", "partial_json": piece}
                blocks.append(
                    _event({"type": "content_block_delta", "index": index, "delta": delta})
                )
        blocks.append(_event({"type": "content_block_stop", "index": index}))
        stop = "max_tokens" if fault == "max_tokens" else "tool_use"
    if fault == "cut_stream_late":
        return [*head, *blocks[:2]], False
    if fault == "error_event_late":
        return [*head, *blocks[:2], _event(_OVERLOADED)], True
    tail = [
        _event(
            {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 9}}
        ),
        _event({"type": "message_stop"}),
    ]
    return [*head, *blocks, *tail], True
