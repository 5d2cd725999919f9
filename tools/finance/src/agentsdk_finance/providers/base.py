"""The ``MarketData`` protocol and helpers shared by the file-based providers."""

from __future__ import annotations

import calendar
import hashlib
import os
import re
import threading
from datetime import date, datetime
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np
import pandas as pd

from agentsdk_finance.bars import CleanBars
from agentsdk_finance.errors import MarketDataError
from agentsdk_finance.models import Fundamentals, PriceHistory, Provenance

# Intervals a daily source can serve by resampling: pandas rule for each. Every bar is
# then labelled with the last real trading day inside it, never the rule's bin edge.
DAILY_RESAMPLE_RULES = {"1d": None, "1wk": "W-FRI", "1mo": "ME"}


@runtime_checkable
class MarketData(Protocol):
    """Anything that returns price histories (and optionally fundamentals).

    ``history`` raises ``MarketDataError`` with a ``kind`` on every failure and
    never returns an empty frame.
    """

    name: str
    intervals: tuple[str, ...]

    def history(
        self, symbol: str, start: date | None, end: date | None, interval: str = "1d"
    ) -> PriceHistory:
        """Bars for ``symbol`` between ``start`` and ``end`` (inclusive)."""
        ...

    def fundamentals(self, symbol: str) -> Fundamentals:
        """Normalised statements for ``symbol``."""
        ...

    def symbols(self) -> list[str]:
        """Symbols this provider knows offline (empty when it cannot list them)."""
        ...

    def cache_identity(self, symbol: str, kind: str = "history") -> str:
        """Everything the data for ``symbol`` depends on, as text: the source's identity
        and content (e.g. the file's path and content hash) and the provider's settings.
        ``kind`` is ``"history"`` or ``"fundamentals"``.

        ``CachedMarketData`` keys entries by it, so two sources holding the same symbol
        never share an entry and an edited file is read again.
        """
        ...


_DIGESTS: dict[tuple[str, int, int, int, int], str] = {}
_DIGEST_LOCK = threading.Lock()


def file_identity(path: Path) -> str:
    """``<resolved path>|<size>|sha256:<first 16 hex>`` of a file's current content.

    The hash is recomputed whenever the file's inode, size, mtime or ctime changes (any
    write changes ctime, even one that restores the mtime), so repeated calls cost a stat.
    """
    resolved = path.resolve()
    try:
        st = os.stat(resolved)
    except OSError as exc:
        raise MarketDataError("no_data", f"cannot read {path}: {exc.strerror}") from exc
    stamp = (str(resolved), st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    with _DIGEST_LOCK:
        known = _DIGESTS.get(stamp)
    if known is None:
        digest = hashlib.sha256()
        with resolved.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        known = digest.hexdigest()[:16]
        with _DIGEST_LOCK:
            _DIGESTS[stamp] = known
    return f"{resolved}|{st.st_size}|sha256:{known}"


def listing(names: list[str], limit: int = 20) -> str:
    """Names for a message: at most ``limit``, then how many more (folders can hold 5,000)."""
    shown = ", ".join(names[:limit]) or "none"
    return shown + (f", and {len(names) - limit} more" if len(names) > limit else "")


_ISO_DAY = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ][0-9:.]+)?")
_YEAR_MONTH = re.compile(r"(\d{4})-(\d{1,2})")
_YEAR = re.compile(r"\d{4}")


def parse_day(value: str | date | None, what: str, *, is_end: bool = False) -> date | None:
    """Parse a day: ``YYYY-MM-DD``, ``YYYY-MM`` or ``YYYY`` (a month or year means its
    first day as a start and its last day as an end); empty means None.

    Anything else (``today``, ``3/4/05``, ``2013-13-01``) is an ``invalid_params`` error:
    a guessed date would silently change the numbers.
    """
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    text = str(value).strip()
    if not text:
        return None
    try:
        if m := _ISO_DAY.fullmatch(text):
            return date(int(m[1]), int(m[2]), int(m[3]))
        if m := _YEAR_MONTH.fullmatch(text):
            year, month = int(m[1]), int(m[2])
            if not is_end:
                return date(year, month, 1)
            return date(year, month, calendar.monthrange(year, month)[1])
        if _YEAR.fullmatch(text):
            return date(int(text), 12, 31) if is_end else date(int(text), 1, 1)
    except ValueError:
        pass  # e.g. month 13: same message as any other unreadable date
    raise MarketDataError(
        "invalid_params", f"{what} {text!r} is not a date; use YYYY-MM-DD, YYYY-MM or YYYY"
    )


def check_request(
    provider: str,
    symbol: str,
    start: date | None,
    end: date | None,
    interval: str,
    intervals: tuple[str, ...],
) -> None:
    """Reject an inverted range or an interval the provider lacks, before any I/O."""
    if not symbol or not symbol.strip():
        raise MarketDataError("invalid_symbol", "empty symbol", provider=provider)
    if interval not in intervals:
        raise MarketDataError(
            "invalid_params",
            f"interval {interval!r} is not available; use one of {', '.join(intervals)}",
            symbol=symbol,
            provider=provider,
        )
    if start and end and start > end:
        raise MarketDataError(
            "invalid_params",
            f"start {start} is after end {end}; swap them",
            symbol=symbol,
            provider=provider,
        )


def slice_daily(
    bars: CleanBars,
    *,
    provider: str,
    symbol: str,
    start: date | None,
    end: date | None,
    interval: str,
    provenance: Provenance,
) -> PriceHistory:
    """Cut clean daily bars to [start, end], resample to ``interval``; empty is no_data.

    The provenance gets the period actually served and a note on any rows that were
    dropped or merged inside it.
    """
    check_request(provider, symbol, start, end, interval, tuple(DAILY_RESAMPLE_RULES))
    frame = bars.frame
    lo = pd.Timestamp(start) if start else frame.index.min()
    hi = pd.Timestamp(end) if end else frame.index.max()
    part = frame.loc[(frame.index >= lo) & (frame.index <= hi)]
    if part.empty:
        first, last = frame.index.min().date(), frame.index.max().date()
        raise MarketDataError(
            "no_data",
            f"no bars between {lo.date()} and {hi.date()}; data covers {first}..{last}",
            symbol=symbol,
            provider=provider,
        )
    rule = DAILY_RESAMPLE_RULES[interval]
    if rule:
        part = resample_bars(part, rule)
    first_day, last_day = part.index[0].date(), part.index[-1].date()
    notes = [n for n in (provenance.note, bars.notes_between(first_day, last_day)) if n]
    prov = provenance.model_copy(
        update={"period": f"{first_day}..{last_day}", "as_of": last_day, "note": "; ".join(notes)}
    )
    return PriceHistory(symbol=symbol, interval=interval, frame=part, provenance=prov)


def resample_bars(daily: pd.DataFrame, rule: str) -> pd.DataFrame:
    """Weekly/monthly bars from daily ones, each labelled with its last real day.

    Volume is the sum when every day in the bar has one, else unknown (NaN).
    """
    frame = daily.assign(_day=daily.index, _vol_missing=daily["volume"].isna())
    agg: dict[str, str] = {
        "open": "first",
        "high": "max",
        "low": "min",
        "close": "last",
        "volume": "sum",
        "_day": "last",
        "_vol_missing": "any",
    }
    if "adj_close" in frame.columns:
        agg["adj_close"] = "last"
    out = frame.resample(rule).agg(agg).dropna(subset=["close"])  # empty bins (holidays)
    out.loc[out["_vol_missing"].astype(bool), "volume"] = np.nan
    out.index = pd.DatetimeIndex(out["_day"], name="date")
    return out.drop(columns=["_day", "_vol_missing"])
