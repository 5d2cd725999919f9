"""``CsvProvider``: OHLCV from CSV files or a folder of ``<SYMBOL>.csv`` files."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pandas as pd

from agentsdk_finance.errors import MarketDataError
from agentsdk_finance.models import Fundamentals, PriceHistory, Provenance
from agentsdk_finance.providers.base import (
    DAILY_RESAMPLE_RULES,
    check_request,
    normalise_ohlcv,
    slice_daily,
)


class CsvProvider:
    """Daily OHLCV from local CSV files, for offline use and a user's own data.

    Each file needs a ``date`` column and a ``close`` column; ``open high low volume``
    and ``adj close`` are used when present. A ``ticker``/``symbol`` column lets one
    file hold several symbols.

    Args:
        paths: a folder of ``SYMBOL.csv`` (or ``.csv.gz``) files, a single file, or a
            mapping of symbol to file.
        currency: currency of the prices.
        adjusted: whether ``close`` is already split/dividend adjusted (an
            ``adj close`` column is always treated as adjusted).
        source: label used in provenance.
    """

    name = "csv"
    intervals: tuple[str, ...] = tuple(DAILY_RESAMPLE_RULES)

    def __init__(
        self,
        paths: str | Path | dict[str, str | Path],
        *,
        currency: str = "USD",
        adjusted: bool = False,
        source: str | None = None,
    ) -> None:
        self.currency = currency
        self.adjusted = adjusted
        self._files: dict[str, Path] = {}
        self._multi: Path | None = None
        if isinstance(paths, dict):
            self._files = {k.upper(): Path(v) for k, v in paths.items()}
        else:
            root = Path(paths)
            if root.is_dir():
                for f in sorted(root.iterdir()):
                    if f.name.lower().endswith((".csv", ".csv.gz")):
                        self._files[f.name.split(".")[0].upper()] = f
            elif root.is_file():
                self._multi = root
            else:
                raise FileNotFoundError(f"no CSV file or folder at {root}")
        self.source = source or f"csv {paths}"
        self._frames: dict[str, pd.DataFrame] = {}

    def symbols(self) -> list[str]:
        """Symbols available from the configured files."""
        if self._multi is not None:
            return sorted(self._load_multi())
        return sorted(self._files)

    def _load_multi(self) -> dict[str, pd.DataFrame]:
        if not self._frames and self._multi is not None:
            raw = pd.read_csv(self._multi)
            key = next((c for c in raw.columns if c.lower() in ("ticker", "symbol")), None)
            if key is None:
                self._frames[self._multi.name.split(".")[0].upper()] = normalise_ohlcv(raw)
            else:
                for sym, part in raw.groupby(key):
                    self._frames[str(sym).upper()] = normalise_ohlcv(part.drop(columns=[key]))
        return self._frames

    def _frame(self, symbol: str) -> tuple[pd.DataFrame, str]:
        sym = symbol.upper()
        if self._multi is not None:
            frames = self._load_multi()
            if sym in frames:
                return frames[sym], self._multi.name
        elif sym in self._files:
            if sym not in self._frames:
                try:
                    self._frames[sym] = normalise_ohlcv(pd.read_csv(self._files[sym]))
                except (ValueError, OSError) as exc:
                    raise MarketDataError(
                        "no_data",
                        f"cannot read {self._files[sym]}: {exc}",
                        symbol=sym,
                        provider=self.name,
                    ) from exc
            return self._frames[sym], self._files[sym].name
        known = ", ".join(self.symbols()) or "none"
        raise MarketDataError(
            "invalid_symbol", f"unknown symbol; available: {known}", symbol=sym, provider=self.name
        )

    def history(
        self, symbol: str, start: date | None, end: date | None, interval: str = "1d"
    ) -> PriceHistory:
        """Bars for ``symbol`` in [start, end]; see ``MarketData.history``."""
        check_request(self.name, symbol, start, end, interval, self.intervals)
        frame, filename = self._frame(symbol)
        adjusted = self.adjusted or "adj_close" in frame.columns
        prov = Provenance(
            source=f"{self.source} ({filename})",
            symbol=symbol.upper(),
            period="",
            currency=self.currency,
            adjusted=adjusted,
        )
        return slice_daily(
            frame,
            provider=self.name,
            symbol=symbol.upper(),
            start=start,
            end=end,
            interval=interval,
            provenance=prov,
        )

    def fundamentals(self, symbol: str) -> Fundamentals:
        """CSV files carry no statements."""
        raise MarketDataError(
            "no_data", "the CSV provider has no fundamentals", symbol=symbol, provider=self.name
        )
