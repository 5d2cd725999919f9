"""``RunStream``: the events of a run that lives in a task of its own.

A run streamed from an async generator would keep its deadline (a cancel scope) in
the consumer's frame, across ``yield``s: a consumer that awaits between events, stops
early or is cancelled then trips over a scope it does not own. Here the run is a
separate task that owns its deadline and cancellation, and hands events over through
an unbounded in-memory channel; the consumer only ever waits on that channel.
"""

from __future__ import annotations

import asyncio
import math
import weakref
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from .events import Event

__all__ = ["RunStream"]

Producer = Callable[[Callable[[Event], None]], Awaitable[None]]


class RunStream:
    """Iterate with ``async for``; leave early with ``break`` or use it as an async
    context manager to stop the run at a known point. Dropping the iterator or
    calling :meth:`aclose` cancels the run (its tools and child processes with it)."""

    def __init__(self, produce: Producer):
        self._produce = produce
        self._send: MemoryObjectSendStream[Event] | None = None
        self._receive: MemoryObjectReceiveStream[Event] | None = None
        self._task: asyncio.Task[None] | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._done = False

    def _start(self) -> None:
        send, receive = anyio.create_memory_object_stream[Event](math.inf)
        self._send, self._receive = send, receive

        produce = self._produce  # not self: the task must not keep this stream alive

        async def run() -> None:
            with send:
                await produce(send.send_nowait)

        # asyncio.Task: the run must not live in the consumer's frame (see module doc)
        task = asyncio.get_running_loop().create_task(run(), name="agentsdk run")
        task.add_done_callback(_retrieve)
        self._task = task
        # an abandoned stream (the consumer broke out and dropped it) cancels its run
        self._finalizer = weakref.finalize(self, _cancel, task)

    def __aiter__(self) -> RunStream:
        return self

    async def __anext__(self) -> Event:
        if self._done:
            raise StopAsyncIteration
        if self._task is None:
            self._start()
        assert self._receive is not None and self._task is not None
        try:
            return await self._receive.receive()
        except anyio.EndOfStream:
            self._done = True
            task, self._task = self._task, None
            self._detach()
            await task  # re-raises what ended the run (RunTimeout, ModelError ...)
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        """Stop the run if it is still going and wait until it has cleaned up."""
        self._done = True
        task, self._task = self._task, None
        self._detach()
        if task is None:
            return
        if not task.done():
            task.cancel()
        with anyio.CancelScope(shield=True):
            await asyncio.wait({task})

    def _detach(self) -> None:
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None
        if self._receive is not None:
            self._receive.close()

    async def __aenter__(self) -> RunStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


def _retrieve(task: asyncio.Task[None]) -> None:
    # An abandoned run's error was the consumer's to see; do not log it as "never retrieved".
    if not task.cancelled():
        task.exception()


def _cancel(task: asyncio.Task[None]) -> None:
    if not task.done():
        task.get_loop().call_soon_threadsafe(task.cancel)
