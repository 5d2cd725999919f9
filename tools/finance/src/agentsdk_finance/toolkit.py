"""``FinanceToolkit``: market data, metrics, charts and cited reports as agent tools."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date
from pathlib import Path

from agentsdk import Image, Message, ToolContext, ToolError, Toolkit, tool
from agentsdk_finance import charts
from agentsdk_finance.cache import CachedMarketData, PriceCache
from agentsdk_finance.citations import cite_answer
from agentsdk_finance.errors import MarketDataError
from agentsdk_finance.indicators import IndicatorSnapshot, indicator_snapshot
from agentsdk_finance.metrics import Performance, performance
from agentsdk_finance.models import PriceHistory
from agentsdk_finance.providers.base import MarketData, listing, parse_day
from agentsdk_finance.providers.sample import SampleDataProvider
from agentsdk_finance.providers.yahoo import YFinanceProvider
from agentsdk_finance.report import ReportResult, write_report
from agentsdk_finance.summaries import (
    Comparison,
    FundamentalsView,
    PriceSummary,
    align_histories,
    chart_line,
    compare_rows,
    summarise_prices,
    view_fundamentals,
)
from agentsdk_finance.warmup import with_warmup

_HINTS = {
    "invalid_symbol": "Check the ticker spelling.",
    "no_data": "Pick dates inside the range the data covers.",
    "invalid_params": "Fix the argument and call again.",
    "rate_limited": "The data source is rate limiting; wait and try again.",
    "network": "The data source is unreachable; try again later.",
    "bad_data": "The data itself is faulty: tell the user which rows, do not guess numbers.",
}
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9.^_-]+")


def _day(value: str, what: str, *, is_end: bool) -> date | None:
    """'' -> None, '2013' -> Jan 1 / Dec 31, '2013-06' -> its first/last day, 'YYYY-MM-DD'."""
    return parse_day(value or "", what, is_end=is_end)


def _bad_rows_error(err: MarketDataError) -> str:
    """The ``bad_data`` error a model sees: what is faulty, that no figure can be given, and
    the bad rows *last*. A small model quotes a result's last sentence as its answer: with
    the instruction last, the 1.5B model answered finance/damaged-file with the instruction
    ("tell the user which rows, do not guess numbers") instead of the rows."""
    where = err.where or "the data"
    return (
        f"bad_data: {where} holds faulty rows, so no figure can be given and no other call "
        f"will give one. Tell the user which rows are bad: {err.rows}."
    )


def _symbols(text: str) -> list[str]:
    names = [s.strip().upper() for s in re.split(r"[,\s;]+", text or "") if s.strip()]
    if not names:
        raise ToolError("Give at least one ticker, e.g. 'AAPL,MSFT'.")
    return list(dict.fromkeys(names))


def _one_symbol(symbol: str) -> str:
    """The one ticker a single-ticker tool was given, or an error that points to compare."""
    several = _symbols(symbol) if re.search(r"[,;\s]", symbol.strip()) else []
    if len(several) > 1:
        # The 1.5B model sent "AAPL,MSFT,IBM,GOOG" to performance (finance/rank-four), was
        # told to check the spelling, and gave up.
        listed = ",".join(several)
        raise ToolError(
            f"invalid_symbol: {symbol!r} is {len(several)} tickers; this tool takes one. "
            f'compare(symbols="{listed}", start=..., end=...) puts several side by side; '
            "or call this tool once per ticker."
        )
    return symbol.strip().upper()


class FinanceToolkit(Toolkit):
    """Price history, performance, indicators, comparisons, fundamentals, charts, reports.

    Args:
        provider: where data comes from; default: the offline ``SampleDataProvider``.
        cache: a ``PriceCache``; True for the default one in the user cache dir, False
            for none; None (default) caches live providers (yfinance) only.
        output_dir: where ``research_report`` (and ``chart``) write. None (default):
            the run's artifacts folder (``ctx.artifacts.dir``, the task's workdir in
            evals), or ``./finance-reports`` when a tool is called without a run.
        prefix: optional tool-name prefix.
    """

    name = "finance"
    instructions = (
        "You are a careful financial analyst with market-data tools.\n"
        "Step 1: call the tool(s) the question needs; your first reply is a tool call. Take "
        "every number from a tool result; never compute or guess one.\n"
        "Step 2: only after the results are in, answer. Begin with the summary line of each "
        "result you used (it names symbol, period and source), then answer the question, "
        "percentages to one decimal with a % sign.\n"
        "If a tool says the data is bad, name the bad rows and give no figure."
    )

    def __init__(
        self,
        provider: MarketData | None = None,
        *,
        cache: PriceCache | bool | None = None,
        output_dir: str | Path | None = None,
        prefix: str | None = None,
    ) -> None:
        super().__init__(prefix=prefix)
        base: MarketData = provider if provider is not None else SampleDataProvider()
        if cache is None:
            cache = isinstance(base, YFinanceProvider)
        if cache is True:
            cache = PriceCache()
        self.provider: MarketData = CachedMarketData(base, cache) if cache else base
        self.output_dir: Path | None = Path(output_dir) if output_dir else None

    async def reset(self) -> None:
        """Nothing to reset: the toolkit keeps no world state between calls (files a run
        wrote live in that run's artifacts folder; the price cache is keyed by content)."""

    def on_answer(self, answer: str, messages: Sequence[Message]) -> str:
        """Attach the ``cite`` line of every result of these tools whose figures the
        answer states (grounded citations: models paraphrase provenance away)."""
        return cite_answer(answer, messages, [t.name for t in self.tools()])

    def _out_dir(self, ctx: ToolContext | None) -> Path:
        if self.output_dir is not None:
            return self.output_dir
        return ctx.artifacts.dir if ctx is not None else Path("finance-reports")

    # -- data access -------------------------------------------------------------

    def _history(self, symbol: str, start: str, end: str, interval: str = "1d") -> PriceHistory:
        try:
            return self.provider.history(
                _one_symbol(symbol),
                _day(start, "start", is_end=False),
                _day(end, "end", is_end=True),
                interval,
            )
        except MarketDataError as err:
            raise self._tool_error(err) from err

    def _tool_error(self, err: MarketDataError) -> ToolError:
        known = ""
        if err.kind == "invalid_symbol" and "available" not in err.reason:
            names = self.provider.symbols()
            known = f" Available: {listing(names)}." if names else ""
        if err.kind == "bad_data" and err.rows:
            return ToolError(_bad_rows_error(err))
        return ToolError(f"{err.kind}: {err.reason}. {_HINTS[err.kind]}{known}")

    def _figures(
        self, history: PriceHistory, bench: PriceHistory | None, risk_free_rate: float
    ) -> Performance:
        try:
            return performance(history, risk_free=risk_free_rate, benchmark=bench)
        except ValueError as exc:
            hint = (
                "Pick a benchmark that covers the same dates, or leave benchmark empty."
                if bench is not None and "common" in str(exc)
                else "Use a longer range."
            )
            raise ToolError(f"no_data: {exc}. {hint}") from exc

    def _performance(
        self, symbol: str, start: str, end: str, benchmark: str, risk_free_rate: float
    ) -> Performance:
        if not -0.5 < risk_free_rate < 1:
            raise ToolError("risk_free_rate is an annual fraction, e.g. 0.02 for 2%.")
        history = self._history(symbol, start, end)
        bench = self._history(benchmark, start, end) if benchmark.strip() else None
        return self._figures(history, bench, risk_free_rate)

    # -- tools ---------------------------------------------------------------------

    @tool
    def price_history(
        self, symbol: str, start: str = "", end: str = "", interval: str = "1d"
    ) -> PriceSummary:
        """Summarise a stock's prices: first, last, high, low, change, yearly closes.

        Args:
            symbol: ticker, e.g. AAPL.
            start: first day YYYY-MM-DD or a year; empty for all data.
            end: last day YYYY-MM-DD or a year; empty for all data.
            interval: 1d, 1wk or 1mo.
        """
        return summarise_prices(self._history(symbol, start, end, interval))

    @tool
    def performance(
        self,
        symbol: str,
        start: str = "",
        end: str = "",
        benchmark: str = "",
        risk_free_rate: float = 0.0,
    ) -> Performance:
        """Return and risk: total return, CAGR, volatility, max drawdown, Sharpe, Sortino, beta.

        Args:
            symbol: ticker, e.g. MSFT.
            start: first day YYYY-MM-DD or a year; empty for all data.
            end: last day YYYY-MM-DD or a year; empty for all data.
            benchmark: ticker for beta and correlation, e.g. SPX; empty for none.
            risk_free_rate: annual risk-free rate as a fraction, e.g. 0.02.
        """
        return self._performance(symbol, start, end, benchmark, risk_free_rate)

    @tool
    def indicators(self, symbol: str, start: str = "", end: str = "") -> IndicatorSnapshot:
        """SMA 50/200, EMA 12/26, RSI 14, MACD, Bollinger bands as of end, with signals.

        Args:
            symbol: ticker, e.g. IBM.
            start: first day YYYY-MM-DD or a year (earlier bars are loaded for the
                look-backs); empty for all data.
            end: the as-of day YYYY-MM-DD or a year; empty for all data.
        """
        try:
            warm = with_warmup(
                self.provider,
                _one_symbol(symbol),
                _day(start, "start", is_end=False),
                _day(end, "end", is_end=True),
            )
        except MarketDataError as err:
            raise self._tool_error(err) from err
        return indicator_snapshot(warm.history, warmup=warm.warmup)

    @tool
    def compare(self, symbols: str, start: str = "", end: str = "") -> Comparison:
        """Compare several tickers over their common dates: returns, risk, growth of 100.

        Args:
            symbols: comma-separated tickers, e.g. AAPL,MSFT,IBM.
            start: first day YYYY-MM-DD or a year; empty for all data.
            end: last day YYYY-MM-DD or a year; empty for all data.
        """
        histories, note = self._common(_symbols(symbols), start, end)
        return compare_rows([self._figures(h, None, 0.0) for h in histories], note)

    def _common(self, names: list[str], start: str, end: str) -> tuple[list[PriceHistory], str]:
        """The histories on the dates all of them have (prices aligned, not just the span)."""
        try:
            return align_histories([self._history(s, start, end) for s in names])
        except ValueError as exc:
            raise ToolError(f"no_data: {exc}. Compare tickers whose dates overlap.") from exc

    @tool
    def fundamentals(self, symbol: str) -> FundamentalsView:
        """Income statement, balance sheet, cash flow and ratios (margins, ROE, debt/equity).

        Args:
            symbol: ticker, e.g. AAPL.
        """
        try:
            data = self.provider.fundamentals(symbol.strip().upper())
        except MarketDataError as err:
            raise self._tool_error(err) from err
        return view_fundamentals(data)

    @tool
    def chart(
        self, symbols: str, start: str = "", end: str = "", ctx: ToolContext | None = None
    ) -> list[str | Image]:
        """Draw a PNG chart: one ticker with moving averages and drawdown, or several rebased to 100.

        Args:
            symbols: one ticker, or comma-separated tickers to compare.
            start: first day YYYY-MM-DD or a year; empty for all data.
            end: last day YYYY-MM-DD or a year; empty for all data.
        """
        names = _symbols(symbols)
        if len(names) == 1:
            histories = [self._history(names[0], start, end)]
            png = charts.price_chart(histories[0])
            title = f"{names[0]} price with SMA 50/200 and drawdown"
        else:
            histories, _ = self._common(names, start, end)
            png = charts.comparison_chart(histories)
            title = f"{', '.join(names)} rebased to 100 on {histories[0].start}, log scale"
        # the figures the picture shows, in words: a model without vision reads them here
        caption = "\n".join([f"{title}:", *(chart_line(h) for h in histories)])
        image = Image(data=png, media_type="image/png")
        filename = f"chart-{_safe_name(names)}.png"
        if self.output_dir is not None:
            self.output_dir.mkdir(parents=True, exist_ok=True)
            saved = self.output_dir / filename
            saved.write_bytes(png)
            caption += f"\nSaved: {saved}"
        elif ctx is not None:
            caption += f"\nSaved: {ctx.artifacts.save_bytes(filename, png)}"
        return [caption, image]

    @tool
    def research_report(
        self,
        symbols: str,
        start: str = "",
        end: str = "",
        benchmark: str = "",
        risk_free_rate: float = 0.0,
        ctx: ToolContext | None = None,
    ) -> ReportResult:
        """Write a Markdown research report with charts and cited sources; returns its path.

        Args:
            symbols: comma-separated tickers, e.g. AAPL,MSFT,IBM.
            start: first day YYYY-MM-DD or a year; empty for all data.
            end: last day YYYY-MM-DD or a year; empty for all data.
            benchmark: ticker for beta, e.g. SPX; empty for none.
            risk_free_rate: annual risk-free rate as a fraction, e.g. 0.02.
        """
        names = _symbols(symbols)
        if not -0.5 < risk_free_rate < 1:
            raise ToolError("risk_free_rate is an annual fraction, e.g. 0.02 for 2%.")
        if len(names) > 1:
            histories, _ = self._common(names, start, end)
        else:
            histories = [self._history(names[0], start, end)]
        first, last = histories[0].start.isoformat(), histories[0].end.isoformat()
        bench = self._history(benchmark, first, last) if benchmark.strip() else None
        perfs = [self._figures(h, bench, risk_free_rate) for h in histories]
        snaps = [indicator_snapshot(h) for h in histories if len(h.frame) >= 30]
        funds: list[FundamentalsView] = []
        for name in names:
            try:
                funds.append(view_fundamentals(self.provider.fundamentals(name)))
            except MarketDataError:
                continue  # fundamentals are optional in a report
        folder = self._out_dir(ctx) / f"finance-report-{_safe_name(names)}"  # one per question
        return write_report(folder, histories, perfs, snaps, funds)


def _safe_name(names: list[str]) -> str:
    """Tickers as a file-name part: nothing that could leave the output folder."""
    joined = "-".join(names).lower()
    return _UNSAFE_NAME.sub("_", joined).strip("._") or "symbols"
