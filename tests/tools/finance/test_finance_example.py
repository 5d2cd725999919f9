"""examples/finance_research.py runs offline and writes a report with charts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from agentsdk_finance.sampledata import SampleDataFiles

EXAMPLE = Path(__file__).parents[3] / "examples" / "finance_research.py"


@pytest.mark.slow
def test_example_writes_a_cited_report(tmp_path: Path, sample_files: SampleDataFiles) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Best: AAPL; worst: MSFT" in done.stdout
    assert "tools called: compare, chart, research_report" in done.stdout
    (report,) = tmp_path.rglob("report.md")
    text = report.read_text()
    assert "# Research report: AAPL, MSFT, IBM" in text
    assert len(list(report.parent.glob("*.png"))) == 4
    assert "[^1]: AAPL, bokeh-sampledata" in text
