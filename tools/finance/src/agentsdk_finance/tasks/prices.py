"""Tasks on prices: returns, risk, drawdowns, indicators, comparisons, intervals.

Every expected value is recomputed from the sample files by ``checks`` (csv module and
plain Python), never by the toolkit's code.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date

from agentsdk.tasks import Check, CheckValue, Task, World, call

from agentsdk_finance.tasks import checks as tc
from agentsdk_finance.tasks.kit import (
    Figure,
    Subject,
    aligned_subjects,
    drawdown_figures,
    figure_task,
    total_return_figure,
)

D = date
PERF = ("performance",)


def _best_and_worst(world: World) -> str:
    last = tc.payloads(world, "compare")[-1]
    return f"best: {last['best']}; worst: {last['worst']}"


def price_tasks() -> list[Task]:
    """The price tasks."""
    ibm = Subject(
        "IBM",
        D(2005, 1, 1),
        D(2010, 12, 31),
        (total_return_figure("IBM", D(2005, 1, 1), D(2010, 12, 31)),),
    )
    msft_dd = Subject("MSFT", None, None, drawdown_figures("MSFT", None, None))
    aapl = Subject(
        "AAPL",
        None,
        None,
        (Figure("CAGR", {"performance": "cagr"}, lambda: tc.cagr(tc.sample_series("AAPL"))),),
    )
    spx08 = Subject(
        "SPX",
        D(2008, 1, 1),
        D(2008, 12, 31),
        (
            Figure(
                "volatility",
                {"performance": "volatility"},
                lambda: tc.volatility(
                    tc.window(tc.sample_series("SPX"), D(2008, 1, 1), D(2008, 12, 31))
                ),
            ),
        ),
    )
    lo10, hi19 = D(2010, 1, 1), D(2019, 12, 31)

    def beta() -> tuple[float, float, int]:
        return tc.beta_corr(
            tc.window(tc.sample_series("MSFT"), lo10, hi19),
            tc.window(tc.sample_series("SPX"), lo10, hi19),
        )

    msft_beta = Subject(
        "MSFT",
        lo10,
        hi19,
        (
            Figure(
                "beta", {"performance": "beta"}, lambda: beta()[0], tolerance=0.01, percent=False
            ),
            Figure(
                "correlation",
                {"performance": "correlation"},
                lambda: beta()[1],
                tolerance=0.01,
                percent=False,
            ),
        ),
    )

    def spx_cited(world: World) -> CheckValue:
        span = tc.period(tc.window(tc.sample_series("SPX"), lo10, hi19))
        return tc.cites(world.answer, "SPX", span, tc.source_tokens("SPX"))

    goog = Subject(
        "GOOG",
        D(2010, 1, 1),
        D(2010, 12, 31),
        (
            Figure(
                "last adjusted close",
                {"price_history": "last.close"},
                lambda: tc.window(tc.sample_series("GOOG"), D(2010, 1, 1), D(2010, 12, 31))[-1][1],
                tolerance=0.01,
                percent=False,
            ),
        ),
    )
    ibm_rsi = Subject(
        "IBM",
        None,
        D(2012, 12, 31),
        (
            Figure(
                "RSI 14",
                {"indicators": "rsi_14"},
                lambda: tc.wilder_rsi(tc.window(tc.sample_series("IBM"), None, D(2012, 12, 31))),
                tolerance=0.1,
                percent=False,
                digits=1,
            ),
        ),
    )

    def sma(n: int) -> Callable[[], float]:
        def value() -> float:
            closes = [v for _, v in tc.window(tc.sample_series("AAPL"), None, D(2012, 12, 31))]
            return sum(closes[-n:]) / n

        return value

    aapl_sma = Subject(
        "AAPL",
        None,
        D(2012, 12, 31),
        (
            Figure("SMA 50", {"indicators": "sma.50"}, sma(50), tolerance=0.01, percent=False),
            Figure("SMA 200", {"indicators": "sma.200"}, sma(200), tolerance=0.01, percent=False),
        ),
    )
    lo05, hi12 = D(2005, 1, 1), D(2012, 12, 31)
    compare_two = aligned_subjects(("AAPL", "IBM"), lo05, hi12)
    compare_four = aligned_subjects(("AAPL", "MSFT", "IBM", "GOOG"), lo05, hi12)

    def ranked(world: World) -> CheckValue:
        totals = {s.symbol: float(s.figures[0].expected()) for s in compare_four}
        best = max(totals, key=totals.__getitem__)
        worst = min(totals, key=totals.__getitem__)
        named = (tc.named(world.answer, "best"), tc.named(world.answer, "worst"))
        return named == ([best], [worst]), f"expected 'best: {best}' and 'worst: {worst}' once each"

    def higher(world: World) -> CheckValue:
        a, b = (float(s.figures[0].expected()) for s in compare_two)
        winner = "AAPL" if a > b else "IBM"
        return tc.named(world.answer, "higher") == [winner], f"expected 'higher: {winner}' once"

    ibm_sharpe = Subject(
        "IBM",
        D(2003, 1, 1),
        hi12,
        (
            Figure(
                "Sharpe ratio",
                {"performance": "sharpe"},
                lambda: tc.sharpe(tc.window(tc.sample_series("IBM"), D(2003, 1, 1), hi12), 0.02),
                tolerance=0.01,
                percent=False,
            ),
        ),
    )
    spx20 = Subject(
        "SPX",
        D(2020, 1, 1),
        D(2020, 12, 31),
        (
            Figure(
                "lowest month-end close",
                {"price_history": "low.close"},
                lambda: min(
                    v
                    for _, v in tc.last_of_each_month(
                        tc.window(tc.sample_series("SPX"), D(2020, 1, 1), D(2020, 12, 31))
                    )
                ),
                tolerance=0.01,
                percent=False,
            ),
            Figure(
                "date of that month-end",
                {"price_history": "low.date"},
                lambda: str(
                    min(
                        tc.last_of_each_month(
                            tc.window(tc.sample_series("SPX"), D(2020, 1, 1), D(2020, 12, 31))
                        ),
                        key=lambda p: p[1],
                    )[0]
                ),
            ),
        ),
        series=lambda: tc.last_of_each_month(tc.sample_series("SPX")),
    )
    return [
        figure_task(
            "ibm-total-return",
            "What was IBM's total return from 2005 to 2010? Call the performance tool with "
            "symbol IBM, start 2005, end 2010, then answer with the total return in percent "
            "and start the answer with the tool's summary line.",
            (ibm,),
            [call("performance", symbol="IBM", start="2005", end="2010")],
            tools=("performance", "price_history"),
            tags=("one-tool", "small-model"),
            description="One performance call: IBM's 2005-2010 total return (bokeh adjusted).",
        ),
        figure_task(
            "msft-max-drawdown",
            "What was Microsoft's (MSFT) maximum drawdown over all the data, and on which "
            "dates were the peak and the trough? Call the performance tool with symbol MSFT "
            "and leave start and end empty (all the data).",
            (msft_dd,),
            [call("performance", symbol="MSFT")],
            tools=("performance", "price_history"),
            tags=("one-tool", "small-model"),
            description="Max drawdown of MSFT 1990-2022 with last-touch peak and trough dates.",
        ),
        figure_task(
            "aapl-cagr",
            "What was Apple's (AAPL) compound annual growth rate over all the available "
            "data? Cite the source, symbol and period.",
            (aapl,),
            [call("performance", symbol="AAPL")],
            tools=PERF,
            tags=("one-tool",),
            description="CAGR with the calendar-day/365.25 convention.",
        ),
        figure_task(
            "spx-volatility-2008",
            "How volatile was the S&P 500 (SPX) in 2008? Give its annualised volatility "
            "from the performance tool (symbol SPX, start 2008, end 2008, no benchmark) and "
            "start the answer with its summary line.",
            (spx08,),
            [call("performance", symbol="SPX", start="2008", end="2008")],
            tools=PERF,
            tags=("one-tool", "small-model"),
            description="Annualised sample volatility (252 days) of SPX in 2008.",
        ),
        figure_task(
            "msft-beta-spx",
            "What were MSFT's beta and correlation against the S&P 500 (SPX) from 2010 to "
            "2019? Give both to two decimals and cite the sources of MSFT and SPX.",
            (msft_beta,),
            [call("performance", symbol="MSFT", start="2010", end="2019", benchmark="SPX")],
            tools=PERF,
            tags=("one-tool", "benchmark"),
            description="Beta/correlation on prices aligned on common dates; both sources cited.",
            extra=(Check("SPX: answer cites the benchmark", spx_cited),),
        ),
        figure_task(
            "goog-year-end-close",
            "What was Google's (GOOG) last adjusted close of 2010? Use price_history with "
            "symbol GOOG, start 2010, end 2010 and start the answer with its summary line.",
            (goog,),
            [call("price_history", symbol="GOOG", start="2010", end="2010")],
            tools=("price_history",),
            tags=("one-tool", "small-model"),
            description="The last bar of a price_history summary.",
        ),
        figure_task(
            "ibm-rsi",
            "What was IBM's 14-day RSI on the last trading day of 2012? Use the indicators "
            "tool with end 2012 and cite the source.",
            (ibm_rsi,),
            [call("indicators", symbol="IBM", end="2012")],
            tools=("indicators",),
            tags=("one-tool", "indicators"),
            description="Wilder's RSI (simple-mean seed) recomputed with a plain loop.",
        ),
        figure_task(
            "aapl-moving-averages",
            "Give AAPL's 50-day and 200-day simple moving averages as of the end of 2012 "
            "(indicators tool, end 2012), and cite the source.",
            (aapl_sma,),
            [call("indicators", symbol="AAPL", end="2012")],
            tools=("indicators",),
            tags=("one-tool", "indicators"),
            description="SMA 50 and SMA 200 of adjusted closes up to 2012-12-31.",
        ),
        figure_task(
            "compare-aapl-ibm",
            "Which had the higher total return from 2005 to 2012, AAPL or IBM? Compare them "
            "over their common dates, give both returns, cite each source, and write "
            "'higher: <ticker>'.",
            compare_two,
            [call("compare", symbols="AAPL,IBM", start="2005", end="2012")],
            tools=("compare",),
            tags=("multi-symbol",),
            description="compare over common dates; both figures and citations, and the winner.",
            closing=lambda w: f"higher: {tc.payloads(w, 'compare')[-1]['best']}",
            extra=(Check("answer names the higher one", higher),),
        ),
        figure_task(
            "rank-four",
            "Rank AAPL, MSFT, IBM and GOOG by total return from 2005 to 2012 over their "
            "common dates. Give each return with its citation and write 'best: <ticker>' and "
            "'worst: <ticker>'.",
            compare_four,
            [call("compare", symbols="AAPL,MSFT,IBM,GOOG", start="2005", end="2012")],
            tools=("compare",),
            tags=("multi-symbol",),
            description="Four symbols aligned on common dates; best and worst named.",
            closing=_best_and_worst,
            extra=(Check("answer names best and worst", ranked),),
        ),
        figure_task(
            "ibm-sharpe",
            "What was IBM's Sharpe ratio from 2003 to 2012 with a 2% annual risk-free rate? "
            "Give it to two decimals and cite the source.",
            (ibm_sharpe,),
            [call("performance", symbol="IBM", start="2003", end="2012", risk_free_rate=0.02)],
            tools=PERF,
            tags=("one-tool",),
            description="Sharpe with a geometric per-day risk-free rate.",
        ),
        figure_task(
            "spx-monthly-low",
            "Using monthly bars (price_history with interval 1mo) of SPX for 2020, which "
            "month-end close was the lowest, on what date, and what was it? Cite the source.",
            (spx20,),
            [call("price_history", symbol="SPX", start="2020", end="2020", interval="1mo")],
            tools=("price_history",),
            tags=("one-tool", "intervals"),
            description="Monthly bars labelled with the last real trading day.",
        ),
    ]
