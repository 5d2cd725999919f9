"""Test data derived from the real sample files: rows read with the csv module (no
pandas, so the expectations do not share the toolkit's parsing), and CSV writers for
damaged copies (bad bars, deleted dates, yfinance-style timestamps)."""

from __future__ import annotations

import csv
import gzip
from datetime import date
from pathlib import Path


def read_rows(path: Path, ticker: str | None = None) -> list[dict[str, str]]:
    """Every row of a CSV (gzip or not) as text, optionally one ticker of a multi file."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", newline="") as fh:
        rows = list(csv.DictReader(fh))
    if ticker is not None:
        rows = [r for r in rows if r.get("Ticker") == ticker]
    return rows


def day_of(row: dict[str, str]) -> date:
    """The row's date (first 10 characters of 'date' or 'Date')."""
    return date.fromisoformat((row.get("date") or row["Date"])[:10])


def closes(rows: list[dict[str, str]], column: str = "close") -> list[tuple[date, float]]:
    """(date, value) pairs of one column, sorted by date."""
    return sorted((day_of(r), float(r[column])) for r in rows)


def write_rows(path: Path, rows: list[dict[str, str]], fields: list[str] | None = None) -> Path:
    """Write rows (dicts of text) as a CSV with a header."""
    fields = fields or list(rows[0])
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def between(rows: list[dict[str, str]], lo: date, hi: date) -> list[dict[str, str]]:
    """The rows dated in [lo, hi]."""
    return [r for r in rows if lo <= day_of(r) <= hi]
