"""JSONL traces: numbers and ids survive redaction, secrets of real shapes do not,
each event is on disk as it happens, and a timed-out run says RunTimeout."""

from __future__ import annotations

import json
import signal
import textwrap
from pathlib import Path

import anyio
import pytest
from agentsdk.events import (
    EVENT_TYPES,
    ImageProduced,
    ModelRequestStarted,
    RunFailed,
    RunFinished,
    RunPaused,
    RunStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolFinishedLate,
    TurnFinished,
    event_to_dict,
)
from agentsdk.pricing import turn_cost
from agentsdk.testing import ScriptedModel
from agentsdk.tracing import REDACTED, JsonlTracer, Redactor, TraceError, read_trace
from obs_helpers import kill_when_marked

from agentsdk import Agent, ModelResponse, RunTimeout, TextPart, ToolCallPart, Usage, tool, tracing

pytestmark = pytest.mark.anyio

USAGE = Usage(
    input_tokens=12345, output_tokens=678, cache_read_tokens=9000, cache_write_tokens=11, requests=1
)


def one_of_each() -> list[object]:
    """An instance of every event type, with numbers a secret filter might eat."""
    return [
        RunStarted("run-1", "agent", "list the token counts", "openai:gpt-4.1", ["a", "b"], True),
        ModelRequestStarted("run-1", 3, "openai:gpt-4.1", "fast"),
        TextDelta("run-1", 3, "the token budget is 4096"),
        ToolCallStarted("run-1", 3, "call_tok_1", "count_tokens", {"max_tokens": 512, "n": 2}),
        ToolCallFinished("run-1", 3, "call_tok_1", "count_tokens", 0.125, False, "input_tokens=5"),
        ImageProduced("run-1", 3, "call_tok_1", "render", "/tmp/x/001-render.png", "image/png"),
        TurnFinished("run-1", 3, "openai:gpt-4.1", "fast", USAGE, 2, "tool_calls"),
        RunPaused("run-1", 4, [{"call_id": "call_tok_2", "tool": "rm"}]),
        ToolFinishedLate("run-1", 3, "call_tok_1", "count_tokens", 1.5),
        RunFinished("run-1", {"tokens": 42, "token_id": "t-9"}, 4, USAGE),
        RunFailed("run-1", "MaxTurnsExceeded", "used all 20 turns; 120000 tokens"),
    ]


def test_every_event_type_round_trips_with_its_numbers(tmp_path: Path) -> None:
    events = one_of_each()
    assert {type(e).__name__ for e in events} == set(EVENT_TYPES)  # none forgotten
    path = tmp_path / "t.jsonl"
    tracer = JsonlTracer(path)
    for event in events:
        tracer.write(event)  # type: ignore[arg-type]
    tracer.close()
    back = read_trace(path)
    assert len(back) == len(events)
    for event, line in zip(events, back, strict=True):
        expected = event_to_dict(event)  # type: ignore[arg-type]
        line.pop("cost_usd", None)
        assert isinstance(line.pop("ts"), float)
        assert line == expected
    assert REDACTED not in path.read_text()
    turn = next(e for e in back if e["event"] == "TurnFinished")
    assert turn["usage"]["input_tokens"] == 12345 and turn["usage"]["cache_read_tokens"] == 9000


def test_turns_carry_their_cost(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    tracer = JsonlTracer(path)
    tracer.write(TurnFinished("r", 1, "openai:gpt-4.1", None, USAGE, 0, "stop"))
    tracer.close()
    # 12345 input of which 9000 cached and 11 written (billed as input), 678 output
    expected = ((12345 - 9000) * 2.00 + 9000 * 0.50 + 678 * 8.00) / 1e6
    assert read_trace(path)[0]["cost_usd"] == pytest.approx(expected)
    assert turn_cost("openai:gpt-4.1", USAGE) == pytest.approx(expected)


# Secrets of the shapes real services issue (made-up values).
SECRETS = {
    "openai": "sk-proj-Xq3vT9mKpL2wR7nB4cY8dF1gH6jZ0aE5sU",
    "anthropic": "sk-ant-api03-Kd8Fj2Lq9Wm4Xn7Rb3Tc6Vy1Zs5Pa0Ge-hU2iO9pQ",
    "aws_id": "AKIAIOSFODNN7EXAMPLE",
    "aws_secret": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "github": "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    "github_pat": "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123",
    "bearer": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
    "url_password": "hunter2-Correct-Horse",
    "env_named": "postgres-dsn-secret-value-77",
    "env_shaped": "a1b2c3d4e5f6g7h8i9",
}


async def test_real_secret_shapes_never_reach_the_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACME_AUTH_TOKEN", SECRETS["env_shaped"])
    monkeypatch.setenv("DB_DSN", SECRETS["env_named"])  # not secret-looking: named here
    monkeypatch.setattr(tracing, "_SECRET_ENV_NAMES", set())
    tracing.redact(env=["DB_DSN"])
    s = SECRETS
    leaked_text = (
        f"OPENAI_API_KEY={s['openai']} and {s['anthropic']}\n"
        f"aws_access_key_id = {s['aws_id']}\naws_secret_access_key = {s['aws_secret']}\n"
        f"git clone https://x:{s['github']}@github.com/a/b; token {s['github_pat']}\n"
        f"curl -H 'Authorization: Bearer {s['bearer']}' "
        f"postgres://admin:{s['url_password']}@db.internal:5432/app dsn={s['env_named']}"
    )

    @tool
    def read_env_file(path: str, password: str) -> str:
        """Read a file of settings."""
        return leaked_text

    model = ScriptedModel(
        [
            ToolCallPart(
                name="read_env_file",
                arguments={"path": ".env", "password": s["url_password"]},
                id="call_secret_1",
            ),
            f"Found {s['openai']}; the header was Bearer {s['bearer']}",
        ]
    )
    trace = tmp_path / "run.jsonl"
    agent = Agent(model, tools=[read_env_file], trace=trace)
    await agent.run(f"read my .env (password={s['url_password']}) and use {s['env_shaped']}")
    raw = trace.read_text()
    for name, secret in SECRETS.items():
        assert secret not in raw, name
    events = read_trace(trace)
    started = next(e for e in events if e["event"] == "ToolCallStarted")
    assert started["arguments"] == {"path": ".env", "password": REDACTED}
    assert started["call_id"] == "call_secret_1"  # ids are not secrets
    finished = next(e for e in events if e["event"] == "ToolCallFinished")
    # what is around a secret stays readable
    assert finished["preview"].startswith(f"OPENAI_API_KEY={REDACTED} and {REDACTED}")
    assert events[-1]["usage"]["requests"] == 2 and events[-1]["usage"]["output_tokens"] > 0


def test_what_is_not_a_secret_stays() -> None:
    r = Redactor()
    benign = {
        "input_tokens": 1200,
        "max_tokens": 256,
        "tokens": ["a", "b"],
        "token_id": "tok_123",
        "call_id": "call_abc",
        "author": "Ann",
        "note": "sk-learn is a library; sha256 1d9614638d18024d0fbb36575a15f1302a3adf044df1",
        "url": "https://example.com/path?page=2",
        "text": "max_tokens: 100, input_tokens=5, a tokenizer",
    }
    assert r.data(benign) == benign
    assert r.data({"api_key": "abc-123-def", "auth": {"user": "u", "token": 5}}) == {
        "api_key": REDACTED,
        "auth": {"user": REDACTED, "token": 5},  # numbers are never hidden
    }


def test_a_torn_last_line_is_left_out_and_a_corrupt_one_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"event": "RunStarted", "run_id": "r"}\n{"event": "TextDe')
    assert [e["event"] for e in read_trace(path)] == ["RunStarted"]
    path.write_text('{"event": "RunStarted"}\nnot json\n{"event": "RunFinished"}\n')
    with pytest.raises(TraceError, match=r"t.jsonl:2"):
        read_trace(path)


KILLED_RUN = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from agentsdk import Agent, ToolCallPart, tool
    from agentsdk.testing import ScriptedModel

    trace, marker = Path(sys.argv[1]), Path(sys.argv[2])

    @tool
    def step(n: int) -> str:
        '''One step.'''
        if n == 2:
            marker.write_text("hanging")
            time.sleep(600)
        return f"step {n} done"

    model = ScriptedModel([
        ToolCallPart(name="step", arguments={"n": 1}, id="c1"),
        ToolCallPart(name="step", arguments={"n": 2}, id="c2"),
        "never reached",
    ])
    Agent(model, tools=[step], trace=trace).run_sync("go")
    """
)


def test_a_sigkilled_run_leaves_a_valid_trace_up_to_its_last_event(tmp_path: Path) -> None:
    trace, marker = tmp_path / "run.jsonl", tmp_path / "hanging"
    status = kill_when_marked(KILLED_RUN, [str(trace), str(marker)], marker)
    # the second call is running: everything before it must already be on disk
    assert status == -signal.SIGKILL
    raw = trace.read_text()
    assert raw.endswith("\n")  # whole lines only
    events = read_trace(trace)
    assert [e["event"] for e in events] == [
        "RunStarted",
        "ModelRequestStarted",
        "ToolCallStarted",
        "ToolCallFinished",
        "TurnFinished",
        "ModelRequestStarted",
        "ToolCallStarted",
    ]
    assert events[3]["preview"] == "step 1 done" and events[-1]["arguments"] == {"n": 2}
    assert all(json.loads(line) for line in raw.splitlines())


def slow_tool_agent(trace: Path, timeout: float | None) -> Agent:
    @tool
    async def wait_forever() -> str:
        """Wait."""
        await anyio.sleep(3600)
        return "never"

    model = ScriptedModel([ToolCallPart(name="wait_forever", arguments={})])
    return Agent(model, tools=[wait_forever], trace=trace, timeout=timeout)


async def test_a_timed_out_run_says_run_timeout(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    with pytest.raises(RunTimeout):
        await slow_tool_agent(trace, timeout=1.0).run("go")
    last = read_trace(trace)[-1]
    assert last["event"] == "RunFailed" and last["error_type"] == "RunTimeout"
    assert "1 s timeout" in last["message"]


async def test_a_timed_out_stream_says_run_timeout_once(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    seen: list[str] = []
    with pytest.raises(RunTimeout):
        async for event in slow_tool_agent(trace, timeout=1.0).stream("go"):
            seen.append(type(event).__name__)
    assert seen[-1] == "RunFailed"
    failed = [e for e in read_trace(trace) if e["event"] == "RunFailed"]
    assert [e["error_type"] for e in failed] == ["RunTimeout"]


async def test_a_cancelled_run_says_cancelled(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    agent = slow_tool_agent(trace, timeout=None)
    async with anyio.create_task_group() as tg:
        calling = anyio.Event()

        def seen(event: object) -> None:
            if isinstance(event, ToolCallStarted):
                calling.set()

        async def run() -> None:
            await agent.run("go", on_event=seen)

        tg.start_soon(run)
        with anyio.fail_after(60):
            await calling.wait()
        tg.cancel_scope.cancel()
    last = read_trace(trace)[-1]
    assert last["event"] == "RunFailed" and last["error_type"] == "Cancelled"


async def test_each_event_is_on_disk_when_it_is_seen(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    model = ScriptedModel(
        [
            ModelResponse(
                parts=[TextPart(text="the answer")],
                usage=Usage(input_tokens=40, output_tokens=3, requests=1),
                model_name="openai:gpt-4.1-mini",
                finish_reason="stop",
            )
        ]
    )
    lines_when_seen: list[int] = []

    def seen(event: object) -> None:
        lines_when_seen.append(len(trace.read_text().splitlines()))

    result = await Agent(model, trace=trace).run("q", on_event=seen)
    assert lines_when_seen == list(range(1, len(lines_when_seen) + 1))
    finished = read_trace(trace)[-1]
    assert finished["cost_usd"] == pytest.approx((40 * 0.40 + 3 * 1.60) / 1e6)
    assert result.cost.usd == pytest.approx(finished["cost_usd"])
