"""The rules the fault runs are held to can fail: fabricated outcomes that break each rule."""

from __future__ import annotations

import pytest
from fault_runs import Outcome, check_rules
from fault_server import FaultServer, Injected

from agentsdk import ContentFilteredError, ModelAuthError, ModelError


def _server(*faults: tuple[str, str], stream: bool = False, calls: bool = False) -> FaultServer:
    server = FaultServer()
    server.log = [
        Injected(run, n, fault, "openai", stream, calls=calls)
        for n, (run, fault) in enumerate(faults, 1)
    ]
    return server


def test_a_right_answer_after_retried_faults_passes() -> None:
    server = _server(("r", "500"), ("r", "ok"), ("r", "ok"))
    outcome = Outcome("r", 1, 2, False, 0.5, output="The sum is 3.")
    assert check_rules([outcome], server, timeout=10, attempts=4) == {"ok": 1}


@pytest.mark.parametrize(
    ("outcome", "faults", "complaint"),
    [
        (Outcome("r", 1, 2, False, 0.5, output="The sum is 4."), ["ok", "ok"], "wrong answer"),
        (Outcome("r", 1, 2, False, 0.5, output=""), ["empty", "ok"], "wrong answer"),
        (Outcome("r", 1, 2, False, 12.5, output="The sum is 3."), ["ok"], "past its"),
        (
            Outcome("r", 1, 2, False, 0.5, error=ModelAuthError("m: denied")),
            ["ok", "500"],
            "do not explain",
        ),
        (
            Outcome("r", 1, 2, False, 0.5, error=ContentFilteredError("m: filtered")),
            ["content_filter", "ok"],
            "do not explain",
        ),
        (
            Outcome("r", 1, 2, False, 0.5, error=ModelError("m: x (gave up after 4 attempts)")),
            ["500", "ok", "500", "500"],
            "do not explain",
        ),
        (Outcome("r", 1, 2, False, 0.5, error=KeyError("choices")), ["ok"], "bare KeyError"),
        (
            Outcome("r", 1, 2, True, 0.5, error=ModelAuthError("m: denied"), events=["RunStarted"]),
            ["401"],
            "without a RunFailed",
        ),
    ],
    ids=[
        "wrong",
        "empty",
        "too-slow",
        "auth-without-401",
        "filter-not-last",
        "gave-up-early",
        "bare",
        "no-run-failed",
    ],
)
def test_each_broken_rule_is_caught(outcome: Outcome, faults: list[str], complaint: str) -> None:
    server = _server(*[("r", f) for f in faults])
    with pytest.raises(AssertionError, match=complaint):
        check_rules([outcome], server, timeout=10, attempts=4)


LATE_FOUR = [("r", "cut_stream_late")] * 4
GAVE_UP = ModelError("m: the server closed the stream (gave up after 4 attempts)")
RAISED = ModelError(
    "m: the server closed the stream after 90 bytes; the partial answer was discarded"
)


@pytest.mark.parametrize(
    ("error", "faults", "calls", "explained"),
    [
        (RAISED, [("r", "ok"), ("r", "cut_stream_late")], False, True),  # text was shown
        (RAISED, [("r", "cut_stream_late")], True, False),  # only tool calls: should retry
        (GAVE_UP, LATE_FOUR, True, True),  # tool-call streams, retried until the end
        (GAVE_UP, LATE_FOUR, False, False),  # text was shown: never retried
    ],
    ids=["text-shown-raised", "tool-calls-raised", "tool-calls-retried", "text-retried"],
)
def test_a_late_break_is_judged_by_what_the_stream_had_shown(
    error: ModelError, faults: list[tuple[str, str]], calls: bool, explained: bool
) -> None:
    server = _server(*faults, stream=True, calls=calls)
    outcome = Outcome("r", 1, 2, True, 0.5, error=error, events=["RunFailed"])
    if explained:
        assert check_rules([outcome], server, timeout=10, attempts=4) == {"ModelError": 1}
    else:
        with pytest.raises(AssertionError, match="do not explain"):
            check_rules([outcome], server, timeout=10, attempts=4)
