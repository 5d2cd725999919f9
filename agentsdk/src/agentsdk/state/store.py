"""The store protocol: where run states and sessions are kept.

A store keeps *checkpoints* under a key (a run id, or ``session:<id>``), each with
a revision that grows by one per save. Saving states the revision it expects to
create; when the store already has it (another process saved first) the save
fails with ``StateConflict``. A checkpoint's messages live in a *thread* (the
run's own, or its session's) as one row per message index, so a save writes only
the messages that changed: a step costs the same at turn 40 as at turn 2.

``SQLiteStore`` is the default. Others (Postgres, Redis, ...) are plugins: a
package registers a factory under the entry-point group ``agentsdk.stores``,
``redis = "my_pkg:open_store"``, and ``Agent(store="redis://host/0")`` calls
``open_store("redis://host/0")``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

__all__ = [
    "STORES_GROUP",
    "Checkpoint",
    "RunInfo",
    "RunStore",
    "StoredCheckpoint",
    "open_store",
]

STORES_GROUP = "agentsdk.stores"


@dataclass(slots=True)
class Checkpoint:
    """One save: a new revision of ``key``'s head and the messages that changed."""

    key: str
    revision: int
    """The revision this save creates; the store must hold ``revision - 1`` (none for 1)."""
    status: str
    head: str
    """The state without its messages, as JSON."""
    thread: str
    length: int
    """How many of the thread's messages (from index 0) belong to this revision."""
    messages: Mapping[int, str] = field(default_factory=dict)
    """Changed messages by index, as JSON."""
    session: str | None = None


@dataclass(slots=True)
class StoredCheckpoint:
    """A checkpoint as read back: its head and all its messages, in order."""

    key: str
    revision: int
    latest: int
    """The newest revision the store has for the key (saving next creates ``latest + 1``)."""
    status: str
    head: str
    thread: str
    messages: list[str]
    updated: float


@dataclass(slots=True)
class RunInfo:
    """A line of a listing: one key's newest revision."""

    key: str
    revision: int
    status: str
    session: str | None
    messages: int
    created: float
    updated: float


@runtime_checkable
class RunStore(Protocol):
    """Where checkpoints live. Every method may be called from any task; a store
    serialises its own writes."""

    async def save(self, checkpoint: Checkpoint) -> None:
        """Write atomically, or raise ``StateConflict`` when the store's newest revision
        of the key is not ``checkpoint.revision - 1``."""
        ...

    async def load(self, key: str, revision: int | None = None) -> StoredCheckpoint | None:
        """The newest (or the given) revision, ``None`` if the key is unknown; raises
        ``CorruptState`` for a row that fails its checksum."""
        ...

    async def scan(self, *, prefix: str = "", session: str | None = None) -> list[RunInfo]:
        """Keys starting with ``prefix`` (of one session, if given), newest first."""
        ...

    async def delete(self, key: str) -> None:
        """Forget a key, its checkpoints, and its thread's messages if the thread is
        named after it."""
        ...

    async def put_file(self, data: bytes, suffix: str) -> str:
        """Keep bytes (an image) outside the checkpoints; the name to get them back by."""
        ...

    async def get_file(self, name: str) -> bytes:
        """Bytes kept by ``put_file``; ``CorruptState`` when they are gone."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


def open_store(spec: RunStore | str | Path) -> RunStore:
    """A store from an instance, a plugin URL (``scheme://...``, looked up in the
    ``agentsdk.stores`` entry points) or a SQLite file path."""
    if not isinstance(spec, str | Path):
        if not isinstance(spec, RunStore):
            raise TypeError(f"not a run store: {spec!r} (it needs the RunStore methods)")
        return spec
    text = str(spec)
    scheme = text.split("://", 1)[0] if "://" in text else None
    if scheme is not None and scheme != "sqlite":
        from importlib.metadata import entry_points

        found = {ep.name: ep for ep in entry_points(group=STORES_GROUP)}
        if scheme not in found:
            names = ", ".join(sorted(found)) or "none"
            raise ValueError(
                f"no run store plugin handles {scheme!r} (installed: {names}); give a "
                "SQLite file path, or install the package that provides it"
            )
        made = found[scheme].load()(text)
        if not isinstance(made, RunStore):
            raise TypeError(f"the {scheme!r} store plugin gave {type(made).__name__}")
        return made
    from .sqlite import SQLiteStore

    return SQLiteStore(text.removeprefix("sqlite://"))
