"""Technical indicators, with their seeding stated so they can be checked.

* **SMA(n)**: mean of the last n prices; none before bar n-1.
* **EMA(n)**: alpha = 2 / (n + 1). Seeded with the simple mean of the first n prices
  (the value at bar n-1), then ``ema = alpha * price + (1 - alpha) * ema``; none before
  bar n-1. This is the textbook (and TA-Lib) seed; pandas' ``ewm(adjust=False)`` seeds
  with the first price instead, which differs for a long time on short series.
* **RSI(n)**, Wilder: changes ``d = p[t] - p[t-1]``; the first average gain and loss
  are the simple means of the first n gains and losses (at bar n), then Wilder's
  smoothing ``avg = (avg * (n - 1) + x) / n``. RSI = 100 - 100 / (1 + gain / loss);
  100 when the average loss is 0, 50 when both averages are 0 (a flat series).
* **MACD(12, 26, 9)**: EMA12 - EMA26 (each seeded as above, so the line starts at bar
  25); the signal is the EMA9 of the MACD line seeded with the mean of its first 9
  values (bar 33); histogram = line - signal.
* **Bollinger(20, 2)**: SMA20 +/- 2 population standard deviations of the same window.
"""

from __future__ import annotations

from datetime import date

import numpy as np
import pandas as pd
from pydantic import BaseModel

from agentsdk_finance.models import PriceHistory, Provenance


def sma(prices: pd.Series, window: int) -> pd.Series:
    """Simple moving average (NaN until ``window`` prices exist)."""
    return prices.rolling(window).mean()


def _seeded_smoothing(values: pd.Series, window: int, alpha: float) -> pd.Series:
    """``y = alpha * x + (1 - alpha) * y_prev``, seeded with the mean of the first
    ``window`` values (at position ``window - 1``); NaN before. ``values`` has no NaN."""
    out = pd.Series(np.nan, index=values.index, dtype=float)
    if len(values) < window:
        return out
    seed = float(values.iloc[:window].mean())
    tail = pd.concat([pd.Series([seed]), pd.Series(values.iloc[window:].to_numpy(float))])
    # pandas' adjust=False recursion starting from the seed is exactly the textbook loop
    smoothed = tail.ewm(alpha=alpha, adjust=False).mean().to_numpy()
    out.iloc[window - 1 :] = smoothed
    return out


def ema(prices: pd.Series, span: int) -> pd.Series:
    """Exponential moving average, alpha = 2 / (span + 1), seeded with the SMA of the
    first ``span`` prices."""
    return _seeded_smoothing(prices.astype(float), span, 2.0 / (span + 1))


def rsi(prices: pd.Series, window: int = 14) -> pd.Series:
    """Wilder's RSI: first averages are simple means of the first ``window`` changes."""
    delta = prices.astype(float).diff().iloc[1:]
    gain = _seeded_smoothing(delta.clip(lower=0), window, 1.0 / window)
    loss = _seeded_smoothing(-delta.clip(upper=0), window, 1.0 / window)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = 100.0 - 100.0 / (1.0 + gain / loss)
    value = value.where(loss != 0, 100.0).where((gain != 0) | (loss != 0), 50.0)
    value = value.where(gain.notna())
    return value.reindex(prices.index)


def macd(
    prices: pd.Series, fast: int = 12, slow: int = 26, signal: int = 9
) -> tuple[pd.Series, pd.Series, pd.Series]:
    """MACD line, signal line and histogram (seeding in the module docstring)."""
    line = ema(prices, fast) - ema(prices, slow)
    valid = line.dropna()
    sig = ema(valid, signal).reindex(line.index)
    return line, sig, line - sig


def bollinger(
    prices: pd.Series, window: int = 20, width: float = 2.0
) -> tuple[pd.Series, pd.Series, pd.Series]:
    """Lower band, middle (SMA) and upper band (population standard deviation)."""
    mid = sma(prices, window)
    sd = prices.rolling(window).std(ddof=0)
    return mid - width * sd, mid, mid + width * sd


MIN_BARS = 30  # below this even RSI 14 and MACD have barely started: refuse, do not guess
# Bars before the asked window that a snapshot loads: SMA 200 needs 199 earlier bars, and
# EMA 26, RSI 14 and MACD's signal are recursive; after 250 bars their seed's weight is
# below 1e-7, so values agree with a computation over all earlier data to 4 decimals.
WARMUP_BARS = 250


class IndicatorSnapshot(BaseModel):
    """Latest indicator values and what they suggest (None: not enough bars)."""

    summary: str = ""
    cite: str = ""  # the provenance as one line, to quote after each figure
    symbol: str
    as_of: date
    bars: int  # bars in the asked window
    warmup_bars: int = 0  # earlier bars loaded so the look-backs are full
    warmup_from: date | None = None  # the first of them
    price: float
    sma: dict[int, float | None]
    ema: dict[int, float | None]
    rsi_14: float | None
    macd: float | None
    macd_signal: float | None
    macd_histogram: float | None
    bollinger_lower: float | None
    bollinger_middle: float | None
    bollinger_upper: float | None
    signals: list[str]
    provenance: Provenance


def _last(series: pd.Series) -> float | None:
    value = series.iloc[-1] if len(series) else float("nan")
    return None if pd.isna(value) else round(float(value), 4)


def indicator_snapshot(
    history: PriceHistory,
    sma_windows: tuple[int, ...] = (50, 200),
    ema_spans: tuple[int, ...] = (12, 26),
    warmup: int = 0,
) -> IndicatorSnapshot:
    """Compute SMA, EMA, RSI, MACD and Bollinger bands and keep the latest values.

    The first ``warmup`` bars of ``history`` come before the asked window: they feed the
    look-backs and are counted apart (``warmup_bars``, said in the summary).
    """
    prices = history.price
    line, sig, hist = macd(prices)
    low, mid, up = bollinger(prices)
    snap = IndicatorSnapshot(
        symbol=history.symbol,
        as_of=prices.index[-1].date(),
        bars=len(prices) - warmup,
        warmup_bars=warmup,
        warmup_from=prices.index[0].date() if warmup else None,
        price=round(float(prices.iloc[-1]), 4),
        sma={w: _last(sma(prices, w)) for w in sma_windows},
        ema={s: _last(ema(prices, s)) for s in ema_spans},
        rsi_14=_last(rsi(prices)),
        macd=_last(line),
        macd_signal=_last(sig),
        macd_histogram=_last(hist),
        bollinger_lower=_last(low),
        bollinger_middle=_last(mid),
        bollinger_upper=_last(up),
        signals=[],
        provenance=history.provenance,
    )
    snap.signals = _signals(snap)
    snap.cite = history.provenance.cite()
    snap.summary = _headline(snap, history, prices.index[0].date())
    return snap


def _headline(snap: IndicatorSnapshot, history: PriceHistory, first: date) -> str:
    """``IBM 2012-12-31..2012-12-31 (source: ...; 250 warm-up bars from 2011-12-30 used),
    last bar 2012-12-31: price .., RSI 14 .., SMA 50 .., SMA 200 ..; signals``."""

    def shown(value: float | None, fmt: str = ".2f") -> str:
        return "n/a" if value is None else format(value, fmt)

    warm = f"; {snap.warmup_bars} warm-up bars from {first} used" if snap.warmup_bars else ""
    values = [f"price {snap.price:.2f}", f"RSI 14 {shown(snap.rsi_14, '.1f')}"]
    values += [f"SMA {w} {shown(v)}" for w, v in snap.sma.items()]
    missing = [f"SMA {w}" for w, v in snap.sma.items() if v is None]
    short = (
        f"; {', '.join(missing)} n/a: only {snap.warmup_bars + snap.bars} bars from {first}"
        if missing
        else ""
    )
    return (
        f"{snap.symbol} {history.provenance.period} (source: {history.provenance.source}{warm}),"
        f" last bar {snap.as_of}: {', '.join(values)}; "
        + ("; ".join(snap.signals) or "no signals")
        + short
    )


def _signals(s: IndicatorSnapshot) -> list[str]:
    out = []
    if s.rsi_14 is not None:
        if s.rsi_14 >= 70:
            out.append("RSI >= 70: overbought")
        elif s.rsi_14 <= 30:
            out.append("RSI <= 30: oversold")
    if s.macd_histogram is not None:
        out.append(
            "MACD above signal (bullish)" if s.macd_histogram > 0 else "MACD below signal (bearish)"
        )
    sma_values = [v for v in s.sma.values() if v is not None]
    if len(sma_values) >= 2:
        fast, slow = sma_values[0], sma_values[-1]
        out.append(
            "short SMA above long SMA (uptrend)"
            if fast > slow
            else "short SMA below long SMA (downtrend)"
        )
    if s.bollinger_upper is not None and s.price > s.bollinger_upper:
        out.append("price above upper Bollinger band")
    if s.bollinger_lower is not None and s.price < s.bollinger_lower:
        out.append("price below lower Bollinger band")
    return out
