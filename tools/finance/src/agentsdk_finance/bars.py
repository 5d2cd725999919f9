"""Turning raw rows into clean daily bars, with every problem named, never hidden.

The rules (also in the README):

* **Dates** keep the trading day as written: a timestamp with a UTC offset
  (``2023-03-10 00:00:00-05:00``, as yfinance exports them, with offsets that change at
  daylight-saving time) is read as its local wall-clock date, never converted to UTC.
* **Bad bars** are rows whose date cannot be read, whose close (or adjusted close) is
  missing, not a number, zero, negative or infinite, whose open/high/low is text that is
  not a number, zero, negative or infinite, or whose volume is text that is not a number,
  negative or infinite. With
  ``bad_bars="error"`` (the default) they are a ``bad_data`` error naming each row;
  with ``bad_bars="drop"`` they are removed and listed in the provenance note.
* **Missing** open/high/low/volume cells (or columns) stay unknown (NaN): never 0, never
  copied from the close.
* **Duplicate dates**: identical rows are collapsed (noted). Rows on the same date with
  different values are a ``bad_data`` error by default; ``duplicates="first"`` or
  ``"last"`` keeps one of them and notes which.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field
from datetime import date
from typing import Literal

import numpy as np
import pandas as pd

from agentsdk_finance.errors import MarketDataError

BadBars = Literal["error", "drop"]
Duplicates = Literal["error", "first", "last"]

PRICE_FIELDS = ("open", "high", "low", "close", "adj_close")
_RENAMES = {
    "adj close": "adj_close",
    "adjclose": "adj_close",
    "adj_close": "adj_close",
    "adjusted_close": "adj_close",
    "adjusted close": "adj_close",
    "timestamp": "date",
    "datetime": "date",
}
# a time of day followed by a UTC offset (or Z/UTC/GMT): the offset is dropped so the
# wall-clock date survives; DST changes the offset, not the trading day
_OFFSET = re.compile(r"(\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)\s*(?:Z|UTC|GMT|[+-]\d{2}:?\d{2})$")
_SHOW = 8  # rows named in one message; the rest are counted


@dataclass(frozen=True)
class RowProblem:
    """One row that could not be used as it is."""

    line: int | None  # line in the source file (header = line 1), when there is a file
    day: date | None  # the bar's date, when it could be read
    text: str  # what is wrong, e.g. "close 0"

    def describe(self) -> str:
        """``line 7 (2008-01-02): close 0``."""
        where = [f"line {self.line}"] if self.line is not None else []
        if self.day is not None:
            where.append(str(self.day) if not where else f"({self.day})")
        return f"{' '.join(where) or 'a row'}: {self.text}"


@dataclass
class CleanBars:
    """A daily frame indexed by date (sorted, unique) plus what was dropped or merged."""

    frame: pd.DataFrame
    dropped: list[RowProblem] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)  # how duplicate dates were resolved

    def notes_between(self, lo: date, hi: date) -> str:
        """A short note on the rows dropped or merged that concern [lo, hi]."""
        parts = []
        gone = [p for p in self.dropped if p.day is None or lo <= p.day <= hi]
        if gone:
            parts.append(f"dropped {len(gone)} bad bar(s): {listing(gone)}")
        if self.merged:
            parts.append("; ".join(self.merged))
        return "; ".join(parts)


def listing(problems: list[RowProblem], limit: int = _SHOW) -> str:
    """The first ``limit`` problems in words, then how many more."""
    shown = "; ".join(p.describe() for p in problems[:limit])
    more = len(problems) - limit
    return shown + (f"; and {more} more" if more > 0 else "")


def wall_dates(
    values: pd.Series, date_format: str | None = None, *, keep_time: bool = False
) -> pd.Series:
    """Parse a date column to naive midnight timestamps of the local trading day (or
    naive local timestamps with ``keep_time``, for intraday bars).

    Unreadable cells become NaT (the caller names them as bad bars).
    """
    if pd.api.types.is_datetime64_any_dtype(values):
        parsed = pd.Series(values)
        if getattr(parsed.dt, "tz", None) is not None:
            parsed = parsed.dt.tz_localize(None)  # keeps the wall-clock time
        return parsed if keep_time else parsed.dt.normalize()
    text = values.astype("string").str.strip()
    if (text.str.len() > 10).any():  # longer than YYYY-MM-DD: maybe a time and an offset
        text = text.str.replace(_OFFSET, r"\1", regex=True)
    with warnings.catch_warnings():
        # pandas warns when it cannot infer one format and falls back per element
        warnings.simplefilter("ignore", UserWarning)
        parsed = pd.to_datetime(text, format=date_format, errors="coerce")
    out = pd.Series(parsed, index=values.index)
    return out if keep_time else out.dt.normalize()


_BLANK = ("", "nan", "NaN", "<NA>", "None")


def _cell_problems(frame: pd.DataFrame, numbers: dict[str, pd.Series]) -> dict[int, list[str]]:
    """Row position -> what is wrong with its numeric cells (vectorised; only bad rows)."""
    found: dict[int, list[str]] = {}
    for col, series in numbers.items():
        values = series.to_numpy()
        nan, inf = np.isnan(values), np.isinf(values)
        if col in ("close", "adj_close"):
            bad = nan | inf | (values <= 0)
        elif col == "volume":
            bad = inf | (values < 0)  # missing volume is unknown, zero volume is real
        else:
            bad = inf | (values <= 0)  # missing open/high/low is unknown
        if frame[col].dtype == object:  # text in the column: "n/a" is not a number either
            text = frame[col].astype(str).str.strip()
            bad = bad | (nan & ~text.isin(_BLANK).to_numpy())
        for i in np.flatnonzero(bad):
            if nan[i]:
                raw = str(frame[col].iloc[i]).strip()
                shown = "missing" if raw in _BLANK else repr(raw)
            else:
                shown = "infinite" if inf[i] else f"{values[i]:g}"
            found.setdefault(int(i), []).append(f"{col} {shown}")
    return found


def clean_bars(
    raw: pd.DataFrame,
    *,
    symbol: str,
    provider: str,
    where: str,
    bad_bars: BadBars = "error",
    duplicates: Duplicates = "error",
    date_format: str | None = None,
    first_line: int | None = 2,
    keep_time: bool = False,
) -> CleanBars:
    """Validate raw OHLCV rows (``date`` + ``close`` columns at least) into clean bars.

    Args:
        raw: the rows as read, in file order (its index positions give line numbers).
        symbol, provider: for error messages.
        where: the file or endpoint, for error messages.
        bad_bars: ``"error"`` or ``"drop"`` (see the module docstring).
        duplicates: ``"error"``, ``"first"`` or ``"last"``.
        date_format: a strftime format for the date column; None infers it.
        first_line: the file line of the row with index 0 (2 after a header); None when
            the rows do not come from a file.
        keep_time: keep the time of day (intraday bars) instead of the trading day.

    Raises:
        MarketDataError: ``no_data`` when there are no usable rows or the columns are
            missing; ``bad_data`` for bad bars or conflicting duplicates (by policy).
    """
    frame = raw.rename(
        columns=lambda c: _RENAMES.get(str(c).strip().lower(), str(c).strip().lower())
    )
    frame = frame.loc[:, ~frame.columns.duplicated()]
    # file lines come from the raw index (a group of a multi-symbol file keeps its rows')
    positions = frame.index if pd.api.types.is_integer_dtype(frame.index) else None
    frame = frame.reset_index(drop=True)
    missing = [c for c in ("date", "close") if c not in frame.columns]
    if missing:
        raise MarketDataError(
            "no_data",
            f"{where} has no {' or '.join(repr(m) for m in missing)} column "
            f"(columns: {', '.join(map(str, raw.columns)) or 'none'})",
            symbol=symbol,
            provider=provider,
        )
    if frame.empty:
        raise MarketDataError(
            "no_data", f"{where} has a header but no rows", symbol=symbol, provider=provider
        )
    days = wall_dates(frame["date"], date_format, keep_time=keep_time)
    present = [c for c in (*PRICE_FIELDS, "volume") if c in frame.columns]
    numbers = {c: pd.to_numeric(frame[c], errors="coerce").astype(float) for c in present}
    reasons = _cell_problems(frame, numbers)
    if days.isna().any():
        for i in np.flatnonzero(days.isna().to_numpy()):
            reasons.setdefault(int(i), []).insert(
                0, f"date {str(frame['date'].iloc[i])!r} is not a date"
            )
    problems = []
    for i in sorted(reasons):
        day = None if pd.isna(days.iloc[i]) else pd.Timestamp(days.iloc[i]).date()
        line = None
        if first_line is not None:
            line = first_line + int(positions[i] if positions is not None else i)
        problems.append(RowProblem(line, day, ", ".join(reasons[i])))
    bad_rows = sorted(reasons)
    if problems and (bad_bars == "error" or len(problems) == len(frame)):
        usable = len(frame) - len(problems)
        what = "no usable rows" if usable == 0 else f"{len(problems)} bad bar(s)"
        fix = (
            "fix the file"
            if usable == 0
            else "fix those rows, or load the data with bad_bars='drop' to skip and report them"
        )
        raise MarketDataError(
            "bad_data" if usable else "no_data",
            f"{where} has {what} of {len(frame)}: {listing(problems)}; {fix}",
            symbol=symbol,
            provider=provider,
            rows=listing(problems) if usable else "",
            where=where,
        )
    keep = np.ones(len(frame), dtype=bool)
    keep[bad_rows] = False
    out = pd.DataFrame({c: numbers[c].to_numpy()[keep] for c in present})
    for col in ("open", "high", "low", "volume"):
        if col not in out.columns:
            out[col] = np.nan  # unknown, not 0 and not the close
    out.index = pd.DatetimeIndex(days.to_numpy()[keep], name="date")
    out = out[
        [
            *("open", "high", "low", "close", "volume"),
            *(["adj_close"] if "adj_close" in out else []),
        ]
    ]
    out, merged = _resolve_duplicates(
        out, duplicates, symbol=symbol, provider=provider, where=where
    )
    return CleanBars(frame=out.sort_index(kind="stable"), dropped=problems, merged=merged)


def _resolve_duplicates(
    frame: pd.DataFrame, rule: Duplicates, *, symbol: str, provider: str, where: str
) -> tuple[pd.DataFrame, list[str]]:
    dup = frame.index.duplicated(keep=False)
    if not dup.any():
        return frame, []
    notes = []
    # rows equal in every field (NaN equal to NaN) are harmless repeats
    same = frame[dup].fillna(-1.0).groupby(level=0).nunique().le(1).all(axis=1)
    repeats = same[same].index
    conflicts = same[~same].index
    if len(repeats):
        notes.append(f"collapsed {len(repeats)} date(s) listed twice with identical values")
    if len(conflicts):
        shown = ", ".join(
            f"{d.date()} (close {' vs '.join(f'{v:g}' for v in frame.loc[[d], 'close'])})"
            for d in conflicts[:_SHOW]
        )
        more = f", and {len(conflicts) - _SHOW} more" if len(conflicts) > _SHOW else ""
        if rule == "error":
            raise MarketDataError(
                "bad_data",
                f"{where} has {len(conflicts)} date(s) with conflicting rows: {shown}{more}; "
                "keep one row per date (intraday rows are not daily bars), or load the data "
                "with duplicates='first' or 'last'",
                symbol=symbol,
                provider=provider,
                rows=f"{shown}{more}",
                where=where,
            )
        notes.append(
            f"kept the {rule} of conflicting rows on {len(conflicts)} date(s): {shown}{more}"
        )
    keep = "first" if rule != "last" else "last"
    return frame[~frame.index.duplicated(keep=keep)], notes
