"""Indicators as of a date: the asked window plus the earlier bars its look-backs need.

``indicators(start=end=2012-12-31)`` means "the indicators as of 2012-12-31". One bar
cannot give an SMA 200, so ``with_warmup`` loads up to ``WARMUP_BARS`` daily bars before
the window from the same provider and puts them in front; the snapshot then reports the
window's last values and says which warm-up bars were used.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

import pandas as pd

from agentsdk_finance.errors import MarketDataError
from agentsdk_finance.indicators import MIN_BARS, WARMUP_BARS
from agentsdk_finance.models import PriceHistory, Provenance
from agentsdk_finance.providers.base import MarketData

# an empty window this close after a bar (a weekend, a holiday, a market closure) is
# read as "as of that bar"; further away it stays an error, not a stale value
_AS_OF_GAP = timedelta(days=7)


@dataclass
class WarmHistory:
    """Warm-up bars followed by the asked window, and how many came before it."""

    history: PriceHistory
    warmup: int


def _join_notes(*notes: str) -> str:
    parts: list[str] = []
    for note in notes:
        parts += [p for p in note.split("; ") if p and p not in parts]
    return "; ".join(parts)


def _window(provider: MarketData, symbol: str, start: date, end: date | None) -> PriceHistory:
    """The bars in [start, end]; an empty window right after a bar is that bar."""
    history = provider.history
    try:
        window: PriceHistory = history(symbol, start, end, "1d")
        return window
    except MarketDataError as err:
        if err.kind != "no_data":
            raise
        try:
            before: PriceHistory = history(symbol, start - _AS_OF_GAP, end, "1d")
        except MarketDataError:
            raise err from None
    frame = before.frame.iloc[-1:]
    day = pd.Timestamp(frame.index[0]).date()
    asked = f"{start}..{end}" if end else f"from {start}"
    prov = before.provenance.model_copy(
        update={
            "period": f"{day}..{day}",
            "as_of": day,
            "note": _join_notes(
                before.provenance.note, f"no bars in {asked}: as of the last bar before, {day}"
            ),
        }
    )
    return PriceHistory(before.symbol, "1d", frame, prov)


def _earlier(provider: MarketData, symbol: str, before: date, bars: int) -> PriceHistory | None:
    """The last ``bars`` daily bars before ``before`` (fewer when the source begins
    later), or None when it has none."""
    span = timedelta(days=bars * 3 // 2 + 14)  # calendar days holding that many trading days
    hi = before - timedelta(days=1)
    warm: PriceHistory | None = None
    try:
        try:
            warm = provider.history(symbol, before - span, hi, "1d")
        except MarketDataError as err:
            if err.kind != "no_data":
                raise
        if warm is None or len(warm.frame) < bars:  # a gap, or the listing's start
            warm = provider.history(symbol, None, hi, "1d")
    except MarketDataError as err:
        if err.kind == "no_data":
            return None  # the window starts where the data does
        err.reason += f" (in the warm-up bars before {before} that the indicators need)"
        raise
    frame = warm.frame.loc[warm.frame.index < pd.Timestamp(before)]  # a lax source's extras
    if frame.empty:
        return None
    frame = frame.iloc[-bars:]
    first = pd.Timestamp(frame.index[0]).date()
    last = pd.Timestamp(frame.index[-1]).date()
    prov = warm.provenance.model_copy(update={"period": f"{first}..{last}"})
    return PriceHistory(warm.symbol, warm.interval, frame, prov)


def with_warmup(
    provider: MarketData,
    symbol: str,
    start: date | None,
    end: date | None,
    bars: int = WARMUP_BARS,
) -> WarmHistory:
    """Daily bars of ``symbol`` in [start, end] with up to ``bars`` earlier ones in
    front. ``start=None`` is all the data up to ``end`` (nothing comes before it).

    Raises:
        MarketDataError: the provider's own errors; ``no_data`` when fewer than
            ``MIN_BARS`` bars exist up to ``end`` (saying how many, and from when).
    """
    if start is None:
        window = provider.history(symbol, None, end, "1d")
        warm = None
    else:
        window = _window(provider, symbol, start, end)
        warm = _earlier(provider, symbol, window.start, bars)
    if warm is None:
        history, count = window, 0
    else:
        columns = [c for c in window.frame.columns if c in warm.frame.columns]
        frame = pd.concat([warm.frame[columns], window.frame[columns]])
        count = len(warm.frame)
        used = f"indicators use {count} warm-up bars from {warm.start}"
        prov: Provenance = window.provenance.model_copy(
            update={"note": _join_notes(window.provenance.note, used, warm.provenance.note)}
        )
        history = PriceHistory(window.symbol, window.interval, frame, prov)
    if len(history.frame) < MIN_BARS:
        raise MarketDataError(
            "no_data",
            f"indicators need at least {MIN_BARS} daily bars up to {history.end}; the source "
            f"has {len(history.frame)}, from {history.start}: use a later end",
            symbol=symbol,
        )
    return WarmHistory(history, count)
