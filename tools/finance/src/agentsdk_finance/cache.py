"""A persistent SQLite cache of price histories and fundamentals.

Keyed by the provider's ``cache_identity`` (the source's identity and content, e.g. a
file's path and content hash, and the provider's settings), the symbol, the interval
and the requested range; entries expire after a TTL.
It lives under the user cache dir and survives restarts. A row that fails to decode
(or whose checksum does not match) is deleted and refetched; a database file that is
not SQLite is moved aside and recreated. The cache never turns a hit into a crash.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

from agentsdk_finance.models import Fundamentals, PriceHistory, Provenance
from agentsdk_finance.providers.base import MarketData
from agentsdk_finance.sampledata import default_cache_dir

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    key TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    created REAL NOT NULL,
    checksum TEXT NOT NULL,
    payload BLOB NOT NULL
)
"""


class PriceCache:
    """SQLite-backed store with a TTL.

    Args:
        path: database file; default ``<user cache>/agentsdk-finance/market-data.sqlite``.
        ttl_seconds: how long an entry is served before it is fetched again.
        clock: time source (seconds), injectable for tests.
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        ttl_seconds: float = 24 * 3600,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = Path(path) if path else default_cache_dir() / "market-data.sqlite"
        self.ttl_seconds = ttl_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.recovered = 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._ensure_schema()

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=10)

    def _ensure_schema(self) -> None:
        try:
            with self._connect() as db:
                db.execute(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            aside = self.path.with_name(self.path.name + f".corrupt-{int(self._clock())}")
            log.warning("cache %s unreadable (%s); moved to %s", self.path, exc, aside)
            self.path.replace(aside)
            self.recovered += 1
            with self._connect() as db:
                db.execute(_SCHEMA)

    @staticmethod
    def key(identity: str, symbol: str, interval: str, start: date | None, end: date | None) -> str:
        """The cache key of one request; ``identity`` is the provider's ``cache_identity``."""
        return f"{identity}|{symbol.upper()}|{interval}|{start or ''}|{end or ''}"

    def get(self, key: str) -> bytes | None:
        """Payload of a fresh entry, or None (missing, expired or corrupt)."""
        with self._lock:
            try:
                with self._connect() as db:
                    row = db.execute(
                        "SELECT created, checksum, payload FROM entries WHERE key = ?", (key,)
                    ).fetchone()
            except sqlite3.DatabaseError:
                self._ensure_schema()
                row = None
        if row is None:
            return None
        created, checksum, payload = row
        if self._clock() - created > self.ttl_seconds:
            return None
        if not isinstance(payload, bytes) or hashlib.sha256(payload).hexdigest() != checksum:
            self.discard(key)
            return None
        return payload

    def put(self, key: str, kind: str, payload: bytes) -> None:
        """Store a payload under ``key`` and delete expired entries (an edited file's old
        entries are never asked for again, so they would otherwise pile up)."""
        now = self._clock()
        with self._lock, self._connect() as db:
            db.execute(
                "INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?, ?)",
                (key, kind, now, hashlib.sha256(payload).hexdigest(), payload),
            )
            db.execute("DELETE FROM entries WHERE created < ?", (now - self.ttl_seconds,))

    def discard(self, key: str) -> None:
        """Delete one entry (used for corrupt rows)."""
        with self._lock, self._connect() as db:
            db.execute("DELETE FROM entries WHERE key = ?", (key,))
        self.recovered += 1

    def clear(self) -> None:
        """Delete every entry."""
        with self._lock, self._connect() as db:
            db.execute("DELETE FROM entries")


def encode_history(history: PriceHistory) -> bytes:
    """Serialise a price history: a JSON header line, then numpy arrays (no pickle)."""
    frame = history.frame
    header = {
        "symbol": history.symbol,
        "interval": history.interval,
        "columns": [str(c) for c in frame.columns],
        "provenance": history.provenance.model_dump(mode="json"),
    }
    buf = io.BytesIO()
    buf.write(json.dumps(header).encode() + b"\n")
    np.save(buf, frame.index.to_numpy(dtype="datetime64[ns]").astype(np.int64), allow_pickle=False)
    np.save(buf, frame.to_numpy(dtype=np.float64), allow_pickle=False)
    return buf.getvalue()


def decode_history(payload: bytes) -> PriceHistory:
    """Inverse of ``encode_history``; raises ValueError on a corrupt payload."""
    head, sep, body = payload.partition(b"\n")
    if not sep:
        raise ValueError("no header line")
    header = json.loads(head)
    buf = io.BytesIO(body)
    index = np.load(buf, allow_pickle=False)
    values = np.load(buf, allow_pickle=False)
    columns = list(header["columns"])
    if values.ndim != 2 or values.shape != (len(index), len(columns)) or not len(index):
        raise ValueError("cached arrays do not match their header")
    if "close" not in columns:
        raise ValueError("cached frame has no close column")
    frame = pd.DataFrame(
        values, index=pd.DatetimeIndex(index.astype("datetime64[ns]"), name="date"), columns=columns
    )
    return PriceHistory(
        symbol=str(header["symbol"]),
        interval=str(header["interval"]),
        frame=frame,
        provenance=Provenance.model_validate(header["provenance"]),
    )


class CachedMarketData:
    """Wraps any ``MarketData`` provider with a ``PriceCache``.

    The wrapper has the provider's name and intervals; failures are never cached.
    Entries are keyed by ``provider.cache_identity(symbol)``, so two providers reading
    different files that hold the same symbol never share an entry, and an edited file
    is read again at once instead of after the TTL.

    Raises:
        TypeError: the provider has no ``cache_identity`` method (without one a cache
            could serve one source's numbers for another's).
    """

    def __init__(self, provider: MarketData, cache: PriceCache | None = None) -> None:
        if not callable(getattr(provider, "cache_identity", None)):
            raise TypeError(
                f"{type(provider).__name__} has no cache_identity(symbol, kind) method; add one "
                "that names its source, the data's content (e.g. a file hash) and its settings, "
                "or use the provider without a cache"
            )
        self.provider = provider
        self.cache = cache or PriceCache()
        self.name: str = provider.name
        self.intervals: tuple[str, ...] = provider.intervals

    def symbols(self) -> list[str]:
        """The wrapped provider's offline symbols."""
        return list(self.provider.symbols())

    def cache_identity(self, symbol: str, kind: str = "history") -> str:
        """The wrapped provider's identity (a cache around a cache keys the same way)."""
        return self.provider.cache_identity(symbol, kind)

    def history(
        self, symbol: str, start: date | None, end: date | None, interval: str = "1d"
    ) -> PriceHistory:
        """Served from the cache when fresh, else fetched and stored."""
        identity = self.provider.cache_identity(symbol, "history")
        key = PriceCache.key(identity, symbol, interval, start, end)
        payload = self.cache.get(key)
        if payload is not None:
            try:
                result = decode_history(payload)
                self.cache.hits += 1
                return result
            except (ValueError, KeyError, TypeError, OSError, UnicodeDecodeError) as exc:
                log.warning("corrupt cache entry %s (%s); refetching", key, exc)
                self.cache.discard(key)
        self.cache.misses += 1
        history = self.provider.history(symbol, start, end, interval)
        # the source changed while we read it: serve what we read, store nothing
        if self.provider.cache_identity(symbol, "history") == identity:
            self.cache.put(key, "history", encode_history(history))
        return history

    def fundamentals(self, symbol: str) -> Fundamentals:
        """Statements, cached like histories."""
        identity = self.provider.cache_identity(symbol, "fundamentals")
        key = PriceCache.key(identity, symbol, "fundamentals", None, None)
        payload = self.cache.get(key)
        if payload is not None:
            try:
                result = Fundamentals.model_validate_json(payload)
                self.cache.hits += 1
                return result
            except ValueError:
                self.cache.discard(key)
        self.cache.misses += 1
        result = self.provider.fundamentals(symbol)
        if self.provider.cache_identity(symbol, "fundamentals") == identity:
            self.cache.put(key, "fundamentals", result.model_dump_json().encode())
        return result
