"""Server-sent events: line framing and assembly of Messages API stream events."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from agentsdk import ModelError, ModelResponse, StreamDelta, TextPart, ToolCallPart

from ._convert import finish_reason_for, tool_call_from_input, tool_call_from_json, usage_from_wire
from ._faults import from_validation, malformed
from ._wire import WireStreamEvent, WireUsage

# Error types the API documents as transient; a stream that dies with one may be retried.
TRANSIENT_ERROR_TYPES = frozenset(
    {"overloaded_error", "api_error", "rate_limit_error", "timeout_error"}
)


class SseEvent(BaseModel):
    """One server-sent event: its ``event:`` name and joined ``data:`` lines."""

    event: str | None = None
    data: str = ""


async def iter_sse(lines: AsyncIterator[str]) -> AsyncGenerator[SseEvent]:
    """Frame text lines into events (blank line ends an event; ``:`` lines are comments)."""
    name: str | None = None
    data: list[str] = []
    async for raw in lines:
        line = raw.rstrip("\r")
        if not line:
            if data or name:
                yield SseEvent(event=name, data="\n".join(data))
            name, data = None, []
        elif line.startswith(":"):
            continue
        else:
            key, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if key == "event":
                name = value
            elif key == "data":
                data.append(value)
    if data or name:
        yield SseEvent(event=name, data="\n".join(data))


@dataclass
class _Block:
    """A content block being streamed."""

    kind: str
    text: list[str] = field(default_factory=list)
    call_id: str | None = None
    name: str = ""
    tool_call_index: int | None = None
    closed: bool = False
    start_input: Any = None


class StreamAssembler:
    """Folds stream events into deltas for the caller and, at ``message_stop``, a ModelResponse.

    Nothing is returned until the stream completes cleanly: an ``error`` event, a break-off
    before ``message_stop`` or malformed JSON raise ModelError and no partial response exists.
    """

    def __init__(self, *, model_name: str, output_tool: str | None) -> None:
        self._model_name = model_name
        self._output_tool = output_tool
        self._blocks: dict[int, _Block] = {}
        self._usage = WireUsage()
        self.stop_reason: str | None = None
        self._tool_calls = 0
        self.finished = False

    def _error(self, message: str, *, retryable: bool = False) -> ModelError:
        return ModelError(
            f"{self._model_name}: {message}", retryable=retryable, model_name=self._model_name
        )

    def parse(self, sse: SseEvent) -> WireStreamEvent:
        """Decode one SSE payload; JSON we cannot read is a MalformedResponseError."""
        try:
            return WireStreamEvent.model_validate_json(sse.data)
        except ValidationError as exc:  # also raised for text that is not JSON
            error = from_validation(self._model_name, exc, prefix=f"{sse.event or 'stream'} event")
            error.args = (f"{error}: {sse.data[:200]!r}",)
            raise error from None

    def _merge_usage(self, usage: WireUsage | None) -> None:
        if usage is None:
            return
        updates = usage.model_dump(exclude_none=True)
        self._usage = self._usage.model_copy(update=updates)

    def feed(self, event: WireStreamEvent) -> list[StreamDelta]:
        """Apply one event; returns the deltas it produced for the caller."""
        kind = event.type
        if kind == "error":
            detail = event.error
            err_type = detail.type if detail else "api_error"
            message = detail.message if detail else "unknown error"
            raise self._error(
                f"the server reported an error mid-stream: {err_type}: {message}",
                retryable=err_type in TRANSIENT_ERROR_TYPES,
            )
        if kind == "message_start":
            if event.message is not None:
                self._merge_usage(event.message.usage)
            return []
        if kind == "content_block_start":
            return self._start_block(event)
        if kind == "content_block_delta":
            return self._delta(event)
        if kind == "content_block_stop":
            self._block(event).closed = True
            return []
        if kind == "message_delta":
            if event.delta is not None and event.delta.stop_reason is not None:
                self.stop_reason = event.delta.stop_reason
            self._merge_usage(event.usage)
            return []
        if kind == "message_stop":
            self.finished = True
        # ping and event kinds added later carry nothing we assemble
        return []

    def _block(self, event: WireStreamEvent) -> _Block:
        if event.index is None or event.index not in self._blocks:
            problem = f"is {event.index!r}, not a content block that was started"
            raise malformed(self._model_name, f"{event.type} event.index", problem)
        return self._blocks[event.index]

    def _start_block(self, event: WireStreamEvent) -> list[StreamDelta]:
        if event.index is None or event.content_block is None:
            field = "index" if event.index is None else "content_block"
            raise malformed(self._model_name, f"content_block_start event.{field}", "is missing")
        start = event.content_block
        block = _Block(kind=start.type)
        self._blocks[event.index] = block
        if start.type == "text" and start.text:
            block.text.append(start.text)
            return [StreamDelta(text=start.text)]
        if start.type == "tool_use":
            if not start.name:
                raise malformed(self._model_name, "content_block_start event.name", "is missing")
            block.call_id, block.name = start.id, start.name
            # Anthropic starts with an empty input and streams it; a gateway may send it whole.
            block.start_input = start.input if start.input not in (None, {}, "") else None
            if block.name == self._output_tool:
                return []
            block.tool_call_index = self._tool_calls
            self._tool_calls += 1
            return [StreamDelta(tool_call_index=block.tool_call_index, tool_name=block.name)]
        return []

    def _delta(self, event: WireStreamEvent) -> list[StreamDelta]:
        block = self._block(event)
        delta = event.delta
        if delta is None:
            return []
        if delta.type == "text_delta" and block.kind == "text":
            chunk = delta.text or ""
            block.text.append(chunk)
            return [StreamDelta(text=chunk)] if chunk else []
        if delta.type == "input_json_delta" and block.kind == "tool_use":
            chunk = delta.partial_json or ""
            block.text.append(chunk)
            if not chunk:
                return []
            if block.tool_call_index is None:  # the output tool: its JSON is the answer text
                return [StreamDelta(text=chunk)]
            return [StreamDelta(tool_call_index=block.tool_call_index, arguments_delta=chunk)]
        return []  # thinking / signature / citation deltas are not surfaced

    def response(self) -> ModelResponse:
        """The assembled response; only valid once ``message_stop`` arrived."""
        if not self.finished:
            raise self._error("stream ended before message_stop", retryable=True)
        parts: list[TextPart | ToolCallPart] = []
        for index in sorted(self._blocks):
            block = self._blocks[index]
            raw = "".join(block.text)
            if block.kind == "text" and raw:
                parts.append(TextPart(text=raw))
            elif block.kind == "tool_use" and not raw and block.start_input is not None:
                parts.append(
                    tool_call_from_input(
                        block.call_id, block.name, block.start_input, self._output_tool
                    )
                )
            elif block.kind == "tool_use":
                parts.append(tool_call_from_json(block.call_id, block.name, raw, self._output_tool))
        return ModelResponse(
            parts=parts,
            usage=usage_from_wire(self._usage),
            model_name=self._model_name,
            finish_reason=finish_reason_for(self.stop_reason, parts),
        )
