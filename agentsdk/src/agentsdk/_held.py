"""Keeping an agent's toolkits open across runs: ``async with agent:`` holds them on
the running loop; ``with agent:`` gives ``run_sync`` callers a helper thread whose
loop holds them (an anyio blocking portal). ``_sync`` is how every ``*_sync``
method gets a loop: the portal's, a fresh one, or a helper thread's when this thread
already runs one (a notebook)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, AsyncExitStack
from typing import Any, Self, TypeVar

import anyio
import anyio.from_thread

from .tools import Toolkit

__all__ = ["HeldOpen"]

_T = TypeVar("_T")


class HeldOpen:
    """The holding part of ``Agent``."""

    toolkits: list[Toolkit]

    def __init__(self) -> None:
        self._held: AsyncExitStack | None = None
        self._portal: anyio.from_thread.BlockingPortal | None = None
        self._portal_cm: AbstractContextManager[anyio.from_thread.BlockingPortal] | None = None

    async def aclose(self) -> None:
        """Release what the agent opened for runs (overridden by ``Agent``)."""

    def _sync(self, fn: Callable[[], Awaitable[_T]]) -> _T:
        if self._portal is not None:  # `with agent:`: its loop owns the toolkits
            return self._portal.call(fn)
        if self._held is not None:
            raise RuntimeError(
                "this agent's toolkits are held open by `async with agent:` on an event loop: "
                "use `await agent.run(...)` there"
            )

        async def main() -> _T:
            try:
                return await fn()
            finally:
                await self.aclose()

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return anyio.run(main)
        # a loop runs in this thread (a notebook): anyio.run cannot nest, a thread can
        with ThreadPoolExecutor(1, thread_name_prefix="agentsdk-run-sync") as pool:
            return pool.submit(anyio.run, main).result()

    async def __aenter__(self) -> Self:
        """Start the toolkits and keep them open across runs until the block ends."""
        if self._held is not None:
            raise RuntimeError("this agent is already held open (`async with agent:`)")
        stack = AsyncExitStack()
        try:
            for toolkit in self.toolkits:
                await stack.enter_async_context(toolkit)
        except BaseException:
            await stack.aclose()
            raise
        self._held = stack
        return self

    async def __aexit__(self, *exc: object) -> None:
        stack, self._held = self._held, None
        try:
            if stack is not None:
                await stack.aclose()
        finally:
            await self.aclose()

    def __enter__(self) -> Self:
        """For ``run_sync`` users: a helper thread's event loop holds the toolkits open
        across ``run_sync`` calls until the block ends."""
        if self._portal is not None or self._held is not None:
            raise RuntimeError("this agent is already held open")
        cm = anyio.from_thread.start_blocking_portal()
        portal = cm.__enter__()
        try:
            portal.call(self.__aenter__)
        except BaseException as exc:
            cm.__exit__(type(exc), exc, exc.__traceback__)
            raise
        self._portal, self._portal_cm = portal, cm
        return self

    def __exit__(self, *exc: Any) -> None:
        portal, cm = self._portal, self._portal_cm
        self._portal = self._portal_cm = None
        if portal is None or cm is None:
            return
        try:
            portal.call(self.__aexit__, None, None, None)
        finally:
            cm.__exit__(None, None, None)
