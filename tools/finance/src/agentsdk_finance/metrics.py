"""Performance metrics and technical indicators on a price series.

Conventions (stated so results can be checked): simple daily returns of the adjusted
close; annualisation by periods per year (252 daily, 52 weekly, 12 monthly);
volatility uses the sample standard deviation; the risk-free rate is an annual rate
converted to a per-period geometric rate; RSI uses Wilder smoothing; Bollinger bands
use the population standard deviation.
"""

from __future__ import annotations

import math
from datetime import date

import numpy as np
import pandas as pd
from pydantic import BaseModel

from agentsdk_finance.models import PriceHistory, Provenance

PERIODS_PER_YEAR = {"1d": 252, "5d": 52, "1wk": 52, "1mo": 12, "3mo": 4}


class Drawdown(BaseModel):
    """The deepest peak-to-trough fall."""

    max_drawdown: float  # negative fraction, e.g. -0.65
    peak_date: date
    trough_date: date
    recovery_date: date | None  # first close back at the peak, None if never


class Performance(BaseModel):
    """Return and risk figures of one symbol over its period (fractions: 0.25 = 25%)."""

    summary: str = ""  # the headline in words, for readers (and small models)
    symbol: str
    start: date
    end: date
    start_price: float
    end_price: float
    total_return: float
    annualised_return: float  # arithmetic mean period return x periods per year
    cagr: float
    volatility: float  # annualised
    drawdown: Drawdown
    sharpe: float | None
    sortino: float | None
    risk_free_rate: float
    benchmark: str | None = None
    beta: float | None = None
    correlation: float | None = None
    provenance: Provenance


def returns(prices: pd.Series) -> pd.Series:
    """Simple period returns."""
    return prices.pct_change().dropna()


def max_drawdown(prices: pd.Series) -> Drawdown:
    """Deepest fall from a running peak, with its peak, trough and recovery dates."""
    running_peak = prices.cummax()
    depth = prices / running_peak - 1.0
    trough = depth.idxmin()
    peak = prices.loc[:trough].idxmax()
    after = prices.loc[trough:]
    recovered = after[after >= prices.loc[peak]]
    return Drawdown(
        max_drawdown=float(depth.loc[trough]),
        peak_date=pd.Timestamp(peak).date(),
        trough_date=pd.Timestamp(trough).date(),
        recovery_date=pd.Timestamp(recovered.index[0]).date() if len(recovered) else None,
    )


def _per_period(rate: float, periods: int) -> float:
    return float((1.0 + rate) ** (1.0 / periods) - 1.0)


def sharpe_ratio(rets: pd.Series, risk_free: float, periods: int) -> float | None:
    """Annualised Sharpe ratio of period returns against an annual risk-free rate."""
    excess = rets - _per_period(risk_free, periods)
    sd = excess.std(ddof=1)
    return None if not sd or math.isnan(sd) else float(excess.mean() / sd * math.sqrt(periods))


def sortino_ratio(rets: pd.Series, risk_free: float, periods: int) -> float | None:
    """Annualised Sortino ratio: mean excess return over downside deviation."""
    excess = rets - _per_period(risk_free, periods)
    downside = float(np.sqrt(np.mean(np.minimum(excess.to_numpy(), 0.0) ** 2)))
    return None if downside == 0 else float(excess.mean() / downside * math.sqrt(periods))


def beta_and_correlation(rets: pd.Series, bench: pd.Series) -> tuple[float | None, float | None]:
    """Beta and Pearson correlation of returns against a benchmark's, on common dates."""
    both = pd.concat([rets, bench], axis=1, join="inner").dropna()
    if len(both) < 3:
        return None, None
    a, b = both.iloc[:, 0], both.iloc[:, 1]
    var = b.var(ddof=1)
    beta = float(a.cov(b) / var) if var else None
    return beta, float(a.corr(b))


def performance(
    history: PriceHistory, *, risk_free: float = 0.0, benchmark: PriceHistory | None = None
) -> Performance:
    """Every performance figure of ``history`` (needs at least two bars)."""
    prices = history.price.dropna()
    if len(prices) < 2:
        raise ValueError(f"{history.symbol}: need at least two prices, got {len(prices)}")
    periods = PERIODS_PER_YEAR.get(history.interval, 252)
    rets = returns(prices)
    first, last = prices.index[0], prices.index[-1]
    years = (last - first).days / 365.25
    total = float(prices.iloc[-1] / prices.iloc[0] - 1.0)
    beta = corr = None
    if benchmark is not None:
        beta, corr = beta_and_correlation(rets, returns(benchmark.price.dropna()))
    return _rounded(
        Performance(
            symbol=history.symbol,
            start=first.date(),
            end=last.date(),
            start_price=float(prices.iloc[0]),
            end_price=float(prices.iloc[-1]),
            total_return=total,
            annualised_return=float(rets.mean() * periods),
            cagr=float((1.0 + total) ** (1.0 / years) - 1.0) if years > 0 else total,
            volatility=float(rets.std(ddof=1) * math.sqrt(periods)),
            drawdown=max_drawdown(prices),
            sharpe=sharpe_ratio(rets, risk_free, periods),
            sortino=sortino_ratio(rets, risk_free, periods),
            risk_free_rate=risk_free,
            benchmark=benchmark.symbol if benchmark is not None else None,
            beta=beta,
            correlation=corr,
            provenance=history.provenance,
        )
    )


def _rounded(perf: Performance) -> Performance:
    # Six decimals keep every figure exact enough and the tool output short.
    data = perf.model_dump()
    for key, value in data.items():
        if isinstance(value, float):
            data[key] = round(value, 6)
    data["drawdown"]["max_drawdown"] = round(data["drawdown"]["max_drawdown"], 6)
    dd = perf.drawdown
    data["summary"] = (
        f"{perf.symbol} {perf.start}..{perf.end}: total return {perf.total_return:.1%}, "
        f"CAGR {perf.cagr:.1%}, volatility {perf.volatility:.1%}, max drawdown "
        f"{dd.max_drawdown:.1%} (peak {dd.peak_date}, trough {dd.trough_date})"
    )
    return Performance.model_validate(data)


def sma(prices: pd.Series, window: int) -> pd.Series:
    """Simple moving average."""
    return prices.rolling(window).mean()


def ema(prices: pd.Series, span: int) -> pd.Series:
    """Exponential moving average (alpha = 2 / (span + 1))."""
    return prices.ewm(span=span, adjust=False).mean()


def rsi(prices: pd.Series, window: int = 14) -> pd.Series:
    """Relative strength index with Wilder smoothing."""
    delta = prices.diff()
    gain = delta.clip(lower=0).ewm(alpha=1 / window, adjust=False, min_periods=window).mean()
    loss = (-delta.clip(upper=0)).ewm(alpha=1 / window, adjust=False, min_periods=window).mean()
    rs = gain / loss
    return 100 - 100 / (1 + rs)


def macd(
    prices: pd.Series, fast: int = 12, slow: int = 26, signal: int = 9
) -> tuple[pd.Series, pd.Series, pd.Series]:
    """MACD line, signal line and histogram."""
    line = ema(prices, fast) - ema(prices, slow)
    sig = line.ewm(span=signal, adjust=False).mean()
    return line, sig, line - sig


def bollinger(
    prices: pd.Series, window: int = 20, width: float = 2.0
) -> tuple[pd.Series, pd.Series, pd.Series]:
    """Lower band, middle (SMA) and upper band."""
    mid = sma(prices, window)
    sd = prices.rolling(window).std(ddof=0)
    return mid - width * sd, mid, mid + width * sd


class IndicatorSnapshot(BaseModel):
    """Latest indicator values and what they suggest."""

    symbol: str
    as_of: date
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
) -> IndicatorSnapshot:
    """Compute SMA, EMA, RSI, MACD and Bollinger bands and keep the latest values."""
    prices = history.price.dropna()
    line, sig, hist = macd(prices)
    low, mid, up = bollinger(prices)
    snap = IndicatorSnapshot(
        symbol=history.symbol,
        as_of=prices.index[-1].date(),
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
    return snap


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
