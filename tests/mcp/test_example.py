"""examples/mcp_both_ways.py: the served finance toolkit through MCP, plus a third-party server."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import pytest

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leftovers")]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mcp_both_ways.py"


async def test_example_answers_with_the_numbers_the_toolkit_computes(time_server: str) -> None:
    from agentsdk_finance import FinanceToolkit

    run = runpy.run_path(str(EXAMPLE))["run"]  # the example's run(); its main() is not run
    outcome = await run(servers=[f"{time_server} --local-timezone UTC"])
    assert outcome["tools_called"] == ["finance_price_history"]
    assert {"finance_price_history", "finance_chart", "get_current_time"} <= set(
        outcome["tools_offered"]
    )
    # the same call made in-process: the numbers that came through MCP are the toolkit's
    async with FinanceToolkit() as finance:
        [tool] = [t for t in finance.tools() if t.name == "price_history"]
        direct = await tool.call({"symbol": "MSFT", "start": "2010-01-01", "end": "2010-12-31"})
    data = json.loads(direct.text)
    assert f"{data['first']['close']:.2f} on {data['first']['date']}" in outcome["answer"]
    assert f"{data['last']['close']:.2f} on {data['last']['date']}" in outcome["answer"]
