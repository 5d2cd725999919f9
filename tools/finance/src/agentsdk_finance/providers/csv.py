"""``CsvProvider``: OHLCV from CSV files or a folder of ``<SYMBOL>.csv`` files."""

from __future__ import annotations

import threading
from datetime import date
from pathlib import Path

import pandas as pd

from agentsdk_finance.bars import BadBars, CleanBars, Duplicates, clean_bars
from agentsdk_finance.errors import MarketDataError
from agentsdk_finance.models import Fundamentals, PriceHistory, Provenance
from agentsdk_finance.providers.base import (
    DAILY_RESAMPLE_RULES,
    check_request,
    file_identity,
    listing,
    slice_daily,
)

_SUFFIXES = (".csv.gz", ".csv")


def symbol_of(path: Path) -> str | None:
    """``BRK.B.csv`` -> ``BRK.B``: only the ``.csv``/``.csv.gz`` suffix is removed."""
    name = path.name
    for suffix in _SUFFIXES:
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)].strip().upper()
    return None


def read_rows(path: Path, *, symbol: str, provider: str) -> pd.DataFrame:
    """The file's rows; unreadable files are no_data.

    Only empty cells are missing: a column holding text such as ``null`` or ``n/a`` stays
    text, so ``clean_bars`` can quote the bad cell back (clean columns parse in C).
    """
    try:
        return pd.read_csv(path, keep_default_na=False, na_values=[""], skipinitialspace=True)
    except pd.errors.EmptyDataError:
        reason = f"{path} is empty"
    except (ValueError, OSError) as exc:  # parser errors, bad gzip, undecodable bytes
        reason = f"cannot read {path}: {exc}"
    raise MarketDataError("no_data", reason, symbol=symbol, provider=provider)


class CsvProvider:
    """Daily OHLCV from local CSV files, for offline use and a user's own data.

    Each file needs a ``date`` column and a ``close`` column; ``open high low volume``
    and ``adj close`` are used when present (missing ones are unknown, not 0). A
    ``ticker``/``symbol`` column lets one file hold several symbols. In a folder the
    file name is the symbol: ``BRK.A.csv`` and ``BRK.B.csv`` are two symbols.

    Files are read again whenever their content changes, and ``cache_identity`` names
    the file's path and content hash, so a cache never serves an edited file's old bars.

    Args:
        paths: a folder of ``SYMBOL.csv`` (or ``.csv.gz``) files, a single file, or a
            mapping of symbol to file.
        currency: currency of the prices.
        adjusted: whether ``close`` is already split/dividend adjusted (an
            ``adj close`` column is always treated as adjusted).
        source: label used in provenance (default ``csv folder <path>`` or ``csv``);
            each citation adds the file.
        bad_bars: ``"error"`` (default): rows with a zero, negative or non-finite price
            or an unreadable date are an error naming them; ``"drop"``: skip them and
            list them in the provenance note.
        duplicates: ``"error"`` (default), ``"first"`` or ``"last"`` for dates that
            appear in several rows with different values.
        date_format: strftime format of the date column; None infers it (ISO dates and
            timestamps with UTC offsets are read as their local date).

    Raises:
        FileNotFoundError: ``paths`` is neither a file nor a folder.
        ValueError: two files give the same symbol (``x.csv`` and ``X.csv.gz``), or a
            setting is not one of the allowed values.
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
        bad_bars: BadBars = "error",
        duplicates: Duplicates = "error",
        date_format: str | None = None,
    ) -> None:
        if bad_bars not in ("error", "drop"):
            raise ValueError(f"bad_bars must be 'error' or 'drop', not {bad_bars!r}")
        if duplicates not in ("error", "first", "last"):
            raise ValueError(f"duplicates must be 'error', 'first' or 'last', not {duplicates!r}")
        self.currency = currency
        self.adjusted = adjusted
        self.bad_bars: BadBars = bad_bars
        self.duplicates: Duplicates = duplicates
        self.date_format = date_format
        self._root: Path | None = None
        self._multi: Path | None = None
        self._files: dict[str, Path] = {}
        if isinstance(paths, dict):
            for key, value in paths.items():
                self._add(str(key).strip().upper(), Path(value))
            default_label = "csv"
        else:
            root = Path(paths)
            if root.is_dir():
                self._root = root
                self._scan()
                default_label = f"csv folder {root}"
            elif root.is_file():
                self._multi = root
                default_label = "csv"
            else:
                raise FileNotFoundError(f"no CSV file or folder at {root}")
        self.source = source or default_label
        # path -> (file identity when parsed, symbol -> bars)
        self._parsed: dict[str, tuple[str, dict[str, CleanBars]]] = {}
        self._lock = threading.Lock()

    def _add(self, symbol: str, path: Path) -> None:
        if not symbol:
            raise ValueError(f"empty symbol for {path}")
        other = self._files.get(symbol)
        if other is not None and other != path:
            raise ValueError(f"{other} and {path} are both symbol {symbol}; rename one of them")
        self._files[symbol] = path

    def _scan(self) -> None:
        assert self._root is not None
        for f in sorted(self._root.iterdir()):
            sym = symbol_of(f)
            if sym and f.is_file():
                self._add(sym, f)

    def symbols(self) -> list[str]:
        """Symbols available from the configured files."""
        if self._multi is not None:
            return sorted(self._bars_in(self._multi, "", multi=True))
        return sorted(self._files)

    def _path(self, sym: str) -> Path:
        if self._multi is not None:
            return self._multi
        if sym not in self._files and self._root is not None:
            self._scan()  # a file added after construction
        if sym not in self._files:
            raise MarketDataError(
                "invalid_symbol",
                f"unknown symbol; available: {listing(self.symbols())}",
                symbol=sym,
                provider=self.name,
            )
        return self._files[sym]

    def _bars_in(self, path: Path, sym: str, *, multi: bool) -> dict[str, CleanBars]:
        ident = file_identity(path)
        with self._lock:
            known = self._parsed.get(str(path))
        if known is not None and known[0] == ident:
            return known[1]
        raw = read_rows(path, symbol=sym, provider=self.name)
        if file_identity(path) != ident:  # written to while we read it: read it again
            return self._bars_in(path, sym, multi=multi)
        key = next((c for c in raw.columns if c.strip().lower() in ("ticker", "symbol")), None)
        if multi and key is not None:
            parsed = self._split(raw, key, path)
        else:
            name = sym if not multi else (symbol_of(path) or path.stem.upper())
            parsed = {name: self._clean(raw, name, path)}
        with self._lock:
            self._parsed[str(path)] = (ident, parsed)  # an edit replaces the old parse
        return parsed

    def _split(self, raw: pd.DataFrame, key: str, path: Path) -> dict[str, CleanBars]:
        names = raw[key].astype(str).str.strip().str.upper()
        blank = names == ""
        if blank.any() and self.bad_bars == "error":
            lines = ", ".join(str(i + 2) for i in raw.index[blank][:8])
            raise MarketDataError(
                "bad_data",
                f"{path} has {int(blank.sum())} row(s) without a {key} (lines {lines}); "
                "fill them in or load the file with bad_bars='drop'",
                provider=self.name,
                rows=f"lines {lines} have no {key}",
                where=str(path),
            )
        return {
            str(sym): self._clean(part.drop(columns=[key]), str(sym), path)
            for sym, part in raw[~blank].groupby(names[~blank], sort=True)
        }

    def _clean(self, raw: pd.DataFrame, sym: str, path: Path) -> CleanBars:
        return clean_bars(
            raw,
            symbol=sym,
            provider=self.name,
            where=str(path),
            bad_bars=self.bad_bars,
            duplicates=self.duplicates,
            date_format=self.date_format,
        )

    def _settings(self) -> str:
        return (
            f"currency={self.currency}|adjusted={self.adjusted}|bad_bars={self.bad_bars}|"
            f"duplicates={self.duplicates}|date_format={self.date_format}|label={self.source}"
        )

    def cache_identity(self, symbol: str, kind: str = "history") -> str:
        """The file's resolved path and content hash plus every setting that shapes the bars."""
        if kind == "fundamentals":
            return "csv|no fundamentals"
        path = self._path(symbol.strip().upper())
        return f"csv|{file_identity(path)}|{self._settings()}"

    def history(
        self, symbol: str, start: date | None, end: date | None, interval: str = "1d"
    ) -> PriceHistory:
        """Bars for ``symbol`` in [start, end]; see ``MarketData.history``."""
        check_request(self.name, symbol, start, end, interval, self.intervals)
        sym = symbol.strip().upper()
        path = self._path(sym)
        found = self._bars_in(path, sym, multi=self._multi is not None)
        if sym not in found:
            raise MarketDataError(
                "invalid_symbol",
                f"not in {path.name}; available: {listing(sorted(found))}",
                symbol=sym,
                provider=self.name,
            )
        bars = found[sym]
        shown = path.name if self._root is not None else str(path)
        prov = Provenance(
            source=f"{self.source} ({shown})",
            symbol=sym,
            period="",
            currency=self.currency,
            adjusted=self.adjusted or "adj_close" in bars.frame.columns,
        )
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
        """CSV files carry no statements."""
        raise MarketDataError(
            "no_data", "the CSV provider has no fundamentals", symbol=symbol, provider=self.name
        )
