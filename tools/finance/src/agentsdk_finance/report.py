"""A Markdown research report with charts, where every figure cites its provenance."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel

from agentsdk_finance import charts
from agentsdk_finance.indicators import IndicatorSnapshot
from agentsdk_finance.metrics import Performance
from agentsdk_finance.models import PriceHistory, Provenance
from agentsdk_finance.summaries import FundamentalsView


class ReportResult(BaseModel):
    """Where the report went and its headline findings."""

    report_path: str
    charts: list[str]
    headline: list[str]
    sources: list[str]


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x * 100:.1f}%"


def _num(x: float | None, digits: int = 2) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def _money(x: float, currency: str) -> str:
    return f"{x / 1e9:,.2f} bn {currency}" if abs(x) >= 1e7 else f"{x:,.2f} {currency}"


class _Citations:
    """Numbers footnotes by provenance, one footnote per distinct source line."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def ref(self, prov: Provenance) -> str:
        line = prov.cite()
        if line not in self.lines:
            self.lines.append(line)
        return f"[^{self.lines.index(line) + 1}]"


def write_report(
    folder: Path,
    histories: list[PriceHistory],
    perfs: list[Performance],
    snaps: list[IndicatorSnapshot],
    funds: list[FundamentalsView],
) -> ReportResult:
    """Write ``report.md`` and PNG charts into ``folder``; return paths and headlines."""
    folder.mkdir(parents=True, exist_ok=True)
    cite = _Citations()
    names = [h.symbol for h in histories]
    first, last = min(h.start for h in histories), max(h.end for h in histories)
    chart_files: list[Path] = []
    md = [
        f"# Research report: {', '.join(names)}",
        "",
        f"Period {first} to {last}. Generated {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by agentsdk-finance.",
        "Every figure is followed by a footnote naming its source, symbol, period, currency",
        "and whether prices are adjusted.",
        "",
        "## Performance",
        "",
        "| Symbol | Total return | CAGR | Volatility | Max drawdown (peak → trough) | Sharpe | Sortino | Beta | Source |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for p in perfs:
        d = p.drawdown
        md.append(
            f"| {p.symbol} | {_pct(p.total_return)} | {_pct(p.cagr)} | {_pct(p.volatility)} | "
            f"{_pct(d.max_drawdown)} ({d.peak_date} → {d.trough_date}) | {_num(p.sharpe)} | "
            f"{_num(p.sortino)} | {_num(p.beta)} | {cite.ref(p.provenance)}"
            f"{' ' + cite.ref(p.benchmark_provenance) if p.benchmark_provenance else ''} |"
        )
    rf = perfs[0].risk_free_rate if perfs else 0.0
    bench = perfs[0].benchmark if perfs and perfs[0].benchmark else None
    md += ["", f"Sharpe and Sortino use a risk-free rate of {_pct(rf)} a year."]
    bench_prov = perfs[0].benchmark_provenance if perfs else None
    if bench and bench_prov is not None:
        counts = ", ".join(f"{p.symbol} {p.benchmark_common_dates}" for p in perfs)
        md.append(
            f"Beta and correlation are measured against {bench} on the dates both series "
            f"have ({counts}). {cite.ref(bench_prov)}"
        )
    ranked = sorted(perfs, key=lambda p: p.total_return, reverse=True)
    headline = [
        f"{p.symbol}: total return {_pct(p.total_return)}, CAGR {_pct(p.cagr)}, "
        f"max drawdown {_pct(p.drawdown.max_drawdown)} ({p.drawdown.peak_date} to {p.drawdown.trough_date})"
        for p in ranked
    ]
    md += ["", "## Findings", ""]
    md += [f"- {line} {cite.ref(p.provenance)}" for line, p in zip(headline, ranked, strict=True)]
    md += ["", "## Charts", ""]
    if len(histories) > 1:
        path = folder / "comparison.png"
        path.write_bytes(charts.comparison_chart(histories))
        chart_files.append(path)
        refs = " ".join(cite.ref(h.provenance) for h in histories)
        md += [
            f"![{', '.join(names)} rebased to 100]({path.name})",
            "",
            f"*Growth of 100, log scale.* {refs}",
            "",
        ]
    for h in histories:
        path = folder / f"{h.symbol.lower()}-price.png"
        path.write_bytes(charts.price_chart(h))
        chart_files.append(path)
        md += [
            f"![{h.symbol} price and drawdown]({path.name})",
            "",
            f"*{h.symbol}: price with SMA 50/200 and drawdown.* {cite.ref(h.provenance)}",
            "",
        ]
    if snaps:
        md += [
            "## Indicators (last bar)",
            "",
            "| Symbol | As of | Price | SMA 50 | SMA 200 | RSI 14 | MACD hist | Signals | Source |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for s in snaps:
            md.append(
                f"| {s.symbol} | {s.as_of} | {_num(s.price)} | {_num(s.sma.get(50))} | "
                f"{_num(s.sma.get(200))} | {_num(s.rsi_14, 1)} | {_num(s.macd_histogram, 3)} | "
                f"{'; '.join(s.signals) or '-'} | {cite.ref(s.provenance)} |"
            )
        md.append("")
    for f in funds:
        md += [f"## Fundamentals: {f.symbol}", ""]
        for period in f.periods:
            ref = cite.ref(period.provenance)
            md += [f"Period ending {period.period_end} ({period.period_type}) {ref}", ""]
            md += ["| Item | Value |", "|---|---|"]
            for key, value in period.figures.items():
                shown = _num(value) if key.startswith("eps") else _money(value, f.currency)
                md.append(f"| {key.replace('_', ' ')} | {shown} {ref} |")
            for key, value in period.ratios.model_dump().items():
                if value is not None:
                    shown = _num(value) if "ratio" in key or "to_equity" in key else _pct(value)
                    md.append(f"| {key.replace('_', ' ')} | {shown} {ref} |")
            md.append("")
    md += ["## Sources", ""]
    md += [f"[^{i}]: {line}" for i, line in enumerate(cite.lines, start=1)]
    report = folder / "report.md"
    report.write_text("\n".join(md) + "\n", encoding="utf-8")
    return ReportResult(
        report_path=str(report),
        charts=[str(p) for p in chart_files],
        headline=headline,
        sources=cite.lines,
    )
