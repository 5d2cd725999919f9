"""The ``MarketData`` protocol and helpers shared by the file-based providers."""

from __future__ import annotations

from datetime import date
from typing import Protocol, runtime_checkable

import pandas as pd

from agentsdk_finance.errors import MarketDataError
from agentsdk_finance.models import PRICE_COLUMNS, Fundamentals, PriceHistory, Provenance

# Intervals a daily source can serve by resampling: pandas rule for each.
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


def parse_day(value: str | date | None, what: str) -> date | None:
    """Parse 'YYYY-MM-DD' (or a date) into a date; bad text is an invalid_params error."""
    if value is None or value == "":
        return None
    if isinstance(value, date):
        return value
    try:
        parsed: date = pd.Timestamp(value).date()
        return parsed
    except (ValueError, TypeError):
        raise MarketDataError(
            "invalid_params", f"{what} {value!r} is not a date; use YYYY-MM-DD"
        ) from None


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
    frame: pd.DataFrame,
    *,
    provider: str,
    symbol: str,
    start: date | None,
    end: date | None,
    interval: str,
    provenance: Provenance,
) -> PriceHistory:
    """Cut a daily frame to [start, end], resample to ``interval``; empty is a no_data error."""
    check_request(provider, symbol, start, end, interval, tuple(DAILY_RESAMPLE_RULES))
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
        agg = {"open": "first", "high": "max", "low": "min", "close": "last", "volume": "sum"}
        if "adj_close" in part.columns:
            agg["adj_close"] = "last"
        part = part.resample(rule).agg(agg).dropna(subset=["close"])
    first_day, last_day = part.index[0].date(), part.index[-1].date()
    prov = provenance.model_copy(update={"period": f"{first_day}..{last_day}", "as_of": last_day})
    return PriceHistory(symbol=symbol, interval=interval, frame=part, provenance=prov)


def normalise_ohlcv(raw: pd.DataFrame) -> pd.DataFrame:
    """Lower-case/rename common OHLCV headers, index by date, sort, drop bad rows."""
    renames = {
        "adj close": "adj_close",
        "adjclose": "adj_close",
        "adj_close": "adj_close",
        "adjusted_close": "adj_close",
        "timestamp": "date",
        "datetime": "date",
    }
    frame = raw.rename(
        columns=lambda c: renames.get(str(c).strip().lower(), str(c).strip().lower())
    )
    if "date" not in frame.columns:
        raise ValueError("no 'date' column")
    missing = [c for c in ("close",) if c not in frame.columns]
    if missing:
        raise ValueError(f"missing column(s): {', '.join(missing)}")
    frame["date"] = pd.to_datetime(frame["date"], utc=False).dt.tz_localize(None).dt.normalize()
    frame = frame.set_index("date").sort_index()
    frame = frame[~frame.index.duplicated(keep="last")]
    for col in ("open", "high", "low"):
        if col not in frame.columns:
            frame[col] = frame["close"]
    if "volume" not in frame.columns:
        frame["volume"] = 0
    keep = [*PRICE_COLUMNS, *(["adj_close"] if "adj_close" in frame.columns else [])]
    frame = frame[keep].apply(pd.to_numeric, errors="coerce").dropna(subset=["close"])
    return frame
