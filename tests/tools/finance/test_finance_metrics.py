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


def _textbook_ema(values, span):
    """EMA seeded with the simple mean of the first ``span`` values (None before)."""
    alpha = 2 / (span + 1)
    out = [None] * (span - 1) + [sum(values[:span]) / span]
    for v in values[span:]:
        out.append(alpha * v + (1 - alpha) * out[-1])
    return out


def _wilder_rsi(values, n=14):
    """Wilder's RSI: first averages = simple means of the first n changes, then
    avg = (avg * (n - 1) + x) / n. One value per price (None for the first n)."""
    changes = [values[i] - values[i - 1] for i in range(1, len(values))]
    gains = [max(c, 0.0) for c in changes]
    losses = [max(-c, 0.0) for c in changes]
    avg_g, avg_l = sum(gains[:n]) / n, sum(losses[:n]) / n
    out = [None] * n
    for i in range(n, len(changes) + 1):
        if i > n:
            avg_g = (avg_g * (n - 1) + gains[i - 1]) / n
            avg_l = (avg_l * (n - 1) + losses[i - 1]) / n
        out.append(100.0 if avg_l == 0 else 100 - 100 / (1 + avg_g / avg_l))
    return out


@pytest.mark.parametrize(
    ("symbol", "start", "end"),
    [
        ("AAPL", date(2013, 1, 2), date(2013, 3, 1)),  # 40 bars: seeding dominates
        ("IBM", date(2011, 1, 1), date(2013, 3, 1)),
        ("MSFT", None, None),  # 30 years
    ],
)
def test_indicators_match_textbook_definitions(sample, symbol, start, end) -> None:
    from agentsdk_finance.indicators import ema, macd, rsi

    history = sample.history(symbol, start, end)
    closes = [float(v) for v in history.price]
    snap = indicator_snapshot(history)
    assert snap.bars == len(closes)
    assert snap.sma[50] == (
        None if len(closes) < 50 else pytest.approx(sum(closes[-50:]) / 50, abs=1e-4)
    )
    for span in (12, 26):
        expected = _textbook_ema(closes, span)
        got = list(ema(history.price, span))
        assert all(math.isnan(g) for g in got[: span - 1])
        assert got[span - 1 :] == pytest.approx(expected[span - 1 :], rel=1e-10)
    expected_rsi = _wilder_rsi(closes)
    got_rsi = list(rsi(history.price))
    assert all(math.isnan(g) for g in got_rsi[:14])
    assert got_rsi[14:] == pytest.approx(expected_rsi[14:], abs=1e-9)
    assert snap.rsi_14 == pytest.approx(expected_rsi[-1], abs=1e-4)
    # MACD: EMA12 - EMA26 from bar 25; signal = EMA9 of the line seeded with its first 9
    line = [
        f - s
        for f, s in zip(_textbook_ema(closes, 12)[25:], _textbook_ema(closes, 26)[25:], strict=True)
    ]
    signal = _textbook_ema(line, 9)
    got_line, got_signal, _ = macd(history.price)
    assert list(got_line)[25:] == pytest.approx(line, rel=1e-9, abs=1e-12)
    assert list(got_signal)[33:] == pytest.approx(signal[8:], rel=1e-9, abs=1e-12)
    assert snap.macd_histogram == pytest.approx(line[-1] - signal[-1], abs=1e-4)
    window = closes[-20:]
    mid = sum(window) / 20
    sd = math.sqrt(sum((x - mid) ** 2 for x in window) / 20)
    assert snap.bollinger_upper == pytest.approx(mid + 2 * sd, abs=1e-4)
    assert snap.bollinger_lower == pytest.approx(mid - 2 * sd, abs=1e-4)


def test_rsi_edge_cases_follow_the_stated_rules() -> None:
    import pandas as pd
    from agentsdk_finance.indicators import rsi

    days = pd.bdate_range("2024-01-01", periods=20)
    rising = rsi(pd.Series([float(i + 1) for i in range(20)], index=days))
    flat = rsi(pd.Series([5.0] * 20, index=days))
    assert rising.iloc[-1] == 100.0 and flat.iloc[-1] == 50.0
    assert rising.iloc[:14].isna().all() and rising.iloc[14:].notna().all()


def test_indicators_agree_with_ta_lib(sample) -> None:
    talib = pytest.importorskip("talib")
    import numpy as np
    from agentsdk_finance.indicators import bollinger, ema, macd, rsi

    for symbol, start, end in (("AAPL", date(2013, 1, 2), date(2013, 3, 1)), ("MSFT", None, None)):
        history = sample.history(symbol, start, end)
        x = history.price.to_numpy()
        np.testing.assert_allclose(rsi(history.price, 14), talib.RSI(x, 14), rtol=1e-9)
        for span in (12, 26, 50):
            np.testing.assert_allclose(ema(history.price, span), talib.EMA(x, span), rtol=1e-9)
        low, middle, up = bollinger(history.price)
        t_up, t_mid, t_low = talib.BBANDS(x, 20, 2, 2)
        np.testing.assert_allclose(up, t_up, rtol=1e-9)
        np.testing.assert_allclose(low, t_low, rtol=1e-9)
        np.testing.assert_allclose(middle, t_mid, rtol=1e-9)
    # TA-Lib seeds MACD's fast EMA at the slow one's start (a TA-Lib choice): the lines
    # differ for the first bars and then agree, so compare the last value of 30 years
    line, sig, _ = macd(history.price)
    t_line, t_sig, _ = talib.MACD(x, 12, 26, 9)
    assert line.iloc[-1] == pytest.approx(t_line[-1], rel=1e-9)
    assert sig.iloc[-1] == pytest.approx(t_sig[-1], rel=1e-9)


def _beta_corr(pairs):
    a = [x for x, _ in pairs]
    b = [y for _, y in pairs]
    ma, mb = _mean(a), _mean(b)
    cov = sum((x - ma) * (y - mb) for x, y in pairs) / (len(pairs) - 1)
    return cov / _stdev(b) ** 2, cov / (_stdev(a) * _stdev(b))


def test_beta_pairs_returns_over_the_same_days_when_dates_are_missing(
    tmp_path, sample_files: SampleDataFiles
) -> None:
    from agentsdk_finance import CsvProvider
    from finance_data import between, read_rows, write_rows

    lo, hi = date(2007, 1, 1), date(2009, 12, 31)
    msft = between(read_rows(sample_files.msft_long), lo, hi)
    spx = between(read_rows(sample_files.spx), lo, hi)
    holey = [r for i, r in enumerate(spx) if i % 5 != 2]  # every fifth day missing
    write_rows(tmp_path / "MSFT.csv", msft)
    write_rows(tmp_path / "SPX.csv", holey)
    provider = CsvProvider(tmp_path)
    perf = performance(
        provider.history("MSFT", None, None), benchmark=provider.history("SPX", None, None)
    )
    m = {_day(r): float(r["close"]) for r in msft}
    s = {_day(r): float(r["close"]) for r in holey}
    days = sorted(set(m) & set(s))
    pairs = [
        (m[days[i]] / m[days[i - 1]] - 1, s[days[i]] / s[days[i - 1]] - 1)
        for i in range(1, len(days))
    ]
    beta, corr = _beta_corr(pairs)
    assert perf.benchmark_common_dates == len(days)
    assert perf.beta == pytest.approx(beta, abs=1e-6)
    assert perf.correlation == pytest.approx(corr, abs=1e-6)
    # pairing one-day MSFT returns with two-day SPX returns (returns before aligning)
    # gives a visibly different answer: the test above can tell the two apart
    md = sorted(m)
    m_ret = {md[i]: m[md[i]] / m[md[i - 1]] - 1 for i in range(1, len(md))}
    sd = sorted(s)
    s_ret = {sd[i]: s[sd[i]] / s[sd[i - 1]] - 1 for i in range(1, len(sd))}
    naive = [(m_ret[d], s_ret[d]) for d in sorted(set(m_ret) & set(s_ret))]
    assert abs(_beta_corr(naive)[1] - corr) > 0.05
    assert perf.benchmark_provenance is not None
    assert (
        perf.benchmark_provenance.symbol == "SPX" and "SPX.csv" in perf.benchmark_provenance.source
    )


def _day(row):
    return date.fromisoformat(row["date"][:10])


def test_a_benchmark_without_common_dates_is_an_error(sample: SampleDataProvider) -> None:
    from agentsdk_finance import MetricsError

    aapl = sample.history("AAPL", date(2005, 1, 1), date(2005, 12, 31))
    spx = sample.history("SPX", date(2015, 1, 1), date(2015, 12, 31))
    with pytest.raises(MetricsError, match="0 date"):
        performance(aapl, benchmark=spx)


def _last_touch_drawdown(series):
    """Peak = the last day at the running high before the trough (the fall's start)."""
    peak_value, peak_day = -math.inf, None
    worst, worst_peak, worst_trough = 0.0, series[0][0], series[0][0]
    for day, value in series:
        if value >= peak_value:
            peak_value, peak_day = value, day
        depth = value / peak_value - 1
        if depth < worst:
            worst, worst_peak, worst_trough = depth, peak_day, day
    return worst, worst_peak, worst_trough


def test_the_drawdown_peak_is_the_last_touch_of_the_high(tmp_path, sample_files) -> None:
    from agentsdk_finance import CsvProvider
    from finance_data import between, read_rows, write_rows

    # a real stretch of MSFT with its high repeated: the close of 2014-12-01 set to the
    # running high reached before it, so the high is touched twice before the fall
    rows = between(read_rows(sample_files.msft_long), date(2014, 9, 1), date(2015, 3, 31))
    series = [(_day(r), float(r["close"])) for r in rows]
    cut = next(i for i, (d, _) in enumerate(series) if d >= date(2014, 12, 1))
    high_before = max(v for _, v in series[:cut])
    rows[cut] = dict(rows[cut], close=str(high_before))
    series[cut] = (series[cut][0], high_before)
    write_rows(tmp_path / "MSFT.csv", rows)
    worst, peak, trough = _last_touch_drawdown(series)
    result = performance(CsvProvider(tmp_path).history("MSFT", None, None)).drawdown
    assert (result.peak_date, result.trough_date) == (peak, trough)
    assert result.max_drawdown == pytest.approx(worst, abs=1e-6)
    first_touch = next(d for d, v in series if v == max(v for d2, v in series if d2 <= trough))
    assert peak > first_touch  # the case where the two conventions differ


def test_a_series_that_never_falls() -> None:
    import pandas as pd
    from agentsdk_finance.metrics import max_drawdown

    days = pd.bdate_range("2024-01-01", periods=5)
    dd = max_drawdown(pd.Series([1.0, 2.0, 3.0, 4.0, 5.0], index=days))
    assert dd.max_drawdown == 0 and dd.peak_date == dd.trough_date == days[0].date()
    assert dd.recovery_date is None


def test_intraday_bars_are_not_annualised_with_a_guess(sample: SampleDataProvider) -> None:
    from agentsdk_finance import MetricsError, PriceHistory

    daily = sample.history("IBM", date(2012, 1, 1), date(2012, 3, 1))
    hourly = PriceHistory(
        symbol="IBM", interval="1h", frame=daily.frame, provenance=daily.provenance
    )
    with pytest.raises(MetricsError, match="annualised"):
        performance(hourly)
    with pytest.raises(MetricsError, match="not a number"):
        performance(daily, risk_free=float("nan"))
