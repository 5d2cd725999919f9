"""Compact, model-sized views of price histories, comparisons and fundamentals."""

from __future__ import annotations

from datetime import date

import pandas as pd
from pydantic import BaseModel

from agentsdk_finance.fundamentals import Ratios, compute_ratios
from agentsdk_finance.metrics import Performance, max_drawdown
from agentsdk_finance.models import Fundamentals, PriceHistory, Provenance


class Bar(BaseModel):
    """One bar, rounded."""

    date: date
    close: float


_INTERVAL_WORDS = {"1d": "daily", "1wk": "weekly", "1mo": "monthly", "3mo": "quarterly"}


def price_column(history: PriceHistory) -> str:
    """The column every figure of a summary quotes: ``adj_close`` when the source has
    one (then the plain close would be a different, unadjusted number), else ``close``."""
    return "adj_close" if "adj_close" in history.frame.columns else "close"


def price_text(value: float) -> str:
    """A price as the headlines write it: 2 decimals, 4 significant digits below 1."""
    return f"{value:.2f}" if abs(value) >= 1 else f"{value:.4g}"


def _label(history: PriceHistory) -> str:
    return "adj close" if price_column(history) == "adj_close" else "close"


def _day(ts: object) -> date:
    day: date = pd.Timestamp(ts).date()
    return day


def price_moves(history: PriceHistory, extremes: bool = False) -> str:
    """``close 58.28 -> 27.91[, lowest close .. on .., highest close .. on ..], total
    return -52.1%, max drawdown -69.1% (peak 2000-01-03, trough 2009-03-09)``: the
    figures a chart of the history shows, in words, for a model that cannot see it."""
    prices = history.price.dropna()
    label = _label(history)
    dd = max_drawdown(prices)
    parts = [f"{label} {price_text(prices.iloc[0])} -> {price_text(prices.iloc[-1])}"]
    if extremes:
        low, high = prices.idxmin(), prices.idxmax()
        parts.append(f"lowest {label} {price_text(prices.loc[low])} on {_day(low)}")
        parts.append(f"highest {label} {price_text(prices.loc[high])} on {_day(high)}")
    change = float(prices.iloc[-1] / prices.iloc[0] - 1)
    parts.append(f"total return {change:.1%}")
    parts.append(
        f"max drawdown {dd.max_drawdown:.1%} (peak {dd.peak_date}, trough {dd.trough_date})"
    )
    return ", ".join(parts)


def chart_line(history: PriceHistory) -> str:
    """One line per charted symbol: its window, the figures the chart shows, its cite."""
    return (
        f"{history.symbol} {history.start}..{history.end}: {price_moves(history)}."
        f" Source: {history.provenance.cite()}"
    )


class PriceSummary(BaseModel):
    """A few numbers that describe a price history; never the raw rows."""

    summary: str  # the headline in words
    cite: str  # the provenance as one line, to quote after each figure
    symbol: str
    interval: str
    bars: int
    price_column: str  # what every price below is: "adj_close" (adjusted) or "close"
    first: Bar
    last: Bar
    high: Bar  # the highest price in the window (of price_column, not intraday) and its day
    low: Bar  # the lowest, likewise (on 1mo bars: the lowest month-end close)
    change_pct: float
    max_drawdown_pct: float
    drawdown_peak: date
    drawdown_trough: date
    average_volume: float | None  # over the bars with a volume; None: volume unknown
    recent: list[Bar]
    yearly_close: dict[int, float]
    provenance: Provenance


def summarise_prices(history: PriceHistory, recent: int = 5, max_years: int = 15) -> PriceSummary:
    """Summary statistics plus the last few bars and at most ``max_years`` year-end closes.

    The ``summary`` line states the first and last price, the lowest and highest with
    their days, the total return and the max drawdown, all of ``price_column``.
    """
    prices = history.price.dropna()

    def bar(ts: object) -> Bar:
        return Bar(date=_day(ts), close=round(float(prices.loc[ts]), 4))

    yearly = prices.groupby(prices.index.year).last().tail(max_years)
    volume = float(history.frame["volume"].mean()) if "volume" in history.frame else None
    known_volume = volume is not None and volume == volume  # mean skips NaN; all NaN -> NaN
    dd = max_drawdown(prices)
    change = float(prices.iloc[-1] / prices.iloc[0] - 1)
    kind = _INTERVAL_WORDS.get(history.interval, history.interval)
    summary = (
        f"{history.symbol} {history.start}..{history.end} (source: {history.provenance.source}):"
        f" {len(prices)} {kind} bars, {price_moves(history, extremes=True)}"
        f"{'' if known_volume else ', volume unknown'}"
    )
    return PriceSummary(
        summary=summary,
        cite=history.provenance.cite(),
        symbol=history.symbol,
        interval=history.interval,
        bars=len(prices),
        price_column=price_column(history),
        first=bar(prices.index[0]),
        last=bar(prices.index[-1]),
        high=bar(prices.idxmax()),
        low=bar(prices.idxmin()),
        change_pct=round(change * 100, 2),
        max_drawdown_pct=round(dd.max_drawdown * 100, 2),
        drawdown_peak=dd.peak_date,
        drawdown_trough=dd.trough_date,
        average_volume=round(volume, 0) if volume is not None and known_volume else None,
        recent=[bar(ts) for ts in prices.index[-recent:]],
        yearly_close={int(y): round(float(v), 4) for y, v in yearly.items()},
        provenance=history.provenance,
    )


class ComparisonRow(BaseModel):
    """One symbol's line in a comparison (fractions, not percent)."""

    symbol: str
    total_return: float
    cagr: float
    volatility: float
    max_drawdown: float
    sharpe: float | None
    growth_of_100: float
    cite: str
    provenance: Provenance


class Comparison(BaseModel):
    """Several symbols over their common dates, rebased to 100."""

    summary: str
    start: date
    end: date
    common_dates: int  # every figure uses exactly these dates
    rows: list[ComparisonRow]
    best: str
    worst: str
    note: str = ""  # dates some symbols had and others lacked (left out)


def align_histories(histories: list[PriceHistory]) -> tuple[list[PriceHistory], str]:
    """Every history cut to the dates all of them have, and a note on what was left out.

    Raises:
        ValueError: fewer than two dates in common.
    """
    common = histories[0].frame.index
    for h in histories[1:]:
        common = common.intersection(h.frame.index)
    if len(common) < 2:
        spans = ", ".join(f"{h.symbol} {h.start}..{h.end}" for h in histories)
        raise ValueError(f"these series have {len(common)} date(s) in common ({spans})")
    out, left_out = [], []
    for h in histories:
        extra = len(h.frame.index) - len(common)
        if extra:
            left_out.append(f"{h.symbol} {extra}")
        frame = h.frame.loc[common]
        first, last = frame.index[0].date(), frame.index[-1].date()
        prov = h.provenance.model_copy(update={"period": f"{first}..{last}", "as_of": last})
        out.append(PriceHistory(symbol=h.symbol, interval=h.interval, frame=frame, provenance=prov))
    note = f"dates only some symbols have were left out: {', '.join(left_out)}" if left_out else ""
    return out, note


def compare_rows(performances: list[Performance], note: str = "") -> Comparison:
    """Rank symbols by total return over the same (aligned) dates."""
    rows = [
        ComparisonRow(
            symbol=p.symbol,
            total_return=round(p.total_return, 4),
            cagr=round(p.cagr, 4),
            volatility=round(p.volatility, 4),
            max_drawdown=round(p.drawdown.max_drawdown, 4),
            sharpe=None if p.sharpe is None else round(p.sharpe, 3),
            growth_of_100=round(100 * (1 + p.total_return), 2),
            cite=p.provenance.cite(),
            provenance=p.provenance,
        )
        for p in performances
    ]
    ranked = sorted(rows, key=lambda r: r.total_return, reverse=True)
    start = min(p.start for p in performances)
    end = max(p.end for p in performances)
    ranking = "; ".join(
        f"{r.symbol} {r.total_return:.1%} (source: {r.provenance.source})" for r in ranked
    )
    return Comparison(
        summary=(
            f"Total return {start}..{end}, best first: {ranking}. "
            f"best: {ranked[0].symbol}, worst: {ranked[-1].symbol}"
        ),
        start=start,
        end=end,
        common_dates=performances[0].bars,
        note=note,
        rows=ranked,
        best=ranked[0].symbol,
        worst=ranked[-1].symbol,
    )


class PeriodFigures(BaseModel):
    """Normalised statements and ratios of one fiscal period."""

    summary: str  # the headline in words, citing its source
    period_end: date
    period_type: str
    figures: dict[str, float]
    ratios: Ratios
    cite: str
    provenance: Provenance


class FundamentalsView(BaseModel):
    """What the ``fundamentals`` tool returns."""

    symbol: str
    currency: str
    periods: list[PeriodFigures]


def view_fundamentals(fundamentals: Fundamentals, max_periods: int = 4) -> FundamentalsView:
    """Flatten statements to ``name -> value`` and add ratios, newest first."""
    periods = []
    for period in fundamentals.periods[:max_periods]:
        figures = {
            k: line.value
            for part in (period.income, period.balance, period.cash_flow)
            for k, line in part.items()
        }
        ratios = compute_ratios(period)
        prov = fundamentals.provenance(period)
        periods.append(
            PeriodFigures(
                summary=_statement_headline(fundamentals.symbol, figures, ratios, prov),
                period_end=period.period_end,
                period_type=period.period_type,
                figures=figures,
                ratios=ratios,
                cite=prov.cite(),
                provenance=prov,
            )
        )
    return FundamentalsView(
        symbol=fundamentals.symbol, currency=fundamentals.currency, periods=periods
    )


def _statement_headline(
    symbol: str, figures: dict[str, float], ratios: Ratios, prov: Provenance
) -> str:
    """``AAPL 2018-09-30..2018-12-29 (3M) (source: ...): revenue 84.31 bn USD, ...``."""
    parts = [
        f"{name.replace('_', ' ')} {figures[name] / 1e9:.2f} bn {prov.currency}"
        for name in ("revenue", "net_income", "free_cash_flow")
        if name in figures
    ]
    parts += [
        f"{label} {value:.1%}"
        for label, value in (
            ("net margin", ratios.net_margin),
            ("gross margin", ratios.gross_margin),
        )
        if value is not None
    ]
    if ratios.current_ratio is not None:
        parts.append(f"current ratio {ratios.current_ratio:.2f}")
    return f"{symbol} {prov.period} (source: {prov.source}): {', '.join(parts) or 'no figures'}"
