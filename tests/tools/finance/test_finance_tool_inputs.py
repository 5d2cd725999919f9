"""The tools as the model calls them, on user data that is damaged, oddly named or
awkwardly shaped (all derived from the real MSFT/SPX files)."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from agentsdk.artifacts import ArtifactStore
from agentsdk_finance import CsvProvider, FinanceToolkit
from agentsdk_finance.sampledata import SampleDataFiles
from finance_data import between, read_rows, write_rows

from agentsdk import ToolContext

LO, HI = date(2010, 1, 1), date(2012, 12, 31)


def _tools(provider) -> dict:
    return {t.name: t for t in FinanceToolkit(provider).tools()}


def _ctx(folder: Path, name: str = "tool") -> ToolContext:
    return ToolContext(
        run_id="r", call_id="c", tool_name=name, turn=1, artifacts=ArtifactStore(folder)
    )


@pytest.fixture
def quotes(tmp_path: Path, sample_files: SampleDataFiles) -> Path:
    folder = tmp_path / "quotes"
    folder.mkdir()
    write_rows(folder / "MSFT.csv", between(read_rows(sample_files.msft_long), LO, HI))
    write_rows(folder / "SPX.csv", between(read_rows(sample_files.spx), LO, HI))
    return folder


@pytest.mark.anyio
async def test_bad_bars_reach_the_model_as_a_named_error_never_a_number(quotes: Path) -> None:
    rows = read_rows(quotes / "MSFT.csv")
    rows[100]["close"] = "0"
    write_rows(quotes / "MSFT.csv", rows)
    tools = _tools(CsvProvider(quotes))
    for name in ("performance", "price_history", "compare"):
        key = "symbols" if name == "compare" else "symbol"
        out = await tools[name].call({key: "MSFT"})
        assert out.is_error and out.text.startswith("bad_data:"), out.text
        assert "line 102" in out.text and "inf" not in out.text and "%" not in out.text
        # the rows come last: a small model quotes a result's last sentence as its answer
        assert out.text.rstrip(".").endswith("close 0") and "no figure" in out.text
    dropped = _tools(CsvProvider(quotes, bad_bars="drop"))
    data = json.loads((await dropped["performance"].call({"symbol": "MSFT"})).text)
    assert "dropped 1 bad bar(s): line 102" in data["provenance"]["note"]
    assert data["bars"] == len(rows) - 1


@pytest.mark.anyio
async def test_a_symbol_path_mapping_keeps_citations_short(quotes: Path) -> None:
    # 60 symbols mapped to files: the citation names one file, not the whole mapping
    mapping = {f"S{i:02d}": quotes / "MSFT.csv" for i in range(60)}
    mapping["SPX"] = quotes / "SPX.csv"
    tools = _tools(CsvProvider(mapping))
    out = await tools["performance"].call({"symbol": "S07", "benchmark": "SPX"})
    data = json.loads(out.text)
    assert data["provenance"]["source"] == f"csv ({quotes / 'MSFT.csv'})"
    assert data["benchmark_provenance"]["source"] == f"csv ({quotes / 'SPX.csv'})"
    assert len(out.text) < 2500
    missing = await tools["price_history"].call({"symbol": "NOPE"})
    assert missing.is_error and "and 41 more" in missing.text and len(missing.text) < 600


@pytest.mark.anyio
async def test_a_benchmark_with_no_common_dates_is_an_error_with_a_fix(
    quotes: Path, sample_files: SampleDataFiles
) -> None:
    write_rows(
        quotes / "OLD.csv",
        between(read_rows(sample_files.spx), date(1995, 1, 1), date(1995, 12, 31)),
    )
    tools = _tools(CsvProvider(quotes))
    out = await tools["performance"].call({"symbol": "MSFT", "benchmark": "OLD"})
    assert out.is_error and "0 date(s) in common" in out.text
    assert "benchmark that covers the same dates" in out.text


@pytest.mark.anyio
async def test_compare_uses_only_the_dates_every_symbol_has(quotes: Path) -> None:
    spx = read_rows(quotes / "SPX.csv")
    gone = {r["date"][:10] for r in (spx[0], spx[1], spx[300])}  # first two and one inside
    write_rows(quotes / "SPX.csv", [r for r in spx if r["date"][:10] not in gone])
    tools = _tools(CsvProvider(quotes))
    data = json.loads((await tools["compare"].call({"symbols": "MSFT,SPX"})).text)
    msft = [r for r in read_rows(quotes / "MSFT.csv") if r["date"][:10] not in gone]
    row = next(r for r in data["rows"] if r["symbol"] == "MSFT")
    expected = float(msft[-1]["close"]) / float(msft[0]["close"]) - 1
    assert row["total_return"] == pytest.approx(expected, abs=1e-4)
    assert data["common_dates"] == len(msft)
    assert "MSFT 3" in data["note"]
    assert row["provenance"]["period"].startswith(msft[0]["date"][:10])


@pytest.mark.anyio
async def test_output_goes_to_the_run_folder_unless_one_is_configured(
    quotes: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "run"
    tools = _tools(CsvProvider(quotes))
    out = json.loads((await tools["research_report"].call({"symbols": "MSFT"}, ctx=_ctx(run))).text)
    assert Path(out["report_path"]).parent.parent == run
    mine = tmp_path / "mine"
    configured = {t.name: t for t in FinanceToolkit(CsvProvider(quotes), output_dir=mine).tools()}
    out = json.loads(
        (await configured["research_report"].call({"symbols": "MSFT"}, ctx=_ctx(run))).text
    )
    assert Path(out["report_path"]).parent.parent == mine
    chart = await configured["chart"].call({"symbols": "MSFT"}, ctx=_ctx(run))
    assert (mine / "chart-msft.png").stat().st_size > 10_000 and str(mine) in chart.text
    monkeypatch.chdir(tmp_path)
    out = json.loads((await tools["research_report"].call({"symbols": "SPX"})).text)
    assert Path(out["report_path"]).resolve().parent.parent == tmp_path / "finance-reports"


@pytest.mark.anyio
async def test_odd_symbols_cannot_steer_the_report_folder(quotes: Path, tmp_path: Path) -> None:
    provider = CsvProvider({"../../EVIL": quotes / "MSFT.csv", "BRK.B": quotes / "SPX.csv"})
    tools = _tools(provider)
    run = tmp_path / "run"
    out = await tools["research_report"].call({"symbols": "../../EVIL"}, ctx=_ctx(run))
    report = Path(json.loads(out.text)["report_path"]).resolve()
    assert report.is_relative_to(run.resolve())
    dotted = json.loads(
        (await tools["research_report"].call({"symbols": "brk.b"}, ctx=_ctx(run))).text
    )
    assert Path(dotted["report_path"]).parent.name == "finance-report-brk.b"


@pytest.mark.anyio
async def test_reset_keeps_the_toolkit_usable(quotes: Path) -> None:
    toolkit = FinanceToolkit(CsvProvider(quotes))
    async with toolkit:
        await toolkit.reset()
        tool = next(t for t in toolkit.tools() if t.name == "price_history")
        assert not (await tool.call({"symbol": "MSFT"})).is_error


@pytest.mark.anyio
async def test_several_tickers_given_to_a_one_ticker_tool_point_to_compare(quotes: Path) -> None:
    # finance/rank-four, 1.5B model: performance(symbol="AAPL,MSFT,IBM,GOOG") was answered
    # "Check the ticker spelling", and the run gave up.
    tools = _tools(CsvProvider(quotes))
    for name in ("performance", "price_history", "indicators"):
        out = await tools[name].call({"symbol": "MSFT, SPX"})
        assert out.is_error, out.text
        assert out.text.startswith("invalid_symbol: 'MSFT, SPX' is 2 tickers; this tool takes one.")
        assert 'compare(symbols="MSFT,SPX", start=..., end=...)' in out.text
    # What it points to works on the same tickers; one ticker still goes through.
    assert not (await tools["compare"].call({"symbols": "MSFT,SPX"})).is_error
    assert not (await tools["performance"].call({"symbol": " msft "})).is_error
