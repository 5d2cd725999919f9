"""Performance metrics of a price series, with every convention stated.

* Returns: simple period returns of the adjusted close (the close when there is none).
* Annualisation: 252 periods a year for daily bars, 52 weekly, 12 monthly, 4 quarterly;
  other (intraday) intervals are refused rather than annualised with a guess.
* Total return: last price / first price - 1 over the bars served.
* CAGR: ``(1 + total) ** (1 / years) - 1`` with years = calendar days between the first
  and last bar / 365.25.
* Annualised return: arithmetic mean period return x periods a year.
* Volatility: sample standard deviation (ddof=1) of period returns x sqrt(periods).
* Sharpe / Sortino: the annual risk-free rate becomes a geometric per-period rate;
  Sortino's downside deviation is the root mean square of the negative excess returns
  over all periods.
* Max drawdown: the deepest fall of the price below its running maximum. The trough is
  the first bar at that depth; the peak is the **last** bar at the running maximum
  before the trough (where the fall began, as empyrical does); the recovery is the
  first bar after the trough back at or above the peak price, None if never.
* Beta and correlation: prices are first aligned on the dates both series have, then
  turned into returns, so every pair of returns spans the same days.
"""

from __future__ import annotations

import math
from datetime import date

import numpy as np
import pandas as pd
from pydantic import BaseModel

from agentsdk_finance.models import PriceHistory, Provenance

PERIODS_PER_YEAR = {"1d": 252, "5d": 52, "1wk": 52, "1mo": 12, "3mo": 4}
MIN_COMMON_DATES = 3  # beta and correlation need at least two aligned returns


class MetricsError(ValueError):
    """The figures cannot be computed from this input (the message says why and how)."""


class Drawdown(BaseModel):
    """The deepest peak-to-trough fall."""

    max_drawdown: float  # negative fraction, e.g. -0.65
    peak_date: date
    trough_date: date
    recovery_date: date | None  # first close after the trough back at the peak, None if never


class Performance(BaseModel):
    """Return and risk figures of one symbol over its period (fractions: 0.25 = 25%)."""

    summary: str = ""  # the headline in words, for readers (and small models)
    cite: str = ""  # the provenance as one line, to quote after each figure
    symbol: str
    start: date
    end: date
    bars: int
    periods_per_year: int
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
    benchmark_common_dates: int | None = None  # dates both series have (beta uses these)
    provenance: Provenance
    benchmark_provenance: Provenance | None = None
    benchmark_cite: str | None = None


def returns(prices: pd.Series) -> pd.Series:
    """Simple period returns."""
    return prices.pct_change().dropna()


def max_drawdown(prices: pd.Series) -> Drawdown:
    """Deepest fall from a running peak, with its peak, trough and recovery dates.

    Peak = the last bar at the running maximum before the trough; a series that never
    falls has drawdown 0, peak = trough = its first bar and no recovery.
    """
    running_peak = prices.cummax()
    depth = prices / running_peak - 1.0
    trough = depth.idxmin()  # the first bar at the deepest depth
    before = prices.loc[:trough]
    at_peak = before[before >= running_peak.loc[:trough]]
    peak = at_peak.index[-1]
    after = prices.loc[prices.index > trough]
    recovered = after[after >= prices.loc[peak]] if depth.loc[trough] < 0 else after.iloc[:0]
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


def aligned(a: pd.Series, b: pd.Series) -> pd.DataFrame:
    """Two price series on the dates both have (two columns, in that order)."""
    return pd.concat([a.rename("a"), b.rename("b")], axis=1, join="inner").dropna()


def beta_and_correlation(prices: pd.Series, bench: pd.Series) -> tuple[float, float, int]:
    """Beta and Pearson correlation against a benchmark, from PRICES aligned on common
    dates first (so a date missing from one series never pairs a two-day return with a
    one-day one). Returns (beta, correlation, common dates).

    Raises:
        MetricsError: fewer than ``MIN_COMMON_DATES`` common dates, or a flat benchmark.
    """
    both = aligned(prices, bench)
    if len(both) < MIN_COMMON_DATES:
        raise MetricsError(
            f"the series and the benchmark have {len(both)} date(s) in common; beta needs "
            f"at least {MIN_COMMON_DATES}"
        )
    rets = both.pct_change().dropna()
    a, b = rets["a"], rets["b"]
    var = b.var(ddof=1)
    if not var or math.isnan(var):
        raise MetricsError("the benchmark does not move on the common dates; beta is undefined")
    return float(a.cov(b) / var), float(a.corr(b)), len(both)


def performance(
    history: PriceHistory, *, risk_free: float = 0.0, benchmark: PriceHistory | None = None
) -> Performance:
    """Every performance figure of ``history`` (needs at least two bars).

    Raises:
        MetricsError: fewer than two prices, an interval that cannot be annualised, a
            non-finite risk-free rate, or a benchmark with too few common dates.
    """
    prices = history.price
    if len(prices) < 2:
        raise MetricsError(f"{history.symbol}: need at least two prices, got {len(prices)}")
    if history.interval not in PERIODS_PER_YEAR:
        raise MetricsError(
            f"{history.interval} bars cannot be annualised here; use daily, weekly or monthly bars"
        )
    if not math.isfinite(risk_free):
        raise MetricsError(f"risk-free rate {risk_free} is not a number")
    periods = PERIODS_PER_YEAR[history.interval]
    rets = returns(prices)
    first, last = prices.index[0], prices.index[-1]
    years = (last - first).days / 365.25
    total = float(prices.iloc[-1] / prices.iloc[0] - 1.0)
    beta = corr = common = None
    if benchmark is not None:
        try:
            beta, corr, common = beta_and_correlation(prices, benchmark.price)
        except MetricsError as exc:
            raise MetricsError(
                f"{history.symbol} vs {benchmark.symbol} ({history.start}..{history.end} "
                f"against {benchmark.start}..{benchmark.end}): {exc}"
            ) from None
    return _rounded(
        Performance(
            symbol=history.symbol,
            start=first.date(),
            end=last.date(),
            bars=len(prices),
            periods_per_year=periods,
            start_price=float(prices.iloc[0]),
            end_price=float(prices.iloc[-1]),
            total_return=total,
            annualised_return=float(rets.mean() * periods),
            cagr=float((1.0 + total) ** (1.0 / years) - 1.0) if years > 0 else total,
            volatility=float(rets.std(ddof=1) * math.sqrt(periods)) if len(rets) > 1 else 0.0,
            drawdown=max_drawdown(prices),
            sharpe=sharpe_ratio(rets, risk_free, periods),
            sortino=sortino_ratio(rets, risk_free, periods),
            risk_free_rate=risk_free,
            benchmark=benchmark.symbol if benchmark is not None else None,
            beta=beta,
            correlation=corr,
            benchmark_common_dates=common,
            provenance=history.provenance,
            benchmark_provenance=benchmark.provenance if benchmark is not None else None,
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
    data["cite"] = perf.provenance.cite()
    if perf.benchmark_provenance is not None:
        data["benchmark_cite"] = perf.benchmark_provenance.cite()
    # the headline cites itself up front (symbol, period, source): a reader, or a small
    # model, that quotes only its first half still says where the numbers came from
    data["summary"] = (
        f"{perf.symbol} {perf.start}..{perf.end} (source: {perf.provenance.source}): total "
        f"return {perf.total_return:.1%}, CAGR {perf.cagr:.1%}, volatility {perf.volatility:.1%}, "
        f"max drawdown {dd.max_drawdown:.1%} (peak {dd.peak_date}, trough {dd.trough_date})"
    )
    if perf.beta is not None and perf.correlation is not None and perf.benchmark_provenance:
        data["summary"] += (
            f", beta {perf.beta:.2f} and correlation {perf.correlation:.2f} vs {perf.benchmark} "
            f"(source: {perf.benchmark_provenance.source}) on {perf.benchmark_common_dates} "
            "common dates"
        )
    return Performance.model_validate(data)
