"""Typed values that cross module boundaries: provenance, price histories, fundamentals."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field


class Provenance(BaseModel):
    """Where a number came from: cite this next to every figure."""

    source: str = Field(
        description="provider and file/endpoint, e.g. 'bokeh-sampledata stocks.csv.gz'"
    )
    symbol: str
    period: str = Field(description="date range 'YYYY-MM-DD..YYYY-MM-DD' or a fiscal period")
    as_of: date | None = Field(default=None, description="last date the number depends on")
    currency: str = "USD"
    adjusted: bool = Field(description="prices adjusted for splits/dividends")
    note: str = ""

    def cite(self) -> str:
        """A one-line citation, e.g. for a report footnote or an answer:
        ``symbol, source, period, currency, adjusted|unadjusted[; note]``."""
        adj = "adjusted" if self.adjusted else "unadjusted"
        extra = f"; {self.note}" if self.note else ""
        return f"{self.symbol}, {self.source}, {self.period}, {self.currency}, {adj}{extra}"


@dataclass
class PriceHistory:
    """Daily (or coarser) OHLCV bars for one symbol, indexed by date.

    ``frame`` has the columns ``open high low close volume`` and, when the source
    has one, ``adj_close``. ``price`` is the series metrics should use.
    """

    symbol: str
    interval: str
    frame: pd.DataFrame
    provenance: Provenance

    @property
    def price(self) -> pd.Series:
        """Adjusted close when present, else close.

        Raises:
            ValueError: a price is zero, negative or not finite (providers never return
                such bars; this guards histories built by hand), naming the dates.
        """
        col = "adj_close" if "adj_close" in self.frame.columns else "close"
        series = self.frame[col].astype(float)
        bad = ~np.isfinite(series.to_numpy()) | (series.to_numpy() <= 0)
        if bad.any():
            days = ", ".join(f"{d.date()} ({v:g})" for d, v in series[bad].head(8).items())
            raise ValueError(
                f"{self.symbol}: {int(bad.sum())} bad {col} value(s): {days}; "
                "every price must be positive and finite"
            )
        return series

    @property
    def start(self) -> date:
        """First bar's date."""
        first: date = pd.Timestamp(self.frame.index[0]).date()
        return first

    @property
    def end(self) -> date:
        """Last bar's date."""
        last: date = pd.Timestamp(self.frame.index[-1]).date()
        return last


class StatementLine(BaseModel):
    """One normalised fundamentals figure for one period."""

    value: float
    concept: str = Field(description="source concept, e.g. us-gaap:NetIncomeLoss or TotalRevenue")


class FiscalPeriod(BaseModel):
    """Normalised statements for one fiscal period (a quarter or a year)."""

    period_end: date
    period_start: date | None = None
    period_type: str = Field(description="'3M', '12M' or 'instant'")
    income: dict[str, StatementLine] = {}
    balance: dict[str, StatementLine] = {}
    cash_flow: dict[str, StatementLine] = {}

    def value(self, name: str) -> float | None:
        """A figure by its normalised name from any statement, or None."""
        for part in (self.income, self.balance, self.cash_flow):
            if name in part:
                return part[name].value
        return None


class Fundamentals(BaseModel):
    """Normalised statements, newest period first, with where they came from."""

    symbol: str
    currency: str = "USD"
    source: str
    periods: list[FiscalPeriod]

    def provenance(self, period: FiscalPeriod) -> Provenance:
        """Provenance for figures of one period."""
        start = f"{period.period_start}.." if period.period_start else ""
        return Provenance(
            source=self.source,
            symbol=self.symbol,
            period=f"{start}{period.period_end} ({period.period_type})",
            as_of=period.period_end,
            currency=self.currency,
            adjusted=False,
            note="as filed",
        )
