"""Reading a streamed completion: server-sent events, error events, broken streams."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentsdk.http import Reply, TransportFailure
from agentsdk.retry import RETRYABLE_STATUS

from agentsdk import MalformedResponseError, ModelError, ModelResponse, StreamDelta

from ._wire import dumps

if TYPE_CHECKING:  # the assembler (in _response) reads events with the functions below
    from ._response import StreamAssembler

__all__ = ["OpenStream", "broken_stream", "decode_event", "error_event", "sse_data"]

# Error ``type``s servers give to mid-stream errors that are worth another attempt.
TRANSIENT_ERROR_TYPES = frozenset(
    {
        "server_error",
        "internal_error",
        "internalservererror",
        "serviceunavailableerror",
        "overloaded_error",
        "rate_limit_error",
        "timeout_error",
        "api_error",
    }
)


async def sse_data(lines: AsyncIterator[str]) -> AsyncGenerator[str]:
    """The ``data:`` payloads of a server-sent-events body (multi-line data joined)."""
    pending: list[str] = []
    async for line in lines:
        if not line:
            if pending:
                yield "\n".join(pending)
                pending = []
            continue
        if line.startswith("data: "):  # the usual form, checked first
            pending.append(line[6:])
            continue
        if line.startswith(":"):
            continue  # a comment / keep-alive
        name, _, value = line.partition(":")
        if name == "data":
            pending.append(value[1:] if value.startswith(" ") else value)
    if pending:
        yield "\n".join(pending)


@dataclass
class OpenStream:
    """A streamed reply being read: its events, what was assembled so far, the first deltas."""

    reply: Reply
    assembler: StreamAssembler
    held: list[StreamDelta] = field(default_factory=list)
    """Deltas read before any text: given out once the attempt can no longer be retried."""
    shown: bool = False
    """True once text arrived (the stream is then handed to the caller): from then on a
    failure is raised, never retried."""
    response: ModelResponse | None = None
    """Set when the whole stream was read before any text (nothing to show but the turn)."""
    payloads: AsyncGenerator[str] = field(init=False)

    def __post_init__(self) -> None:
        self.payloads = sse_data(self.reply.lines())

    async def aclose(self) -> None:
        """Stop reading and give the connection back (or drop it, when read half-way)."""
        try:
            await self.payloads.aclose()
        finally:
            await self.reply.aclose()


def decode_event(payload: str, model_name: str) -> Any:
    """One ``data:`` payload as JSON (an ``error`` event is returned like any other)."""
    try:
        return json.loads(payload)
    except ValueError:
        raise MalformedResponseError(
            f"{model_name}: the stream sent an event that is not JSON: {payload[:200]!r}",
            field="stream event",
            model_name=model_name,
        ) from None


def error_event(error: Any, model_name: str) -> ModelError:
    """An ``error`` event: retryable when the server calls it a server-side problem."""
    code: Any = None
    kind: Any = None
    if isinstance(error, dict):
        message = str(error.get("message") or dumps(error))
        code, kind = error.get("code"), error.get("type")
    else:
        message = str(error)
    status = int(code) if isinstance(code, int | str) and str(code).isdigit() else None
    retryable = status in RETRYABLE_STATUS or (
        status is None and str(kind).lower() in TRANSIENT_ERROR_TYPES
    )
    return ModelError(
        f"{model_name}: the server reported an error mid-stream: {message}",
        retryable=retryable,
        status_code=status,
        model_name=model_name,
    )


def broken_stream(model_name: str, reply: Reply, failure: TransportFailure | None) -> ModelError:
    """A stream that ended (or went silent) before ``[DONE]``, in plain words."""
    if failure is not None and failure.timed_out:
        what = f"{failure} after {reply.received} bytes of the stream"
    else:
        what = f"the server closed the stream after {reply.received} bytes before [DONE]"
    return ModelError(
        f"{model_name}: {what}; the partial answer was discarded",
        retryable=True,
        model_name=model_name,
    )
