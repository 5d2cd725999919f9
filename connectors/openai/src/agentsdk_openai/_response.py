"""Chat Completions responses (whole and streamed) back into agentsdk types.

Lenient where a server's intent is clear (arguments sent as an object, numeric ids, string
indexes, token counts as numeric strings, content as a list of text parts), strict
everywhere else: a shape we cannot read is a ``MalformedResponseError`` naming the field.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from agentsdk import (
    ContentFilteredError,
    EmptyResponseError,
    MalformedResponseError,
    ModelResponse,
    ModelSettings,
    ResponseTruncatedError,
    StreamDelta,
    TextPart,
    ToolCallPart,
    Usage,
)

from ._events import decode_event, error_event
from ._wire import dumps
from .prompted import response_parts

__all__ = [
    "Completion",
    "ReadCalls",
    "StreamAssembler",
    "calls_from_text",
    "checked_response",
    "guarded",
    "malformed",
    "parse_arguments",
    "parse_completion",
    "parse_usage",
]

Parts = list[TextPart | ToolCallPart]
_T = TypeVar("_T")


def malformed(model_name: str, field_name: str, problem: str) -> MalformedResponseError:
    """The error for a response field we cannot read (retryable, like a 5xx)."""
    return MalformedResponseError(
        f"{model_name}: the server sent a malformed response: {field_name} {problem}",
        field=field_name,
        model_name=model_name,
    )


def _decoded(payload: str, model_name: str) -> Any:
    """A ``data:`` payload as JSON; an ``error`` event raises its ModelError."""
    chunk = decode_event(payload, model_name)
    if isinstance(chunk, dict) and chunk.get("error") is not None:
        raise error_event(chunk["error"], model_name)
    return chunk


def guarded(model_name: str, parse: Callable[[], _T]) -> _T:
    """``parse()``; a shape the parser did not foresee is still a MalformedResponseError,
    never a bare ValueError, KeyError or AttributeError."""
    try:
        return parse()
    except MalformedResponseError:
        raise
    except (ValueError, TypeError, LookupError, AttributeError) as exc:
        raise MalformedResponseError(
            f"{model_name}: the server sent a response that could not be read "
            f"({type(exc).__name__}: {str(exc)[:200]})",
            field="body",
            model_name=model_name,
        ) from None


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def parse_arguments(name: str, raw: Any, call_id: str | None) -> ToolCallPart:
    """A ToolCallPart from the model's arguments: JSON text, or a JSON object some servers
    send as is. Anything else goes to ``raw_arguments`` for the model to fix."""
    extra: dict[str, Any] = {"id": call_id} if call_id else {}
    if isinstance(raw, dict):
        return ToolCallPart(name=name, arguments=raw, **extra)
    if raw is None:
        return ToolCallPart(name=name, arguments={}, **extra)
    if not isinstance(raw, str):  # a list or a number: the model's mistake, not the server's
        return ToolCallPart(name=name, arguments={}, raw_arguments=dumps(raw), **extra)
    text = raw.strip()
    if not text:
        return ToolCallPart(name=name, arguments={}, **extra)
    try:
        value = json.loads(text)
    except ValueError:
        return ToolCallPart(name=name, arguments={}, raw_arguments=raw, **extra)
    if not isinstance(value, dict):
        return ToolCallPart(name=name, arguments={}, raw_arguments=raw, **extra)
    return ToolCallPart(name=name, arguments=value, **extra)


def _count(value: Any, where: str, model_name: str) -> int:
    """A token count: an int, an integral float or a numeric string ("12")."""
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        return int(value.strip())
    raise malformed(model_name, where, f"is {_shown(value)}, not a token count")


def parse_usage(data: Any, model_name: str) -> Usage:
    """Usage from the wire ``usage`` object (missing fields count as zero)."""
    if data is None:
        return Usage(requests=1)
    if not isinstance(data, dict):
        raise malformed(model_name, "usage", f"is {_shown(data)}, not an object")
    details = data.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return Usage(
        input_tokens=_count(data.get("prompt_tokens"), "usage.prompt_tokens", model_name),
        output_tokens=_count(data.get("completion_tokens"), "usage.completion_tokens", model_name),
        cache_read_tokens=_count(cached, "usage.prompt_tokens_details.cached_tokens", model_name),
        requests=1,
    )


def _call_id(value: Any, where: str, model_name: str) -> str | None:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)  # some servers number their calls
    raise malformed(model_name, where, f"is {_shown(value)}, not an id")


def _index(value: Any, where: str, model_name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        return int(value.strip())
    raise malformed(model_name, where, f"is {_shown(value)}, not an index")


def _text(value: Any, where: str, model_name: str) -> str:
    """Message content: a string, null, or a list of text parts (some servers send parts)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        pieces: list[str] = []
        for i, part in enumerate(value):
            if isinstance(part, str):
                pieces.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                pieces.append(part["text"])
            elif isinstance(part, dict) and part.get("type") not in (None, "text"):
                continue  # a kind of part we do not read (a refusal part is read apart)
            else:
                raise malformed(model_name, f"{where}[{i}]", f"is {_shown(part)}, not text")
        return "".join(pieces)
    raise malformed(model_name, where, f"is {_shown(value)}, not text")


def _finish_reason(value: Any, where: str, model_name: str) -> str | None:
    if value is None or isinstance(value, str):
        return value or None
    raise malformed(model_name, where, f"is {_shown(value)}, not a string")


def _first_choice(body: dict[str, Any], model_name: str) -> dict[str, Any] | None:
    choices = body.get("choices")
    if choices is None or choices == []:
        return None
    if not isinstance(choices, list):
        raise malformed(model_name, "choices", f"is {_shown(choices)}, not a list")
    choice = choices[0]
    if not isinstance(choice, dict):
        raise malformed(model_name, "choices[0]", f"is {_shown(choice)}, not an object")
    return choice


@dataclass
class Completion:
    """What one response said, before the usability check. Unpacks as
    ``(parts, usage, finish_reason)``."""

    parts: Parts
    usage: Usage
    finish_reason: str | None
    refusal: str | None = None
    has_choice: bool = True

    def __iter__(self) -> Iterator[Any]:
        return iter((self.parts, self.usage, self.finish_reason))


ReadCalls = Callable[[str], Parts]
"""Reads a turn's parts (text and tool calls) from the model's text, for engines whose
calls arrive as text (prompted tool calling, grammar-constrained output)."""


def calls_from_text(tool_names: Sequence[str] | None) -> ReadCalls | None:
    """The reader of prompted tool calls for these offered tools (None: calls are native)."""
    if tool_names is None:
        return None
    names = list(tool_names)
    return lambda text: response_parts(text, names)


def _read(text: str, read_calls: ReadCalls, finish: str | None) -> tuple[Parts, str | None]:
    parts = read_calls(text)
    if any(isinstance(p, ToolCallPart) for p in parts) and finish in (None, "stop"):
        finish = "tool_calls"  # the server saw text; we found calls in it
    return parts, finish


def parse_completion(
    body: Any,
    *,
    model_name: str,
    prompted_tools: Sequence[str] | None = None,
    read_calls: ReadCalls | None = None,
) -> Completion:
    """A non-streamed completion. ``read_calls`` (or ``prompted_tools``, the offered tool
    names) reads the calls from the text when they do not arrive as ``tool_calls``."""
    read_calls = read_calls or calls_from_text(prompted_tools)
    if not isinstance(body, dict):
        raise malformed(model_name, "body", f"is {_shown(body)}, not a JSON object")
    usage = parse_usage(body.get("usage"), model_name)
    choice = _first_choice(body, model_name)
    if choice is None:
        return Completion([], usage, None, has_choice=False)
    message = choice.get("message")
    if not isinstance(message, dict):
        raise malformed(model_name, "choices[0].message", f"is {_shown(message)}, not an object")
    text = _text(message.get("content"), "choices[0].message.content", model_name)
    refusal = message.get("refusal")
    refusal = refusal if isinstance(refusal, str) and refusal else None
    finish = _finish_reason(choice.get("finish_reason"), "choices[0].finish_reason", model_name)
    if read_calls is not None:
        read, finish = _read(text, read_calls, finish)
        return Completion(read, usage, finish, refusal)
    parts: Parts = [TextPart(text=text)] if text else []
    calls = message.get("tool_calls")
    if calls is None and isinstance(message.get("function_call"), dict):
        calls = [{"function": message["function_call"]}]  # the legacy functions API
    if calls is not None and not isinstance(calls, list):
        raise malformed(model_name, "choices[0].message.tool_calls", f"is {_shown(calls)}")
    for i, call in enumerate(calls or []):
        where = f"choices[0].message.tool_calls[{i}]"
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise malformed(model_name, f"{where}.function.name", "is missing")
        call_id = _call_id(call.get("id"), f"{where}.id", model_name)
        parts.append(parse_arguments(function["name"], function.get("arguments"), call_id))
    return Completion(parts, usage, finish, refusal)


@dataclass
class _PendingCall:
    id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)


# Text a prompted model starts its answer with when it is about to write a tool call.
_CALL_OPENERS = ("<tool_call>", "{", "[", "```")


@dataclass
class StreamAssembler:
    """Accumulates streamed chunk objects; ``finish`` builds the turn once ``[DONE]`` arrived."""

    model_name: str
    prompted_tools: Sequence[str] | None = None
    """The offered tool names when calls are read from the text (or give ``read_calls``)."""
    read_calls: ReadCalls | None = None
    text: list[str] = field(default_factory=list)
    refusal: list[str] = field(default_factory=list)
    calls: dict[int, _PendingCall] = field(default_factory=dict)
    usage: Usage | None = None
    finish_reason: str | None = None
    done: bool = False
    choices_seen: bool = False
    _holding: bool = False
    _last_index: int | None = None

    def __post_init__(self) -> None:
        if self.read_calls is None:
            self.read_calls = calls_from_text(self.prompted_tools)

    def feed(self, chunk: Any) -> list[StreamDelta]:
        """Take one ``data:`` payload (its text, or the decoded object); return the deltas
        to show. ``[DONE]`` sets ``done``; an error event raises ModelError."""
        name = self.model_name
        if isinstance(chunk, str):
            if chunk == "[DONE]":
                self.done = True
                return []
            chunk = _decoded(chunk, name)
        if not isinstance(chunk, dict):
            raise malformed(name, "stream chunk", f"is {_shown(chunk)}, not an object")
        if chunk.get("usage") is not None:
            self.usage = parse_usage(chunk["usage"], name)
        choice = _first_choice(chunk, name)
        if choice is None:
            return []
        self.choices_seen = True
        reason = _finish_reason(choice.get("finish_reason"), "choices[0].finish_reason", name)
        if reason:
            self.finish_reason = reason
        delta = choice.get("delta")
        if delta is None:
            return []
        if not isinstance(delta, dict):
            raise malformed(name, "choices[0].delta", f"is {_shown(delta)}, not an object")
        deltas: list[StreamDelta] = []
        content = _text(delta.get("content"), "choices[0].delta.content", name)
        if content:
            deltas.extend(self._text(content))
        refusal = delta.get("refusal")
        if isinstance(refusal, str) and refusal:
            self.refusal.append(refusal)
        calls = delta.get("tool_calls")
        if calls is not None and not isinstance(calls, list):
            raise malformed(name, "choices[0].delta.tool_calls", f"is {_shown(calls)}")
        for i, call in enumerate(calls or []):
            if not isinstance(call, dict):
                where = f"choices[0].delta.tool_calls[{i}]"
                raise malformed(name, where, f"is {_shown(call)}, not an object")
            deltas.append(self._call_delta(call, i))
        return deltas

    def _text(self, content: str) -> list[StreamDelta]:
        self.text.append(content)
        if self.read_calls is None:
            return [StreamDelta(text=content)]
        # The model may be writing a tool call as text: hold it back for the parser.
        if not self._holding and "".join(self.text).lstrip().startswith(_CALL_OPENERS):
            self._holding = True
        return [] if self._holding else [StreamDelta(text=content)]

    def _call_delta(self, call: dict[str, Any], position: int) -> StreamDelta:
        where = f"choices[0].delta.tool_calls[{position}]"
        call_id = _call_id(call.get("id"), f"{where}.id", self.model_name)
        index = _index(call.get("index"), f"{where}.index", self.model_name)
        if index is None:
            # No index: a new id starts a call, a fragment without one continues the last.
            known = [i for i, p in self.calls.items() if call_id and p.id == call_id]
            if known:
                index = known[0]
            elif call_id or self._last_index is None:
                index = max(self.calls, default=-1) + 1
            else:
                index = self._last_index
        self._last_index = index
        pending = self.calls.setdefault(index, _PendingCall())
        if call_id:
            pending.id = call_id
        function = call.get("function") or {}
        if not isinstance(function, dict):
            raise malformed(self.model_name, f"{where}.function", f"is {_shown(function)}")
        new_name = function.get("name")
        if new_name is not None and not isinstance(new_name, str):
            raise malformed(self.model_name, f"{where}.function.name", f"is {_shown(new_name)}")
        if new_name:
            pending.name += new_name
        arguments = function.get("arguments")
        if isinstance(arguments, dict):
            arguments = dumps(arguments)  # the whole object in one piece
        elif arguments is not None and not isinstance(arguments, str):
            raise malformed(
                self.model_name, f"{where}.function.arguments", f"is {_shown(arguments)}"
            )
        if arguments:
            pending.arguments.append(arguments)
        return StreamDelta(
            tool_call_index=index, tool_name=new_name or None, arguments_delta=arguments or ""
        )

    def finish(self) -> Completion:
        """The complete turn (call only after ``[DONE]``)."""
        text = "".join(self.text)
        parts: Parts
        finish = self.finish_reason
        if self.read_calls is not None:
            parts, finish = _read(text, self.read_calls, finish)
        else:
            parts = [TextPart(text=text)] if text else []
        for index in sorted(self.calls):
            pending = self.calls[index]
            if not pending.name:
                where = f"streamed tool call {index}"
                raise malformed(self.model_name, where, "has no function name")
            parts.append(parse_arguments(pending.name, "".join(pending.arguments), pending.id))
        return Completion(
            parts,
            self.usage or Usage(requests=1),
            finish,
            "".join(self.refusal) or None,
            has_choice=self.choices_seen,
        )


# Finish reasons other servers use for the four OpenAI ones; unknown values pass through.
FINISH_REASONS = {
    "stop": "stop",
    "eos": "stop",
    "eos_token": "stop",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "length": "length",
    "max_tokens": "length",
    "model_length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "tool_use": "tool_calls",
    "content_filter": "content_filter",
    "refusal": "content_filter",
}


def _quoted(text: str, limit: int = 200) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def checked_response(
    completion: Completion, *, model_name: str, settings: ModelSettings
) -> ModelResponse:
    """The turn as a ``ModelResponse`` if it is usable, else the documented error.

    Usable means text or a tool call. A refusal or a content filter raises
    ``ContentFilteredError``; a cut at the token limit ``ResponseTruncatedError`` (unless
    ``settings.allow_truncated`` and something usable came first); nothing at all
    ``EmptyResponseError``. The finish reason is always set: the server's, in OpenAI's
    words, or ``tool_calls`` / ``stop`` when it sent none.
    """
    parts = completion.parts
    has_calls = any(isinstance(p, ToolCallPart) for p in parts)
    text = "".join(p.text for p in parts if isinstance(p, TextPart))
    reported = completion.finish_reason
    reason = FINISH_REASONS.get(reported, reported) if reported else None
    if reason is None or (reason == "stop" and has_calls):
        reason = "tool_calls" if has_calls else "stop"  # some servers say "stop" after a call
    response = ModelResponse(
        parts=parts, usage=completion.usage, model_name=model_name, finish_reason=reason
    )
    said = f"finish_reason {reported!r}" if reported else "no finish_reason"
    if completion.refusal is not None or reason == "content_filter":
        refusal = completion.refusal or text or None
        why = (
            f"the model refused: {_quoted(completion.refusal)}"
            if completion.refusal
            else f"the server's content filter stopped the answer ({said}"
            + (f", after {_quoted(text)})" if text else ", nothing before it)")
        )
        raise ContentFilteredError(f"{model_name}: {why}", refusal=refusal, model_name=model_name)
    usable = has_calls or bool(text.strip())
    if reason == "length" and not (settings.allow_truncated and usable):
        limit = f"max_tokens={settings.max_tokens}" if settings.max_tokens else "the server's limit"
        got = (
            f"{completion.usage.output_tokens} output tokens"
            if completion.usage.output_tokens
            else "the answer"
        )
        hint = (
            "nothing usable came before the cut"
            if not usable
            else "raise max_tokens, or set ModelSettings(allow_truncated=True) to accept it"
        )
        raise ResponseTruncatedError(
            f"{model_name}: the answer was cut off at the output-token limit "
            f"({said}, {got}, {limit}); {hint}",
            response=response,
            model_name=model_name,
        )
    if not usable:
        if not completion.has_choice:
            what = "no choices"
        elif text:
            what = f"only whitespace ({said})"
        else:
            what = f"no text and no tool calls ({said})"
        raise EmptyResponseError(
            f"{model_name}: the server answered with {what}",
            model_name=model_name,
            finish_reason=reason,
        )
    return response
