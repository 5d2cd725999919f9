"""``SQLiteStore``: run states in one SQLite file, safe for several processes.

The file is in WAL mode (readers never wait for the writer; a writer waits up to
``timeout`` seconds for another), each save is one ``BEGIN IMMEDIATE``
transaction, and every row carries a CRC-32 of its JSON, so a truncated or altered
row is reported instead of being half-read. Images are files beside the database
(``<file>-files/ab/abcdef….png``, named by their SHA-256), never inlined.

Schema (``meta.schema`` = 1)::

    runs(key PRIMARY KEY, revision, status, session, thread, length, created, updated)
        one row per run or session key: its newest revision (for listing and for
        the optimistic-concurrency check)
    checkpoints(key, revision, status, head, crc, thread, length, high, created)
        PRIMARY KEY (key, revision): the state without messages (``head``, JSON) of
        each save; the newest ``keep`` per key are kept
    messages(id INTEGER PRIMARY KEY AUTOINCREMENT, thread, idx, body, crc)
        one row per message written: a revision's messages are, for each
        idx < length, the newest row with id <= that checkpoint's ``high``
    meta(key PRIMARY KEY, value)
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import threading
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, TypeVar

import anyio.to_thread

from .errors import CorruptState, StateConflict, StateError
from .store import Checkpoint, RunInfo, StoredCheckpoint

__all__ = ["SQLiteStore"]

SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    key TEXT PRIMARY KEY, revision INTEGER NOT NULL, status TEXT NOT NULL,
    session TEXT, thread TEXT NOT NULL, length INTEGER NOT NULL,
    created REAL NOT NULL, updated REAL NOT NULL);
CREATE TABLE IF NOT EXISTS checkpoints (
    key TEXT NOT NULL, revision INTEGER NOT NULL, status TEXT NOT NULL,
    head TEXT NOT NULL, crc INTEGER NOT NULL, thread TEXT NOT NULL,
    length INTEGER NOT NULL, high INTEGER NOT NULL, created REAL NOT NULL,
    PRIMARY KEY (key, revision)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, thread TEXT NOT NULL, idx INTEGER NOT NULL,
    body TEXT NOT NULL, crc INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS messages_by_thread ON messages (thread, idx, id);
CREATE INDEX IF NOT EXISTS runs_by_session ON runs (session);
"""
_FILE_NAME = re.compile(r"^[0-9a-f]{64}\.[a-z0-9]{1,8}$")
_T = TypeVar("_T")


def _crc(text: str) -> int:
    return zlib.crc32(text.encode("utf-8", "surrogatepass"))


class SQLiteStore:
    """Run states and sessions in the SQLite file ``path`` (created on first use).

    Args:
        path: The database file; images go in the folder ``<path>-files``.
        timeout: Seconds a save waits for another process's write to finish.
        synchronous: ``"NORMAL"`` (the default) survives any crash of the process
            (SIGKILL included); a power cut may lose the last saves. ``"FULL"``
            syncs to disk at every save (slower).
        keep: Checkpoints kept per run (older ones are pruned at each save).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        timeout: float = 10.0,
        synchronous: Literal["NORMAL", "FULL"] = "NORMAL",
        keep: int = 10,
    ):
        if keep < 2:
            raise ValueError("keep must be at least 2 (a corrupted newest checkpoint needs one)")
        self.path = Path(path)
        self.files_dir = self.path.with_name(self.path.name + "-files")
        self.timeout = timeout
        self.synchronous = synchronous
        self.keep = keep
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._waits: float = timeout

    def __repr__(self) -> str:
        return f"SQLiteStore({str(self.path)!r})"

    # -- plumbing -------------------------------------------------------------------
    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False
            )
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute(f"PRAGMA synchronous={self.synchronous}")
                conn.executescript(_SCHEMA)
                conn.execute(
                    "INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),)
                )
                (found,) = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            except sqlite3.DatabaseError as exc:
                conn.close()
                raise StateError(f"{self.path} is not a usable run store: {exc}") from exc
            self._waits = self.timeout
            if int(found) > SCHEMA_VERSION:
                conn.close()
                raise StateError(
                    f"{self.path} has schema {found}, written by a newer agentsdk "
                    f"(this one reads up to {SCHEMA_VERSION}): upgrade agentsdk"
                )
            self._conn = conn
        return self._conn

    def _locked(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        with self._lock:
            db = self._db()
            self._busy_timeout(db, self.timeout)
            return fn(db)

    def _busy_timeout(self, db: sqlite3.Connection, seconds: float) -> None:
        if self._waits != seconds:
            db.execute(f"PRAGMA busy_timeout={int(seconds * 1000)}")
            self._waits = seconds

    async def _run(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        # Inline first, without waiting for a lock another process holds: a WAL commit
        # without fsync takes ~0.1 ms, less than a hop to a worker thread. A busy
        # database, a slow first open or a syncing commit go to a worker thread, so the
        # event loop never waits for another process.
        if self._conn is not None and self.synchronous == "NORMAL":
            if self._lock.acquire(blocking=False):
                try:
                    self._busy_timeout(self._conn, 0)
                    return fn(self._conn)
                except sqlite3.OperationalError as exc:
                    if "locked" not in str(exc) and "busy" not in str(exc):
                        raise
                finally:
                    self._lock.release()
        return await anyio.to_thread.run_sync(self._locked, fn)

    # -- the protocol ---------------------------------------------------------------
    async def save(self, checkpoint: Checkpoint) -> None:
        """Write one checkpoint in one transaction (see ``RunStore.save``)."""
        await self._run(lambda db: self._save(db, checkpoint))

    def _save(self, db: sqlite3.Connection, cp: Checkpoint) -> None:
        now = time.time()
        db.execute("BEGIN IMMEDIATE")
        try:
            row = db.execute("SELECT revision FROM runs WHERE key=?", (cp.key,)).fetchone()
            have = row[0] if row else 0
            if have != cp.revision - 1:
                raise StateConflict(
                    f"{cp.key!r} is at revision {have} in {self.path}, not {cp.revision - 1}: "
                    "another process saved it since this one read it"
                )
            if cp.messages:
                db.executemany(
                    "INSERT INTO messages (thread, idx, body, crc) VALUES (?, ?, ?, ?)",
                    [(cp.thread, i, body, _crc(body)) for i, body in cp.messages.items()],
                )
            seq = db.execute("SELECT seq FROM sqlite_sequence WHERE name='messages'").fetchone()
            db.execute(
                "INSERT INTO checkpoints VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    cp.key,
                    cp.revision,
                    cp.status,
                    cp.head,
                    _crc(cp.head),
                    cp.thread,
                    cp.length,
                    seq[0] if seq else 0,
                    now,
                ),
            )
            db.execute(
                "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET "
                "revision=excluded.revision, status=excluded.status, session=excluded.session, "
                "thread=excluded.thread, length=excluded.length, updated=excluded.updated",
                (cp.key, cp.revision, cp.status, cp.session, cp.thread, cp.length, now, now),
            )
            if cp.revision > self.keep:
                db.execute(
                    "DELETE FROM checkpoints WHERE key=? AND revision<=?",
                    (cp.key, cp.revision - self.keep),
                )
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    async def load(self, key: str, revision: int | None = None) -> StoredCheckpoint | None:
        """The newest (or the given) checkpoint of ``key`` with its messages."""
        return await self._run(lambda db: self._load(db, key, revision))

    def _load(
        self, db: sqlite3.Connection, key: str, revision: int | None
    ) -> StoredCheckpoint | None:
        row = db.execute("SELECT revision FROM runs WHERE key=?", (key,)).fetchone()
        if row is None:
            return None
        latest = int(row[0])
        wanted = latest if revision is None else revision
        try:
            return self._read(db, key, wanted, latest)
        except CorruptState as exc:
            exc.previous = self._good_before(db, key, wanted, latest)
            hint = (
                f"; revision {exc.previous} is readable: resume with revision={exc.previous}"
                if exc.previous is not None
                else "; no earlier revision is readable"
            )
            exc.args = (str(exc) + hint,)
            raise

    def _read(
        self, db: sqlite3.Connection, key: str, revision: int, latest: int
    ) -> StoredCheckpoint:
        row = db.execute(
            "SELECT status, head, crc, thread, length, high, created FROM checkpoints "
            "WHERE key=? AND revision=?",
            (key, revision),
        ).fetchone()
        if row is None:
            kept = [
                r for (r,) in db.execute("SELECT revision FROM checkpoints WHERE key=?", (key,))
            ]
            raise StateError(f"{key!r} has no revision {revision} (kept: {kept})")
        status, head, crc, thread, length, high, created = row
        if not isinstance(head, str) or _crc(head) != crc:
            raise CorruptState(
                f"checkpoint {revision} of {key!r} in {self.path} fails its checksum "
                "(truncated or altered)",
                revision=revision,
            )
        bodies: dict[int, str] = {}
        for idx, body, body_crc in db.execute(
            "SELECT idx, body, crc FROM messages WHERE thread=? AND idx<? AND id<=? "
            "ORDER BY idx, id",
            (thread, length, high),
        ):
            bodies[idx] = body if isinstance(body, str) and _crc(body) == body_crc else ""
        for idx in range(length):
            if not bodies.get(idx):
                what = "is missing" if idx not in bodies else "fails its checksum"
                raise CorruptState(
                    f"message {idx} of checkpoint {revision} of {key!r} in {self.path} {what}",
                    revision=revision,
                )
        return StoredCheckpoint(
            key, revision, latest, status, head, thread, [bodies[i] for i in range(length)], created
        )

    def _good_before(
        self, db: sqlite3.Connection, key: str, revision: int, latest: int
    ) -> int | None:
        earlier = db.execute(
            "SELECT revision FROM checkpoints WHERE key=? AND revision<? ORDER BY revision DESC",
            (key, revision),
        ).fetchall()
        for (older,) in earlier:
            try:
                self._read(db, key, older, latest)
            except StateError:
                continue
            return int(older)
        return None

    async def scan(self, *, prefix: str = "", session: str | None = None) -> list[RunInfo]:
        """Keys starting with ``prefix`` (of one session, if given), newest first."""

        def scan(db: sqlite3.Connection) -> list[RunInfo]:
            sql = (
                "SELECT key, revision, status, session, length, created, updated FROM runs "
                "WHERE substr(key, 1, ?) = ?"
            )
            args: list[Any] = [len(prefix), prefix]
            if session is not None:
                sql += " AND session = ?"
                args.append(session)
            rows = db.execute(sql + " ORDER BY updated DESC", args).fetchall()
            return [RunInfo(*r) for r in rows]

        return await self._run(scan)

    async def delete(self, key: str) -> None:
        """Forget ``key``: its checkpoints, and its thread's messages if named after it."""

        def delete(db: sqlite3.Connection) -> None:
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute("DELETE FROM checkpoints WHERE key=?", (key,))
                db.execute("DELETE FROM messages WHERE thread=?", (key,))
                db.execute("DELETE FROM runs WHERE key=?", (key,))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

        await self._run(delete)

    async def put_file(self, data: bytes, suffix: str) -> str:
        """Keep ``data`` as a file named by its SHA-256 (written once, atomically)."""
        return await anyio.to_thread.run_sync(self._put_file, data, suffix)

    def _put_file(self, data: bytes, suffix: str) -> str:
        clean = re.sub(r"[^a-z0-9]", "", suffix.lower())[:8] or "bin"
        name = f"{hashlib.sha256(data).hexdigest()}.{clean}"
        path = self.files_dir / name[:2] / name
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_name(f".{name}.{os.getpid()}.{threading.get_ident()}")
            partial.write_bytes(data)
            os.replace(partial, path)  # readers never see half a file
        return name

    async def get_file(self, name: str) -> bytes:
        """The bytes ``put_file`` kept under ``name``."""
        if not _FILE_NAME.match(name):
            raise CorruptState(f"{name!r} is not a file name this store made")
        path = self.files_dir / name[:2] / name
        try:
            data = await anyio.Path(path).read_bytes()
        except FileNotFoundError:
            raise CorruptState(f"the image file {path} of a saved run is missing") from None
        if hashlib.sha256(data).hexdigest() != name[:64]:
            raise CorruptState(f"the image file {path} of a saved run was altered")
        return data

    async def aclose(self) -> None:
        """Close the connection (a later call opens it again)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
