"""Fundamentals from Apple's real XBRL 10-Q (quarter ended 2018-12-29) match the filed values."""

from __future__ import annotations

from datetime import date

import pytest
from agentsdk_finance import compute_ratios, fundamentals_from_xbrl
from agentsdk_finance.sampledata import SampleDataFiles

# As filed in Apple's Form 10-Q for Q1 FY2019 (millions of USD except per-share amounts)
FILED = {
    "revenue": 84_310,
    "gross_profit": 32_031,
    "operating_income": 23_346,
    "net_income": 19_965,
    "total_assets": 373_719,
    "current_assets": 140_828,
    "total_liabilities": 255_827,
    "current_liabilities": 108_283,
    "total_equity": 117_892,
    "operating_cash_flow": 26_690,
    "capital_expenditure": 3_355,
}


def test_apple_10q_statements_match_the_filing(sample_files: SampleDataFiles) -> None:
    data = fundamentals_from_xbrl(sample_files.aapl_xbrl_10q)
    assert data.symbol == "AAPL" and data.currency == "USD"
    (period,) = data.periods
    assert (period.period_start, period.period_end, period.period_type) == (
        date(2018, 9, 30),
        date(2018, 12, 29),
        "3M",
    )
    for name, millions in FILED.items():
        assert period.value(name) == millions * 1_000_000, name
    assert period.value("eps_basic") == 4.22
    assert period.value("eps_diluted") == 4.18
    # free cash flow is derived: operating cash flow minus capital expenditure
    assert period.value("free_cash_flow") == (26_690 - 3_355) * 1_000_000
    assert period.income["net_income"].concept == "us-gaap:NetIncomeLoss"
    prov = data.provenance(period)
    assert "10-Q" in prov.source and "aapl-20181229.xml" in prov.source
    assert prov.period.startswith("2018-09-30..2018-12-29")


def test_apple_10q_ratios(sample_files: SampleDataFiles) -> None:
    (period,) = fundamentals_from_xbrl(sample_files.aapl_xbrl_10q).periods
    ratios = compute_ratios(period)
    assert ratios.gross_margin == pytest.approx(32_031 / 84_310)
    assert ratios.operating_margin == pytest.approx(23_346 / 84_310)
    assert ratios.net_margin == pytest.approx(19_965 / 84_310)
    assert ratios.return_on_equity == pytest.approx(19_965 / 117_892)
    assert ratios.current_ratio == pytest.approx(140_828 / 108_283)
    # commercial paper + term debt (current and non-current), as filed
    assert ratios.debt_to_equity == pytest.approx((11_969 + 9_772 + 92_989) / 117_892)
