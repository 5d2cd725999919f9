"""Fundamentals from an SEC XBRL instance document, parsed with the standard library.

Only facts without dimensions (no segment/scenario) count: those are the consolidated
figures on the face of the statements. Durations are matched to the document's
reporting period (``dei:DocumentPeriodEndDate``); for a 10-Q the three-month duration
is preferred over year-to-date.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from agentsdk_finance.fundamentals import (
    BALANCE_ITEMS,
    CASH_FLOW_ITEMS,
    INCOME_ITEMS,
    derive_free_cash_flow,
)
from agentsdk_finance.models import FiscalPeriod, Fundamentals, StatementLine

_XBRLI = "{http://www.xbrl.org/2003/instance}"

# normalised name -> us-gaap concepts, first match wins
US_GAAP_CONCEPTS: dict[str, tuple[str, ...]] = {
    "revenue": (
        "Revenues",
        "RevenueFromContractWithCustomerExcludingAssessedTax",
        "SalesRevenueNet",
    ),
    "gross_profit": ("GrossProfit",),
    "operating_income": ("OperatingIncomeLoss",),
    "net_income": ("NetIncomeLoss", "ProfitLoss"),
    "eps_basic": ("EarningsPerShareBasic",),
    "eps_diluted": ("EarningsPerShareDiluted",),
    "total_assets": ("Assets",),
    "current_assets": ("AssetsCurrent",),
    "total_liabilities": ("Liabilities",),
    "current_liabilities": ("LiabilitiesCurrent",),
    "total_equity": (
        "StockholdersEquity",
        "StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest",
    ),
    "long_term_debt": ("LongTermDebtNoncurrent", "LongTermDebt"),
    "short_term_debt": ("LongTermDebtCurrent",),
    "commercial_paper": ("CommercialPaper",),
    "operating_cash_flow": ("NetCashProvidedByUsedInOperatingActivities",),
    "capital_expenditure": ("PaymentsToAcquirePropertyPlantAndEquipment",),
}


@dataclass(frozen=True)
class _Context:
    start: date | None
    end: date
    dimensional: bool

    @property
    def days(self) -> int:
        return (self.end - self.start).days if self.start else 0


def _local(tag: str) -> tuple[str, str]:
    """('{ns}Name') -> (ns, Name)."""
    ns, _, name = tag[1:].partition("}")
    return ns, name


def _parse_contexts(root: ET.Element) -> dict[str, _Context]:
    contexts: dict[str, _Context] = {}
    for ctx in root.iter(f"{_XBRLI}context"):
        period = ctx.find(f"{_XBRLI}period")
        if period is None:
            continue
        instant = period.findtext(f"{_XBRLI}instant")
        start = period.findtext(f"{_XBRLI}startDate")
        end = period.findtext(f"{_XBRLI}endDate")
        dimensional = (
            ctx.find(f"{_XBRLI}entity/{_XBRLI}segment") is not None
            or ctx.find(f"{_XBRLI}scenario") is not None
        )
        if instant:
            contexts[ctx.get("id", "")] = _Context(
                None, date.fromisoformat(instant.strip()), dimensional
            )
        elif start and end:
            contexts[ctx.get("id", "")] = _Context(
                date.fromisoformat(start.strip()), date.fromisoformat(end.strip()), dimensional
            )
    return contexts


def fundamentals_from_xbrl(path: str | Path) -> Fundamentals:
    """Normalise the consolidated statements of one XBRL instance file.

    Args:
        path: the instance document (e.g. ``aapl-20181229.xml``).

    Returns:
        ``Fundamentals`` with one period: the document's reporting period.
    """
    root = ET.parse(path).getroot()
    contexts = _parse_contexts(root)
    dei: dict[str, str] = {}
    gaap: dict[str, list[tuple[_Context, float]]] = {}
    for el in root:
        if not isinstance(el.tag, str) or not el.tag.startswith("{"):
            continue
        ns, name = _local(el.tag)
        text = (el.text or "").strip()
        if "xbrl.sec.gov/dei" in ns:
            dei[name] = text
        elif "fasb.org/us-gaap" in ns and el.get("contextRef") in contexts and text:
            ctx = contexts[el.get("contextRef", "")]
            if (
                ctx.dimensional
                or el.get("{http://www.w3.org/2001/XMLSchema-instance}nil") == "true"
            ):
                continue
            try:
                gaap.setdefault(name, []).append((ctx, float(text)))
            except ValueError:
                continue
    period_end = date.fromisoformat(dei.get("DocumentPeriodEndDate", "").strip() or _latest(gaap))
    form = dei.get("DocumentType", "")
    quarterly = form.startswith("10-Q")

    def pick(name: str, instant: bool) -> tuple[float, _Context] | None:
        facts = [
            (ctx, v)
            for ctx, v in gaap.get(name, [])
            if ctx.end == period_end and (ctx.start is None) == instant
        ]
        if not facts:
            return None
        # 10-Q: the shortest duration is the quarter; 10-K: the longest is the year.
        ctx, value = (min if quarterly else max)(facts, key=lambda f: f[0].days)
        return value, ctx

    values: dict[str, tuple[StatementLine, _Context]] = {}
    for key, concepts in US_GAAP_CONCEPTS.items():
        instant = key in BALANCE_ITEMS or key in ("commercial_paper", "short_term_debt")
        for concept in concepts:
            found = pick(concept, instant)
            if found:
                values[key] = (
                    StatementLine(value=found[0], concept=f"us-gaap:{concept}"),
                    found[1],
                )
                break
    durations = [ctx for _, ctx in values.values() if ctx.start is not None]
    period_start = min((c.start for c in durations if c.start), default=None)
    if quarterly and durations:
        period_start = max(c.start for c in durations if c.start)
    period = FiscalPeriod(
        period_end=period_end,
        period_start=period_start,
        period_type="3M" if quarterly else "12M",
        income={k: v for k, (v, _) in values.items() if k in INCOME_ITEMS},
        balance={k: v for k, (v, _) in values.items() if k in BALANCE_ITEMS},
        cash_flow={k: v for k, (v, _) in values.items() if k in CASH_FLOW_ITEMS},
    )
    derive_free_cash_flow(period)
    symbol = dei.get("TradingSymbol", "").upper() or Path(path).name.split("-")[0].upper()
    name = dei.get("EntityRegistrantName", symbol)
    fiscal = f"FY{dei.get('DocumentFiscalYearFocus', '')} {dei.get('DocumentFiscalPeriodFocus', '')}".strip()
    return Fundamentals(
        symbol=symbol,
        currency="USD",
        source=f"SEC XBRL {form} {name} {fiscal} ({Path(path).name})",
        periods=[period],
    )


def _latest(gaap: dict[str, list[tuple[_Context, float]]]) -> str:
    ends = [ctx.end for facts in gaap.values() for ctx, _ in facts]
    return max(ends).isoformat()
