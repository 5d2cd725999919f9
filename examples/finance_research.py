"""An agent compares AAPL, MSFT and IBM over 2000-2013 and writes a cited report with charts.

Runs offline by default: a scripted planner (``FunctionModel``) drives the real
``FinanceToolkit`` on the sample data shipped in PyPI packages. Pass ``--model`` to let a
real model plan instead, e.g. ``--model local:default`` or ``--model openai:gpt-4.1``.

    uv run python examples/finance_research.py --out /tmp/finance-demo
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from agentsdk.testing import FunctionModel
from agentsdk_finance import FinanceToolkit

from agentsdk import Agent, ModelRequest, TextPart, ToolCallPart, ToolResultPart

QUESTION = (
    "Compare AAPL, MSFT and IBM from 2000 to 2013: which did best, how risky was each, "
    "and how deep were their worst drawdowns? Write a report with charts."
)
INSTRUCTIONS = (
    "You are a careful equity analyst. Use the finance tools for every number and cite "
    "the source of each figure. Finish with a short plain-text answer."
)
TICKERS, START, END = "AAPL,MSFT,IBM", "2000", "2013"


def _text(result: ToolResultPart) -> str:
    return "".join(p.text for p in result.parts if isinstance(p, TextPart))


def planner(request: ModelRequest) -> ToolCallPart | str:
    """The offline stand-in for a model: compare, chart, write the report, answer."""
    results = [r for m in request.messages for r in m.tool_results]
    if not results:
        return ToolCallPart(
            name="compare", arguments={"symbols": TICKERS, "start": START, "end": END}
        )
    if len(results) == 1:
        return ToolCallPart(
            name="chart", arguments={"symbols": TICKERS, "start": START, "end": END}
        )
    if len(results) == 2:
        return ToolCallPart(
            name="research_report",
            arguments={
                "symbols": TICKERS,
                "start": START,
                "end": END,
                "benchmark": "SPX",
                "risk_free_rate": 0.02,
            },
        )
    report = json.loads(_text(results[-1]))
    comparison = json.loads(_text(results[0]))
    lines = [
        f"Best: {comparison['best']}; worst: {comparison['worst']} ({comparison['start']} to {comparison['end']})."
    ]
    lines += report["headline"]
    lines.append(f"Report with charts: {report['report_path']}")
    lines.append("Sources: " + " | ".join(report["sources"]))
    return "\n".join(lines)


def build_agent(model: str | None, out: Path) -> Agent:
    """The agent: the finance toolkit on offline sample data, runs saved under ``out``."""
    return Agent(
        model=model or FunctionModel(planner),
        instructions=INSTRUCTIONS,
        tools=[FinanceToolkit()],
        artifacts_dir=out,
        max_turns=8,
    )


def main() -> None:
    """Run the research question and print the answer and where the report is."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a model string; default: offline scripted planner")
    parser.add_argument("--out", type=Path, default=Path("finance-research-runs"))
    args = parser.parse_args()
    result = build_agent(args.model, args.out).run_sync(QUESTION)
    print(result.output)
    print(f"tools called: {', '.join(result.tool_calls)}")
    if result.artifacts_dir:
        reports = sorted(Path(result.artifacts_dir).rglob("report.md"))
        for report in reports:
            print(f"report: {report}")


if __name__ == "__main__":
    main()
