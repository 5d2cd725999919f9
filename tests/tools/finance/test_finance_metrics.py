"""Metrics on the real sample data, checked against independent computations written here
with the csv module and plain Python loops (no pandas)."""

from __future__ import annotations

import csv
import gzip
import math
from datetime import date

import pytest
from agentsdk_finance import SampleDataProvider, indicator_snapshot, performance
from agentsdk_finance.sampledata import SampleDataFiles, bokeh_stocks_path


def _read_closes(path, symbol=None, column="close"):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as fh:
        rows = list(csv.DictReader(fh))
    out = []
    for row in rows:
        if symbol and row.get("Ticker") != symbol:
            continue
        day = row.get("date") or row.get("Date")
        out.append((date.fromisoformat(day[:10]), float(row[column])))
    out.sort()
    return out


def _drawdown(series):
    peak_value, peak_day = -math.inf, None
    worst, worst_peak, worst_trough = 0.0, None, None
    for day, value in series:
        if value > peak_value:
            peak_value, peak_day = value, day
        depth = value / peak_value - 1
        if depth < worst:
            worst, worst_peak, worst_trough = depth, peak_day, day
    return worst, worst_peak, worst_trough


def _daily_returns(series):
    return [series[i][1] / series[i - 1][1] - 1 for i in range(1, len(series))]


def _mean(xs):
    return sum(xs) / len(xs)


def _stdev(xs):
    m = _mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def test_msft_max_drawdown_and_dates_match_an_independent_scan(
    sample: SampleDataProvider, sample_files: SampleDataFiles
) -> None:
    series = _read_closes(sample_files.msft_long)
    worst, peak, trough = _drawdown(series)
    result = performance(sample.history("MSFT", None, None))
    assert result.drawdown.max_drawdown == pytest.approx(worst, abs=1e-6)
    assert (result.drawdown.peak_date, result.drawdown.trough_date) == (peak, trough)
    # the dot-com peak and the 2009 low, as everyone remembers them
    assert (peak, trough) == (date(1999, 12, 27), date(2009, 3, 9))
    recovery = next(d for d, v in series if d > trough and v >= dict(series)[peak])
    assert result.drawdown.recovery_date == recovery


def test_returns_risk_and_ratios_match_independent_formulas(
    sample: SampleDataProvider, sample_files: SampleDataFiles
) -> None:
    msft = _read_closes(sample_files.msft_long)
    spx = dict(_read_closes(sample_files.spx))
    rf = 0.03
    result = performance(
        sample.history("MSFT", None, None),
        risk_free=rf,
        benchmark=sample.history("SPX", None, None),
    )
    rets = _daily_returns(msft)
    total = msft[-1][1] / msft[0][1] - 1
    years = (msft[-1][0] - msft[0][0]).days / 365.25
    rf_day = (1 + rf) ** (1 / 252) - 1
    excess = [r - rf_day for r in rets]
    downside = math.sqrt(sum(min(x, 0) ** 2 for x in excess) / len(excess))
    assert result.total_return == pytest.approx(total, rel=1e-6)
    assert result.cagr == pytest.approx((1 + total) ** (1 / years) - 1, abs=1e-6)
    assert result.annualised_return == pytest.approx(_mean(rets) * 252, abs=1e-6)
    assert result.volatility == pytest.approx(_stdev(rets) * math.sqrt(252), abs=1e-6)
    assert result.sharpe == pytest.approx(_mean(excess) / _stdev(excess) * math.sqrt(252), abs=1e-5)
    assert result.sortino == pytest.approx(_mean(excess) / downside * math.sqrt(252), abs=1e-5)
    # beta / correlation on the dates both series have
    days = [d for d, _ in msft if d in spx]
    m = dict(msft)
    a = [m[days[i]] / m[days[i - 1]] - 1 for i in range(1, len(days))]
    b = [spx[days[i]] / spx[days[i - 1]] - 1 for i in range(1, len(days))]
    ma, mb = _mean(a), _mean(b)
    cov = sum((x - ma) * (y - mb) for x, y in zip(a, b, strict=True)) / (len(a) - 1)
    assert result.beta == pytest.approx(cov / _stdev(b) ** 2, abs=1e-5)
    assert result.correlation == pytest.approx(cov / (_stdev(a) * _stdev(b)), abs=1e-5)
    assert result.provenance.symbol == "MSFT" and result.provenance.adjusted


def test_bokeh_series_use_the_adjusted_close(sample: SampleDataProvider) -> None:
    raw = _read_closes(bokeh_stocks_path(), "IBM", column="Adj Close")
    raw = [(d, v) for d, v in raw if date(2001, 1, 1) <= d <= date(2010, 12, 31)]
    result = performance(sample.history("IBM", date(2001, 1, 1), date(2010, 12, 31)))
    assert result.start_price == pytest.approx(raw[0][1], abs=1e-6)
    assert result.total_return == pytest.approx(raw[-1][1] / raw[0][1] - 1, abs=1e-6)
    assert _drawdown(raw)[0] == pytest.approx(result.drawdown.max_drawdown, abs=1e-6)
    assert "adj_close" in result.provenance.note


def _ema(values, span):
    alpha, out = 2 / (span + 1), [values[0]]
    for v in values[1:]:
        out.append(alpha * v + (1 - alpha) * out[-1])
    return out


def test_indicators_match_independent_loops(sample: SampleDataProvider) -> None:
    history = sample.history("AAPL", date(2011, 1, 1), date(2013, 3, 1))
    closes = [float(v) for v in history.price]
    snap = indicator_snapshot(history)
    assert snap.sma[50] == pytest.approx(sum(closes[-50:]) / 50, abs=1e-3)
    assert snap.sma[200] == pytest.approx(sum(closes[-200:]) / 200, abs=1e-3)
    assert snap.ema[12] == pytest.approx(_ema(closes, 12)[-1], abs=1e-3)
    # RSI with Wilder's smoothing, seeded like pandas' ewm(adjust=False)
    gains = [max(closes[i] - closes[i - 1], 0) for i in range(1, len(closes))]
    losses = [max(closes[i - 1] - closes[i], 0) for i in range(1, len(closes))]
    avg_g, avg_l = gains[0], losses[0]
    for g, lo in zip(gains[1:], losses[1:], strict=True):
        avg_g, avg_l = (avg_g * 13 + g) / 14, (avg_l * 13 + lo) / 14
    assert snap.rsi_14 == pytest.approx(100 - 100 / (1 + avg_g / avg_l), abs=1e-3)
    macd_line = [f - s for f, s in zip(_ema(closes, 12), _ema(closes, 26), strict=True)]
    signal = _ema(macd_line, 9)
    assert snap.macd == pytest.approx(macd_line[-1], abs=1e-3)
    assert snap.macd_histogram == pytest.approx(macd_line[-1] - signal[-1], abs=1e-3)
    window = closes[-20:]
    mid = sum(window) / 20
    sd = math.sqrt(sum((x - mid) ** 2 for x in window) / 20)
    assert snap.bollinger_upper == pytest.approx(mid + 2 * sd, abs=1e-3)
    assert snap.bollinger_lower == pytest.approx(mid - 2 * sd, abs=1e-3)
    assert snap.as_of == date(2013, 3, 1)
