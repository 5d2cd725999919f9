"""What counts as the work in the finance suite when a tool other than the obvious one
states the figure: the chart's caption (its window's max drawdown) and indicators asked
as of one day (start = end, values computed over warm-up bars).

Each task runs scripted: an answer copied from the real tool result passes; the same
answer after a call over the wrong window or as of the wrong day fails, and so does a
wrong figure, in the answer or in a tool result. Expected values are computed here with
pandas/numpy from the CSV files, not with the suite's or the toolkit's code.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from agentsdk.tasks import World, call, run_task
from agentsdk_finance.sampledata import bokeh_stocks_path
from agentsdk_finance.tasks import suite

from agentsdk import Message, RunResult, TextPart, ToolResultPart, Usage

WORK = "tool result over the right period"
CITES = "answer cites source, symbol and period"


@pytest.fixture(scope="module")
def finance_suite(sample_files):
    return suite()


def _msft_2000s(sample_files) -> pd.Series:
    frame = pd.read_csv(sample_files.msft_long, usecols=["date", "close"])
    series = pd.Series(frame["close"].to_numpy(float), index=frame["date"].str[:10])
    return series.sort_index().loc["2000-01-01":"2010-12-31"]  # type: ignore[misc]


def _bokeh(symbol: str, end: str) -> np.ndarray:
    frame = pd.read_csv(bokeh_stocks_path())
    frame = frame[(frame["Ticker"] == symbol) & (frame["Date"] <= end)].sort_values("Date")
    return frame["Adj Close"].to_numpy(float)


def _answer(text: str):
    return lambda world: text


def _failed(rollout) -> set[str]:
    return {c.name.partition(": ")[2] or c.name for c in rollout.verdict.failed}


def _chart_line(world: World, symbol: str) -> str:
    """The line of the last chart result about ``symbol``: what a model copies."""
    text = world.results_of("chart")[-1].text
    return next(ln for ln in text.splitlines() if ln.startswith(f"{symbol} 2") and "Source:" in ln)


# -- the chart ---------------------------------------------------------------------------


@pytest.mark.anyio
async def test_the_chart_caption_is_the_work_for_its_drawdown(
    finance_suite, sample_files, tmp_path: Path
) -> None:
    task = finance_suite.get("msft-chart-drawdown")
    closes = _msft_2000s(sample_files)
    depth = float((closes / closes.cummax() - 1).min())
    seen: list[str] = []

    def answer(world: World) -> str:
        line = _chart_line(world, "MSFT")
        seen.append(line)
        return f"Here is the chart. {line}"

    chart = call("chart", symbols="MSFT", start="2000", end="2010")
    run = await run_task(task, "reference", steps=[chart, answer], workdir=tmp_path / "ok")
    assert run.passed, run.verdict.reasons
    stated = float(re.search(r"max drawdown (-?\d+\.\d)%", seen[0]).group(1))
    assert abs(stated - depth * 100) <= 0.05  # the caption rounds the real drawdown
    assert f"{closes.index[0]}..{closes.index[-1]}" in seen[0]

    # a two-symbol chart states MSFT's line on the dates both have: the same window here
    both = call("chart", symbols="MSFT,SPX", start="2000", end="2010")
    run = await run_task(task, "reference", steps=[both, answer], workdir=tmp_path / "two")
    assert run.passed, run.verdict.reasons


@pytest.mark.anyio
async def test_a_chart_over_the_wrong_window_or_a_wrong_drawdown_fails(
    finance_suite, tmp_path: Path
) -> None:
    task = finance_suite.get("msft-chart-drawdown")
    right = await run_task(task, "reference", workdir=tmp_path / "ref")
    assert right.passed, right.verdict.reasons
    assert right.tool_calls == ["chart"]  # the chart alone is enough

    wider = call("chart", symbols="MSFT", start="2000", end="2011")
    run = await run_task(
        task, "reference", steps=[wider, _answer(right.output)], workdir=tmp_path / "w"
    )
    assert _failed(run) == {WORK, "MSFT chart saved as a PNG"}, run.verdict.reasons

    depth = re.search(r"max drawdown (-?\d+\.\d)%", right.output).group(1)
    wrong = right.output.replace(f"{depth}%", f"{float(depth) + 10:.1f}%")
    chart = call("chart", symbols="MSFT", start="2000", end="2010")
    run = await run_task(task, "reference", steps=[chart, _answer(wrong)], workdir=tmp_path / "f")
    assert _failed(run) == {"answer states the max drawdown"}, run.verdict.reasons


def _world(task, tmp_path: Path, tool: str, text: str) -> World:
    result = ToolResultPart(call_id="c1", name=tool, parts=[TextPart(text=text)])
    return World(
        task=task, toolkits={}, workdir=tmp_path, messages=[Message(role="tool", parts=[result])]
    )


def _check(task, name: str):
    return next(c for c in task.checks if c.name.endswith(name))


@pytest.mark.anyio
async def test_a_chart_caption_with_an_edited_drawdown_is_no_work(
    finance_suite, tmp_path: Path
) -> None:
    task = finance_suite.get("msft-chart-drawdown")
    captured: list[str] = []

    def keep(world: World) -> str:
        captured.append(world.results_of("chart")[-1].text)
        return "done"

    chart = call("chart", symbols="MSFT", start="2000", end="2010")
    await run_task(task, "reference", steps=[chart, keep], workdir=tmp_path / "r")
    real = captured[0]
    depth = float(re.search(r"max drawdown (-?\d+\.\d)%", real).group(1))
    work = _check(task, WORK)
    assert work.fn(_world(task, tmp_path, "chart", real))[0]
    for edited in (depth - 0.1, depth + 0.1, depth - 5):
        text = real.replace(f"max drawdown {depth}%", f"max drawdown {edited:.1f}%")
        ok, why = work.fn(_world(task, tmp_path, "chart", text))
        assert not ok and "over 2000-01-03..2010-12-31" in why, (edited, why)
    # the caption's numbers count only as the chart's: the same text from another tool is
    # not the work (the suite's injected task_status tool repeats tool outputs)
    assert not work.fn(_world(task, tmp_path, "task_status", real))[0]


# -- indicators as of a day ----------------------------------------------------------------


def _rsi(closes: np.ndarray, n: int = 14) -> float:
    """Wilder's RSI with simple-mean seeds, over every close given."""
    change = np.diff(closes)
    gain, loss = np.clip(change, 0, None), np.clip(-change, 0, None)
    up, down = gain[:n].mean(), loss[:n].mean()
    for g, lo in zip(gain[n:], loss[n:], strict=True):
        up, down = (up * (n - 1) + g) / n, (down * (n - 1) + lo) / n
    return float(100 - 100 / (1 + up / down))


def _snapshot(world: World) -> dict:
    return json.loads(world.results_of("indicators")[-1].text)


def _from_summary(world: World) -> str:
    """The answer a model writes: the result's summary line, then its cite line."""
    snap = _snapshot(world)
    return f"{snap['summary']}\nSource: {snap['cite']}"


@pytest.mark.anyio
async def test_indicators_as_of_the_asked_day_are_the_work(finance_suite, tmp_path: Path) -> None:
    rsi = _rsi(_bokeh("IBM", "2012-12-31"))
    aapl = _bokeh("AAPL", "2012-12-31")
    sma50, sma200 = aapl[-50:].mean(), aapl[-200:].mean()
    cases = [
        ("ibm-rsi", "IBM", {"start": "2012-12-31", "end": "2012-12-31"}),
        ("ibm-rsi", "IBM", {"start": "2012-06-01", "end": "2012-12-31"}),
        ("ibm-rsi", "IBM", {"start": "2013-01-01", "end": "2013-01-01"}),  # a holiday: 12-31
        ("aapl-moving-averages", "AAPL", {"start": "2012-12-31", "end": "2012-12-31"}),
    ]
    for i, (name, symbol, window) in enumerate(cases):
        task = finance_suite.get(name)
        snaps: list[dict] = []

        def answer(world: World, snaps: list[dict] = snaps) -> str:
            snaps.append(_snapshot(world))
            return _from_summary(world)

        steps = [call("indicators", symbol=symbol, **window), answer]
        run = await run_task(task, "reference", steps=steps, workdir=tmp_path / str(i))
        assert run.passed, (window, run.verdict.reasons)
        snap = snaps[0]
        assert snap["as_of"] == "2012-12-31" and snap["provenance"]["period"].endswith("2012-12-31")
        assert not snap["provenance"]["period"].startswith("2000-")  # not the all-data window
        if symbol == "IBM":
            assert abs(snap["rsi_14"] - rsi) <= 1e-3
        else:
            assert abs(snap["sma"]["50"] - sma50) <= 1e-3
            assert abs(snap["sma"]["200"] - sma200) <= 1e-3


@pytest.mark.anyio
async def test_indicators_as_of_another_day_or_a_wrong_value_fail(
    finance_suite, tmp_path: Path
) -> None:
    task = finance_suite.get("ibm-rsi")
    one_day = call("indicators", symbol="IBM", start="2012-12-31", end="2012-12-31")
    right: list[str] = []

    def keep(world: World) -> str:
        right.append(_from_summary(world))
        return right[0]

    assert (await run_task(task, "reference", steps=[one_day, keep], workdir=tmp_path / "a")).passed

    # as of the Friday before (2012-12-28), the right day's answer copied in
    friday = call("indicators", symbol="IBM", start="2012-12-28", end="2012-12-28")
    run = await run_task(
        task, "reference", steps=[friday, _answer(right[0])], workdir=tmp_path / "b"
    )
    assert _failed(run) == {WORK, CITES}, run.verdict.reasons
    reasons = " ".join(run.verdict.reasons)
    assert "as of 2012-12-31" in reasons

    # the right call, a wrong figure in the answer
    rsi = re.search(r"RSI 14 (\d+\.\d)", right[0]).group(1)
    wrong = right[0].replace(f"RSI 14 {rsi}", f"RSI 14 {float(rsi) + 1:.1f}")
    run = await run_task(task, "reference", steps=[one_day, _answer(wrong)], workdir=tmp_path / "c")
    assert _failed(run) == {"answer states the RSI 14"}, run.verdict.reasons

    # after the all-data call the one-day period is not what the tool stated: the toolkit
    # attaches the window it did state (grounded citations), and without that it fails
    full = call("indicators", symbol="IBM", end="2012")
    run = await run_task(task, "reference", steps=[full, _answer(right[0])], workdir=tmp_path / "d")
    assert run.passed, run.verdict.reasons
    assert "Sources: IBM, bokeh-sampledata" in run.output and "2000-03-01..2012-12-31" in run.output
    kept: list[str] = []
    steps = [full, lambda w: kept.append(w.results_of("indicators")[-1].text) or "done"]
    await run_task(task, "reference", steps=steps, workdir=tmp_path / "e")
    world = _world(task, tmp_path, "indicators", kept[0])
    world.result = RunResult(output=right[0], messages=[], usage=Usage())
    ok, why = _check(task, CITES).fn(world)
    assert not ok and "2000-03-01..2012-12-31" in why


@pytest.mark.anyio
async def test_an_indicators_result_with_an_edited_value_is_no_work(
    finance_suite, tmp_path: Path
) -> None:
    task = finance_suite.get("aapl-moving-averages")
    captured: list[str] = []

    def keep(world: World) -> str:
        captured.append(world.results_of("indicators")[-1].text)
        return "done"

    one_day = call("indicators", symbol="AAPL", start="2012-12-31", end="2012-12-31")
    await run_task(task, "reference", steps=[one_day, keep], workdir=tmp_path / "r")
    work = _check(task, WORK)
    real = json.loads(captured[0])
    assert work.fn(_world(task, tmp_path, "indicators", captured[0]))[0]
    edited = {**real, "sma": {**real["sma"], "200": real["sma"]["200"] + 0.01}}
    assert not work.fn(_world(task, tmp_path, "indicators", json.dumps(edited)))[0]
    moved = {**real, "as_of": "2012-12-28"}  # the window ends on the day, the values do not
    assert not work.fn(_world(task, tmp_path, "indicators", json.dumps(moved)))[0]
