"""The prefix cache: the engine's KV state for the fixed start of a prompt, kept on disk.

Every run of an agent starts with the same system turn (instructions and tool schemas),
often a thousand tokens that take 10-20 s to read on two cores. The first time a prefix
is seen, the engine evaluates it alone and saves its slot (llama.cpp's
``POST /slots/{id}?action=save``) as ``<key>.bin`` in the engine's KV folder; a later
process restores that file (``action=restore``) before its first request, and llama.cpp's
own prompt reuse then skips every token the slot already holds.

The key is a hash of what the state depends on: the model file, the llama.cpp build and
the prefix's token ids. A changed tool schema changes the tokens, hence the key: the old
file is simply not used (and pruned once the folder holds more than ``keep`` files).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel

__all__ = ["PrefixCache", "PrefixCacheEvent", "build_id"]

logger = logging.getLogger("agentsdk_openai.local")

Post = Callable[[str, dict[str, Any]], Awaitable[Any]]
"""POSTs a JSON payload to a path of the engine and returns the decoded JSON answer."""

# Below this many tokens evaluating the prefix costs about as much as restoring it.
MIN_TOKENS = 64


class PrefixCacheEvent(BaseModel):
    """What the prefix cache did for one prefix (``LocalChatModel.prefix_events``)."""

    key: str
    action: str
    """``restored`` (from disk), ``saved`` (evaluated now and written), ``skipped`` (too
    short) or ``failed`` (the engine refused; the run goes on without the cache)."""
    tokens: int
    seconds: float
    file: str | None = None


def build_id() -> str:
    try:
        return importlib.metadata.version("xllamacpp")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


class PrefixCache:
    """Restores or saves the KV state of prompt prefixes for one engine process."""

    def __init__(self, folder: Path, model_path: Path, *, slots: int = 1, keep: int = 32):
        self.folder = folder
        self.slots = slots
        self.keep = keep
        stat = model_path.stat()
        # What the saved state depends on besides the tokens: the exact model file and build.
        self._identity = f"{model_path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}:{build_id()}"
        self._done: dict[str, PrefixCacheEvent] = {}
        self._pending: set[str] = set()
        self._memo: dict[object, PrefixCacheEvent] = {}

    def remembered(self, memo: object) -> PrefixCacheEvent | None:
        """The event stored for a request-level key (system text, tools...), if any."""
        return self._memo.get(memo)

    def remember(self, memo: object, event: PrefixCacheEvent) -> None:
        """Remember ``event`` for a request-level key, so the prefix is not rendered again."""
        if len(self._memo) > 256:
            self._memo.clear()
        self._memo[memo] = event

    def key(self, token_ids: list[int]) -> str:
        """The file stem for a prefix: model, build and tokens hashed together."""
        digest = hashlib.sha256(self._identity.encode())
        digest.update(json.dumps(token_ids, separators=(",", ":")).encode())
        return digest.hexdigest()[:32]

    def seen(self, key: str) -> PrefixCacheEvent | None:
        """What was done for ``key`` in this engine process, if anything."""
        return self._done.get(key)

    async def ensure(self, token_ids: list[int], post: Post) -> PrefixCacheEvent:
        """Put the KV state of ``token_ids`` into every slot: from disk, or evaluate and save it."""
        key = self.key(token_ids)
        # Another request is putting this prefix in place: wait (polling, as the engine's own
        # start does, because an Event would belong to one event loop).
        while key in self._pending:  # noqa: ASYNC110
            await anyio.sleep(0.05)
        done = self._done.get(key)
        if done is not None:
            return done
        self._pending.add(key)
        try:
            event = await self._ensure(key, token_ids, post)
        finally:
            self._pending.discard(key)
        self._done[key] = event
        return event

    async def _ensure(self, key: str, token_ids: list[int], post: Post) -> PrefixCacheEvent:
        started = time.perf_counter()
        file = f"{key}.bin"
        path = self.folder / file
        if len(token_ids) < MIN_TOKENS:
            action = "skipped"
        elif await anyio.Path(path).is_file():
            action = await self._restore(post, file, path)
        else:
            action = await self._save(post, file, token_ids)
            if action == "saved" and self.slots > 1:  # the other slots load what slot 0 read
                await self._restore(post, file, path, first=1)
        event = PrefixCacheEvent(
            key=key,
            action=action,
            tokens=len(token_ids),
            seconds=round(time.perf_counter() - started, 3),
            file=str(path) if action in ("restored", "saved") else None,
        )
        logger.info("prefix cache: %s %d tokens in %.2f s", action, event.tokens, event.seconds)
        return event

    async def _restore(self, post: Post, file: str, path: Path, first: int = 0) -> str:
        try:
            # Every slot: with parallel requests, any of them may serve the next one.
            for slot in range(first, self.slots):
                await post(f"/slots/{slot}?action=restore", {"filename": file})
        except Exception as exc:  # a file from an incompatible build, a truncated write...
            logger.warning("prefix cache: could not restore %s (%s); deleting it", path, exc)
            await anyio.Path(path).unlink(missing_ok=True)
            return "failed"
        await anyio.Path(path).touch()  # pruning keeps the recently used files
        return "restored"

    async def _save(self, post: Post, file: str, token_ids: list[int], slot: int = 0) -> str:
        try:
            # n_predict 0: read the prefix into the slot and stop, nothing is sampled.
            await post(
                "/completion",
                {"prompt": token_ids, "n_predict": 0, "cache_prompt": True, "id_slot": slot},
            )
            await post(f"/slots/{slot}?action=save", {"filename": file})
        except Exception as exc:
            logger.warning("prefix cache: could not save the prefix (%s)", exc)
            return "failed"
        self._prune()
        return "saved"

    def _prune(self) -> None:
        files = sorted(self.folder.glob("*.bin"), key=lambda p: p.stat().st_mtime, reverse=True)
        for stale in files[self.keep :]:
            stale.unlink(missing_ok=True)
