"""Chat Completions responses (whole and streamed) back into agentsdk types."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agentsdk import ModelError, StreamDelta, TextPart, ToolCallPart, Usage

from .prompted import response_parts

__all__ = ["StreamAssembler", "parse_arguments", "parse_completion", "parse_usage"]


def parse_arguments(name: str, raw: str | None, call_id: str | None) -> ToolCallPart:
    """A ToolCallPart from the model's argument text; unparseable text goes to raw_arguments."""
    extra: dict[str, Any] = {"id": call_id} if call_id else {}
    text = (raw or "").strip()
    if not text:
        return ToolCallPart(name=name, arguments={}, **extra)
    try:
        value = json.loads(text)
    except ValueError:
        return ToolCallPart(name=name, arguments={}, raw_arguments=raw, **extra)
    if not isinstance(value, dict):
        return ToolCallPart(name=name, arguments={}, raw_arguments=raw, **extra)
    return ToolCallPart(name=name, arguments=value, **extra)


def parse_usage(data: Any) -> Usage:
    """Usage from the wire ``usage`` object (missing fields count as zero)."""
    if not isinstance(data, dict):
        return Usage(requests=1)
    details = data.get("prompt_tokens_details") or {}
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return Usage(
        input_tokens=int(data.get("prompt_tokens") or 0),
        output_tokens=int(data.get("completion_tokens") or 0),
        cache_read_tokens=int(cached or 0),
        requests=1,
    )


def _malformed(model_name: str, what: str) -> ModelError:
    return ModelError(
        f"{model_name}: malformed response from the server: {what}", model_name=model_name
    )


def parse_completion(
    body: Any, *, model_name: str, prompted_tools: Sequence[str] | None
) -> tuple[list[TextPart | ToolCallPart], Usage, str | None]:
    """(parts, usage, finish_reason) of a non-streamed completion.

    ``prompted_tools`` is the list of offered tool names when calls must be read from text.
    """
    if not isinstance(body, dict):
        raise _malformed(model_name, "the body is not a JSON object")
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise _malformed(model_name, "no choices")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise _malformed(model_name, "the choice has no message")
    text = message.get("content") or ""
    if not isinstance(text, str):
        raise _malformed(model_name, "message content is not text")
    parts: list[TextPart | ToolCallPart]
    if prompted_tools is not None:
        parts = response_parts(text, prompted_tools)
    else:
        parts = [TextPart(text=text)] if text else []
        for call in message.get("tool_calls") or []:
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                raise _malformed(model_name, "a tool call without a function name")
            parts.append(
                parse_arguments(function["name"], function.get("arguments"), call.get("id"))
            )
    return parts, parse_usage(body.get("usage")), choices[0].get("finish_reason")


@dataclass
class _PendingCall:
    id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)


# Text a prompted model starts its answer with when it is about to write a tool call.
_CALL_OPENERS = ("<tool_call>", "{", "[", "```")


@dataclass
class StreamAssembler:
    """Accumulates streamed chunks; ``finish`` builds the response once ``[DONE]`` arrived."""

    model_name: str
    prompted_tools: Sequence[str] | None = None
    text: list[str] = field(default_factory=list)
    calls: dict[int, _PendingCall] = field(default_factory=dict)
    usage: Usage | None = None
    finish_reason: str | None = None
    done: bool = False
    _holding: bool = False

    def feed(self, payload: str) -> list[StreamDelta]:
        """Take one ``data:`` payload; return the deltas to show."""
        if payload == "[DONE]":
            self.done = True
            return []
        try:
            chunk = json.loads(payload)
        except ValueError as exc:
            raise ModelError(
                f"{self.model_name}: the stream sent malformed JSON ({exc}): {payload[:200]!r}",
                model_name=self.model_name,
                retryable=True,
            ) from None
        if not isinstance(chunk, dict):
            raise _malformed(self.model_name, f"stream chunk is not an object: {payload[:200]!r}")
        if "error" in chunk:
            error = chunk["error"]
            message = error.get("message") if isinstance(error, dict) else str(error)
            raise ModelError(
                f"{self.model_name}: the server reported an error mid-stream: {message}",
                model_name=self.model_name,
            )
        if chunk.get("usage"):
            self.usage = parse_usage(chunk["usage"])
        deltas: list[StreamDelta] = []
        for choice in chunk.get("choices") or []:
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
            delta = choice.get("delta") or {}
            content = delta.get("content")
            if content:
                deltas.extend(self._text(content))
            for call in delta.get("tool_calls") or []:
                deltas.append(self._call_delta(call))
        return deltas

    def _text(self, content: str) -> list[StreamDelta]:
        self.text.append(content)
        if self.prompted_tools is None:
            return [StreamDelta(text=content)]
        # A prompted model may be writing a tool call as text: hold it back for the parser.
        if not self._holding and "".join(self.text).lstrip().startswith(_CALL_OPENERS):
            self._holding = True
        return [] if self._holding else [StreamDelta(text=content)]

    def _call_delta(self, call: dict[str, Any]) -> StreamDelta:
        index = call.get("index", len(self.calls))
        pending = self.calls.setdefault(index, _PendingCall())
        if call.get("id"):
            pending.id = call["id"]
        function = call.get("function") or {}
        new_name = None
        if function.get("name"):
            new_name = function["name"]
            pending.name += new_name
        arguments = function.get("arguments") or ""
        if arguments:
            pending.arguments.append(arguments)
        return StreamDelta(tool_call_index=index, tool_name=new_name, arguments_delta=arguments)

    def finish(self) -> tuple[list[TextPart | ToolCallPart], Usage, str | None]:
        """The complete parts; raises ModelError when the stream ended early."""
        if not self.done:
            raise ModelError(
                f"{self.model_name}: the stream ended before [DONE]; the partial answer was discarded",
                model_name=self.model_name,
                retryable=True,
            )
        text = "".join(self.text)
        parts: list[TextPart | ToolCallPart]
        if self.prompted_tools is not None:
            parts = response_parts(text, self.prompted_tools)
        else:
            parts = [TextPart(text=text)] if text else []
        for index in sorted(self.calls):
            pending = self.calls[index]
            if not pending.name:
                raise _malformed(self.model_name, f"streamed tool call {index} has no name")
            parts.append(parse_arguments(pending.name, "".join(pending.arguments), pending.id))
        return parts, self.usage or Usage(requests=1), self.finish_reason
