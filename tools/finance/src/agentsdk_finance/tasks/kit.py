"""Building blocks of the finance suite's tasks: a ``Figure`` the answer must state,
a ``Subject`` (symbol and window) it must cite, and ``figure_task`` that turns them
into a rubric (work done, figure stated, source cited, no fishing) with a reference
solution written from the run's own tool results."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any

from agentsdk.tasks import Check, CheckValue, Task, ToolkitSpec, World

from agentsdk_finance.tasks import checks as tc
from agentsdk_finance.toolkit import FinanceToolkit

# Numbered steps, the tool call first: worded as one sentence ("... answer: copy the
# summary line ..."), the 1.5B model wrote those words as its first reply in 2 of 18 tasks.
INSTRUCTIONS = FinanceToolkit.instructions  # what the toolkit tells any agent
FINANCE = ToolkitSpec("finance")
# Tools whose figures are "as of" the window's last bar, whatever its start (indicators
# load earlier bars for their look-backs): a result counts when it is as of the right day.
AS_OF_TOOLS = frozenset({"indicators"})


@dataclass(frozen=True)
class Figure:
    """One figure the answer must state, and where each tool puts it.

    ``fields`` maps a tool to the figure's path in its result; a path ending in ``%``
    holds percent (``change_pct``). ``expected`` recomputes the value from the data.
    ``tolerance`` is in percentage points for percent figures, else absolute; the tool's
    own number must be within a tenth of it.
    """

    label: str
    fields: dict[str, str]
    expected: Callable[[], float | str]
    tolerance: float = 0.1
    percent: bool = True
    unsigned: bool = False
    digits: int = 2
    unit: float = 1.0  # the answer states value / unit (1e9: "84.31" billion)

    def tool_value(self, tool: str, row: dict[str, Any]) -> float | str | None:
        """The figure inside one tool result object."""
        path = self.fields.get(tool, "")
        if not path:
            return None
        if isinstance(self.expected(), str):
            value: Any = row
            for key in path.split("."):
                value = value.get(key) if isinstance(value, dict) else None
            return value if isinstance(value, str) else None
        number = tc.dig(row, path.rstrip("%"))
        return None if number is None else (number / 100 if path.endswith("%") else number)

    def tool_tolerance(self, tool: str, row: dict[str, Any]) -> float:
        """How close the tool's own figure must be: a tenth of the answer's tolerance, or
        the rounding of a figure the tool wrote as text (``-69.1%``: 0.05 points)."""
        written = tc.written_precision(row, self.fields.get(tool, ""))
        return max(self.tolerance / 10, written if self.percent else written / self.unit)

    def matches(self, value: float | str | None, tolerance: float) -> bool:
        """Whether a number (fraction for percent figures) or date string is the expected one."""
        want = self.expected()
        if isinstance(want, str) or isinstance(value, str) or value is None:
            return value == want
        tol = tolerance / 100 if self.percent else tolerance * self.unit
        if self.unsigned:
            return abs(abs(value) - abs(want)) <= tol + 1e-12
        return abs(value - want) <= tol + 1e-12

    def stated_in(self, text: str) -> bool:
        """Whether the answer states the figure."""
        want = self.expected()
        if isinstance(want, str):
            return want in tc.dates_in(text)
        return tc.states(
            text, want / self.unit, self.tolerance, percent=self.percent, unsigned=self.unsigned
        )

    def shown(self, value: float | str) -> str:
        """How a reference answer writes it."""
        if isinstance(value, str):
            return value
        return f"{value * 100:.1f}%" if self.percent else f"{value / self.unit:.{self.digits}f}"


@dataclass(frozen=True)
class Subject:
    """One symbol over one window whose figures the answer must give and cite."""

    symbol: str
    start: date | None
    end: date | None
    figures: tuple[Figure, ...]
    series: Callable[[], tc.Series] | None = None  # default: the sample data's
    tokens: tuple[str, ...] = ()  # source words a citation must contain (one of them)
    align_with: tuple[str, ...] = ()  # other symbols whose common dates are used
    fixed_span: str | None = None  # a period that is not a price window (a fiscal quarter)

    def data(self) -> tc.Series:
        """The independently read series over this subject's window."""
        own = self.series() if self.series else tc.sample_series(self.symbol)
        part = tc.window(own, self.start, self.end)
        if self.align_with:
            others = [tc.window(tc.sample_series(s), self.start, self.end) for s in self.align_with]
            part = tc.common(part, *others)[0]
        return part

    def span(self) -> str:
        """The period the provenance must show."""
        return self.fixed_span or tc.period(self.data())

    def source_words(self) -> tuple[str, ...]:
        """Words that identify the source in a citation."""
        return self.tokens or tc.source_tokens(self.symbol)

    def as_of(self) -> str:
        """The last trading day of the window: the day indicator values are as of."""
        return str(self.data()[-1][0])

    def shown_by(self, tool: str, row: dict[str, Any]) -> bool:
        """Whether a result row of ``tool`` is about this subject: its symbol over exactly
        the window, or, for an as-of tool, its window ending on the as-of day (the values
        of any window ending there are the same; they are checked on their own)."""
        prov = row["provenance"]
        if prov.get("symbol") != self.symbol:
            return False
        if tool in AS_OF_TOOLS and self.fixed_span is None:
            day = self.as_of()
            ends = str(prov.get("period", "")).rpartition("..")[2]
            return ends == day and str(row.get("as_of", prov.get("as_of"))) == day
        return bool(prov.get("period") == self.span())

    def work(self, world: World, tools: tuple[str, ...]) -> list[tuple[str, dict[str, Any]]]:
        """The result rows of ``tools`` about this subject whose own figures are right."""
        found = []
        for tool in tools:
            figures = [f for f in self.figures if f.fields.get(tool)]
            if not figures:
                continue
            for row in tc.result_rows(world, tool):
                if self.shown_by(tool, row) and all(
                    f.matches(f.tool_value(tool, row), f.tool_tolerance(tool, row)) for f in figures
                ):
                    found.append((tool, row))
        return found

    def spans_to_cite(self, world: World, tools: tuple[str, ...]) -> list[str]:
        """The periods a citation may give: the window, and the period an as-of tool
        stated in a result that did the work (indicators over 2012-12-31..2012-12-31)."""
        spans = [self.span()]
        for tool, row in self.work(world, tools):
            period = str(row["provenance"].get("period", ""))
            if tool in AS_OF_TOOLS and period not in spans:
                spans.append(period)
        return spans


def work_check(subject: Subject, tools: tuple[str, ...]) -> Check:
    """One of ``tools`` returned ``subject``'s symbol over its period with its figures
    (an as-of tool: as of its last day)."""

    def check(world: World) -> CheckValue:
        found = subject.work(world, tools)
        if found:
            tool, row = found[0]
            return True, f"{tool} returned {subject.symbol} over {row['provenance']['period']}"
        when = f"as of {subject.as_of()}" if set(tools) <= AS_OF_TOOLS else f"over {subject.span()}"
        return False, f"no {'/'.join(tools)} result for {subject.symbol} {when} holds the figures"

    return Check(f"{subject.symbol}: tool result over the right period", check, weight=1.0)


def answer_checks(subject: Subject, tools: tuple[str, ...] = ()) -> list[Check]:
    """The answer states each figure of ``subject`` and cites its source and period (the
    window, or the period an as-of result among ``tools`` stated for it)."""
    checks = []
    for figure in subject.figures:

        def states(world: World, figure: Figure = figure) -> CheckValue:
            ok = figure.stated_in(world.answer)
            want = figure.expected()
            return ok, f"expected {figure.shown(want)} (tolerance {figure.tolerance})"

        checks.append(Check(f"{subject.symbol}: answer states the {figure.label}", states))

    def cited(world: World) -> CheckValue:
        spans = subject.spans_to_cite(world, tools)
        verdicts = [
            tc.cites(world.answer, subject.symbol, s, subject.source_words()) for s in spans
        ]
        if any(ok for ok, _ in verdicts):
            return next(v for v in verdicts if v[0])
        others = f" (or the period {' or '.join(spans[1:])})" if len(spans) > 1 else ""
        return False, verdicts[0][1] + others

    checks.append(Check(f"{subject.symbol}: answer cites source, symbol and period", cited))
    return checks


def not_fishing(world: World) -> CheckValue:
    """At most ``checks.MAX_NUMBERS`` numbers in the answer."""
    return tc.not_fishing(world.answer)


def reference_answer(
    subjects: tuple[Subject, ...],
    tools: tuple[str, ...],
    closing: Callable[[World], str] | None = None,
) -> Callable[[World], str]:
    """A final answer written from the run's own tool results (as a model would):
    one line per subject with its figures and its ``cite`` (and the benchmark's), then
    ``closing(world)`` if given."""

    def answer(world: World) -> str:
        lines = []
        for subject in subjects:
            rows = [
                (tool, row)
                for tool in tools
                for row in tc.result_rows(world, tool)
                if row["provenance"]["symbol"] == subject.symbol
            ]
            row = rows[-1][1]
            parts = []
            for figure in subject.figures:
                value = next(
                    (v for t, r in reversed(rows) if (v := figure.tool_value(t, r)) is not None),
                    None,
                )
                parts.append(
                    f"{figure.label} {figure.shown(value) if value is not None else 'n/a'}"
                )
            bench = f"; benchmark: {row['benchmark_cite']}" if row.get("benchmark_cite") else ""
            lines.append(f"{subject.symbol}: {', '.join(parts)} (source: {row['cite']}{bench}).")
        if closing is not None:
            lines.append(closing(world))
        return "\n".join(lines)

    return answer


def figure_task(
    name: str,
    prompt: str,
    subjects: tuple[Subject, ...],
    calls: list[Any],
    *,
    tools: tuple[str, ...],
    tags: tuple[str, ...] = (),
    description: str = "",
    closing: Callable[[World], str] | None = None,
    extra: tuple[Check, ...] = (),
    max_turns: int = 6,
    toolkit: ToolkitSpec = FINANCE,
) -> Task:
    """A task whose answer gives figures for some subjects, each cited."""
    checks: list[Check] = []
    for subject in subjects:
        checks.append(work_check(subject, tools))
        checks.extend(answer_checks(subject, tools))
    checks.append(Check("answer is not a list of guesses", not_fishing))
    checks.extend(extra)
    return Task(
        id=f"finance/{name}",
        prompt=prompt,
        toolkits=[toolkit],
        checks=checks,
        reference=[*calls, reference_answer(subjects, tools, closing)],
        max_turns=max_turns,
        tags=tags,
        description=description,
    )


# -- figures ------------------------------------------------------------------------


def _total(
    subject_symbol: str, lo: date | None, hi: date | None, align: tuple[str, ...] = ()
) -> Callable[[], float]:
    return lambda: tc.total_return(Subject(subject_symbol, lo, hi, (), align_with=align).data())


def total_return_figure(
    symbol: str, lo: date | None, hi: date | None, align: tuple[str, ...] = ()
) -> Figure:
    """Total return as performance, price_history and compare report it."""
    return Figure(
        "total return",
        {"performance": "total_return", "price_history": "change_pct%", "compare": "total_return"},
        _total(symbol, lo, hi, align),
    )


def _series_fn(symbol: str, lo: date | None, hi: date | None) -> Callable[[], tc.Series]:
    return lambda: tc.window(tc.sample_series(symbol), lo, hi)


def drawdown_figures(symbol: str, lo: date | None, hi: date | None) -> tuple[Figure, ...]:
    """Max drawdown depth (sign optional), peak and trough dates."""

    def fall() -> tc.Fall:
        return tc.drawdown(_series_fn(symbol, lo, hi)())

    return (
        Figure(
            "max drawdown",
            {
                "performance": "drawdown.max_drawdown",
                "price_history": "max_drawdown_pct%",
                "chart": "max_drawdown_pct%",  # its caption states the same window's figures
            },
            lambda: fall().depth,
            unsigned=True,
        ),
        Figure(
            "peak date",
            {
                "performance": "drawdown.peak_date",
                "price_history": "drawdown_peak",
                "chart": "drawdown_peak",
            },
            lambda: str(fall().peak),
        ),
        Figure(
            "trough date",
            {
                "performance": "drawdown.trough_date",
                "price_history": "drawdown_trough",
                "chart": "drawdown_trough",
            },
            lambda: str(fall().trough),
        ),
    )


def aligned_subjects(symbols: tuple[str, ...], lo: date, hi: date) -> tuple[Subject, ...]:
    """One total-return subject per symbol, each on the dates all ``symbols`` have."""
    return tuple(
        Subject(
            s,
            lo,
            hi,
            (total_return_figure(s, lo, hi, tuple(o for o in symbols if o != s)),),
            align_with=tuple(o for o in symbols if o != s),
        )
        for s in symbols
    )
