"""Normalised statement names, ratios, and the yfinance statement mapping."""

from __future__ import annotations

from datetime import date

import pandas as pd
from pydantic import BaseModel

from agentsdk_finance.models import FiscalPeriod, Fundamentals, StatementLine

INCOME_ITEMS = (
    "revenue",
    "gross_profit",
    "operating_income",
    "net_income",
    "eps_basic",
    "eps_diluted",
)
BALANCE_ITEMS = (
    "total_assets",
    "current_assets",
    "total_liabilities",
    "current_liabilities",
    "total_equity",
    "long_term_debt",
    "short_term_debt",
    "commercial_paper",
    "total_debt",
)
CASH_FLOW_ITEMS = ("operating_cash_flow", "capital_expenditure", "free_cash_flow")

# normalised name -> yfinance statement row names, first match wins
YFINANCE_ROWS: dict[str, tuple[str, ...]] = {
    "revenue": ("TotalRevenue", "OperatingRevenue"),
    "gross_profit": ("GrossProfit",),
    "operating_income": ("OperatingIncome", "TotalOperatingIncomeAsReported"),
    "net_income": ("NetIncome", "NetIncomeCommonStockholders"),
    "eps_basic": ("BasicEPS",),
    "eps_diluted": ("DilutedEPS",),
    "total_assets": ("TotalAssets",),
    "current_assets": ("CurrentAssets",),
    "total_liabilities": ("TotalLiabilitiesNetMinorityInterest",),
    "current_liabilities": ("CurrentLiabilities",),
    "total_equity": ("StockholdersEquity", "CommonStockEquity"),
    "total_debt": ("TotalDebt",),
    "operating_cash_flow": ("OperatingCashFlow",),
    "capital_expenditure": ("CapitalExpenditure",),
    "free_cash_flow": ("FreeCashFlow",),
}


def derive_free_cash_flow(period: FiscalPeriod) -> None:
    """Add free cash flow = operating cash flow - capex when the source lacks it."""
    ocf = period.cash_flow.get("operating_cash_flow")
    capex = period.cash_flow.get("capital_expenditure")
    if "free_cash_flow" in period.cash_flow or ocf is None or capex is None:
        return
    # XBRL reports capex as a positive payment; yfinance as a negative flow.
    fcf = ocf.value - abs(capex.value)
    period.cash_flow["free_cash_flow"] = StatementLine(
        value=fcf, concept=f"derived: {ocf.concept} - |{capex.concept}|"
    )


class Ratios(BaseModel):
    """Ratios of one period (None when an input is missing). Margins are fractions."""

    gross_margin: float | None = None
    operating_margin: float | None = None
    net_margin: float | None = None
    return_on_equity: float | None = None
    current_ratio: float | None = None
    debt_to_equity: float | None = None
    liabilities_to_equity: float | None = None
    free_cash_flow_margin: float | None = None


def _div(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else a / b


def total_debt(period: FiscalPeriod) -> float | None:
    """Total debt: reported, or the sum of commercial paper and current/long-term debt."""
    reported = period.value("total_debt")
    if reported is not None:
        return reported
    parts = [period.value(k) for k in ("commercial_paper", "short_term_debt", "long_term_debt")]
    known = [p for p in parts if p is not None]
    return sum(known) if known else None


def compute_ratios(period: FiscalPeriod) -> Ratios:
    """Margins, ROE (on period net income, not annualised), current ratio, debt/equity."""
    revenue = period.value("revenue")
    equity = period.value("total_equity")
    return Ratios(
        gross_margin=_div(period.value("gross_profit"), revenue),
        operating_margin=_div(period.value("operating_income"), revenue),
        net_margin=_div(period.value("net_income"), revenue),
        return_on_equity=_div(period.value("net_income"), equity),
        current_ratio=_div(period.value("current_assets"), period.value("current_liabilities")),
        debt_to_equity=_div(total_debt(period), equity),
        liabilities_to_equity=_div(period.value("total_liabilities"), equity),
        free_cash_flow_margin=_div(period.value("free_cash_flow"), revenue),
    )


def fundamentals_from_yfinance_frames(
    symbol: str,
    income: pd.DataFrame,
    balance: pd.DataFrame,
    cash_flow: pd.DataFrame,
    *,
    currency: str = "USD",
    period_type: str = "12M",
) -> Fundamentals:
    """Normalise yfinance statement frames (rows = items, columns = period ends)."""
    ends: set[date] = set()
    for frame in (income, balance, cash_flow):
        ends.update(pd.Timestamp(c).date() for c in frame.columns)
    periods = []
    for end in sorted(ends, reverse=True):
        period = FiscalPeriod(period_end=end, period_type=period_type)
        for frame, names, target in (
            (income, INCOME_ITEMS, period.income),
            (balance, BALANCE_ITEMS, period.balance),
            (cash_flow, CASH_FLOW_ITEMS, period.cash_flow),
        ):
            column = next((c for c in frame.columns if pd.Timestamp(c).date() == end), None)
            if column is None:
                continue
            for key in names:
                for row in YFINANCE_ROWS.get(key, ()):
                    if row in frame.index and pd.notna(frame.at[row, column]):
                        target[key] = StatementLine(
                            value=float(frame.at[row, column]), concept=f"yahoo:{row}"
                        )
                        break
        derive_free_cash_flow(period)
        if period.income or period.balance or period.cash_flow:
            periods.append(period)
    return Fundamentals(
        symbol=symbol.upper(),
        currency=currency,
        source="Yahoo Finance fundamentals-timeseries via yfinance",
        periods=periods,
    )
