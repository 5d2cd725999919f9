"""OpenTelemetry GenAI spans and metrics from real runs, read back from the SDK's
in-memory exporter and reader."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import anyio
import pytest
from agentsdk.otel import CONTENT_ENV, CONTEXT_FILE, GenAIObserver
from agentsdk.testing import ScriptedModel
from conftest import OTel, remove_providers
from obs_helpers import kill_when_marked

from agentsdk import Agent, ModelResponse, TextPart, Tiers, ToolCallPart, ToolError, Usage, tool

pytestmark = pytest.mark.anyio


def answer(parts: list[Any], model: str, i: int, o: int, finish: str) -> ModelResponse:
    usage = Usage(input_tokens=i, output_tokens=o, requests=1)
    return ModelResponse(parts=parts, usage=usage, model_name=model, finish_reason=finish)


def two_calls_then_answer(model: str = "openai:gpt-4.1-2025-04-14") -> ScriptedModel:
    return ScriptedModel(
        [
            answer(
                [
                    ToolCallPart(name="fetch", arguments={"key": "a"}, id="call_a"),
                    ToolCallPart(name="fetch", arguments={"key": "b"}, id="call_b"),
                    ToolCallPart(name="broken", arguments={}, id="call_c"),
                ],
                model,
                1500,
                40,
                "tool_calls",
            ),
            answer([TextPart(text="a and b")], model, 1800, 7, "stop"),
        ],
        name="openai:gpt-4.1",
    )


def tools_that_overlap() -> list[Any]:
    """``fetch`` calls that only finish once both are running (so they truly run at once)."""
    arrived = {"n": 0}
    both = anyio.Event()

    @tool
    async def fetch(key: str) -> str:
        """Fetch a value."""
        arrived["n"] += 1
        if arrived["n"] == 2:
            both.set()
        with anyio.fail_after(60):
            await both.wait()
        # Long enough that the spans, timed as the events are observed, overlap on a busy
        # machine too (without it each call took ~0.1 ms, less than the observer's gap).
        await anyio.sleep(0.3)
        return f"value of {key}"

    @tool
    def broken() -> str:
        """Always fails."""
        raise ToolError("the backend is down; try later")

    return [fetch, broken]


def by_id(spans: list[Any]) -> dict[int, Any]:
    return {s.context.span_id: s for s in spans}


async def test_a_run_is_one_trace_of_agent_chat_and_tool_spans(otel: OTel) -> None:
    outer_tracer = otel.provider.get_tracer("the-app")
    agent = Agent(two_calls_then_answer(), tools=tools_that_overlap(), name="fetcher")
    with outer_tracer.start_as_current_span("handle request") as outer:
        result = await agent.run("fetch a and b")
    assert result.output == "a and b"

    [run] = otel.named("invoke_agent")
    chats = otel.named("chat")
    tools = otel.named("execute_tool")
    assert run.name == "invoke_agent fetcher" and len(chats) == 2 and len(tools) == 3
    trace_ids = {s.context.trace_id for s in [run, *chats, *tools]}
    assert trace_ids == {outer.get_span_context().trace_id}
    assert run.parent.span_id == outer.get_span_context().span_id
    assert all(s.parent.span_id == run.context.span_id for s in [*chats, *tools])

    a = run.attributes
    assert a["gen_ai.operation.name"] == "invoke_agent" and a["gen_ai.agent.name"] == "fetcher"
    assert a["gen_ai.usage.input_tokens"] == 1500 + 1800
    assert a["gen_ai.usage.output_tokens"] == 47
    assert a["agentsdk.cost_usd"] == pytest.approx(result.cost.usd)

    first, second = sorted(chats, key=lambda s: s.start_time)
    assert first.name == "chat gpt-4.1"
    assert first.attributes["gen_ai.request.model"] == "gpt-4.1"
    assert first.attributes["gen_ai.response.model"] == "gpt-4.1-2025-04-14"
    assert first.attributes["gen_ai.provider.name"] == "openai"
    assert first.attributes["gen_ai.usage.input_tokens"] == 1500
    assert first.attributes["gen_ai.usage.output_tokens"] == 40
    assert tuple(first.attributes["gen_ai.response.finish_reasons"]) == ("tool_calls",)
    assert tuple(second.attributes["gen_ai.response.finish_reasons"]) == ("stop",)
    assert first.end_time <= min(t.start_time for t in tools)  # answered, then the tools ran

    calls = {t.attributes["gen_ai.tool.call.id"]: t for t in tools}
    assert set(calls) == {"call_a", "call_b", "call_c"}
    ta, tb, tc = calls["call_a"], calls["call_b"], calls["call_c"]
    assert ta.name == "execute_tool fetch" and ta.attributes["gen_ai.tool.name"] == "fetch"
    assert ta.start_time < tb.end_time and tb.start_time < ta.end_time  # they overlapped
    assert "error.type" not in ta.attributes and ta.status.is_ok
    assert tc.attributes["error.type"] == "tool_error" and not tc.status.is_ok
    assert "the backend is down" in tc.status.description
    for t in tools:
        assert (t.end_time - t.start_time) / 1e9 == pytest.approx(
            t.attributes["agentsdk.duration_s"], abs=1e-6
        )
    # no content without the opt-in
    everything = [k for s in otel.spans() for k in s.attributes]
    assert not [k for k in everything if "messages" in k or "arguments" in k or "result" in k]


async def test_spans_of_a_stream_hang_under_the_span_around_it(otel: OTel) -> None:
    outer_tracer = otel.provider.get_tracer("the-app")
    agent = Agent(two_calls_then_answer(), tools=tools_that_overlap())
    with outer_tracer.start_as_current_span("ws message") as outer:
        seen = [type(e).__name__ async for e in agent.stream("fetch a and b")]
    assert seen[-1] == "RunFinished"
    [run] = otel.named("invoke_agent")
    assert run.parent.span_id == outer.get_span_context().span_id
    assert len({s.context.trace_id for s in otel.spans()}) == 1


async def test_tiers_and_request_settings_are_on_the_chat_span(otel: OTel) -> None:
    from agentsdk import ModelSettings

    fast = ScriptedModel([answer([TextPart(text="hi")], "local:qwen-0.5b", 30, 2, "stop")])
    fast.name = "local:qwen-0.5b"
    standard = ScriptedModel([], name="anthropic:claude-sonnet-4-5")
    agent = Agent(
        Tiers(fast=fast, standard=standard),
        settings=ModelSettings(temperature=0.2, max_tokens=64, seed=7),
    )
    await agent.run("hello")
    [chat] = otel.named("chat")
    assert chat.attributes["agentsdk.tier"] == "fast"
    assert chat.attributes["gen_ai.provider.name"] == "local"
    assert chat.attributes["gen_ai.request.temperature"] == 0.2
    assert chat.attributes["gen_ai.request.max_tokens"] == 64
    assert chat.attributes["gen_ai.request.seed"] == 7
    assert chat.attributes["agentsdk.cost_usd"] == 0.0


async def test_content_is_captured_only_when_asked_and_stays_redacted(
    otel: OTel, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CONTENT_ENV, "true")
    secret = "sk-proj-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1"

    @tool
    def login(user: str, api_key: str) -> str:
        """Log in."""
        return f"welcome {user}"

    model = ScriptedModel(
        [
            ToolCallPart(name="login", arguments={"user": "ann", "api_key": secret}, id="c1"),
            "logged in as ann",
        ]
    )
    await Agent(model, "You log people in.", tools=[login]).run(f"log in ann with {secret}")
    [run] = otel.named("invoke_agent")
    [call] = otel.named("execute_tool")
    chats = sorted(otel.named("chat"), key=lambda s: s.start_time)
    dumped = json.dumps([dict(s.attributes) for s in otel.spans()])
    assert secret not in dumped
    prompt = json.loads(run.attributes["gen_ai.input.messages"])
    assert prompt[0]["role"] == "user" and "log in ann with" in prompt[0]["parts"][0]["content"]
    assert "You log people in." in run.attributes["gen_ai.system_instructions"]
    assert json.loads(call.attributes["gen_ai.tool.call.arguments"]) == {
        "user": "ann",
        "api_key": "[REDACTED]",
    }
    assert call.attributes["gen_ai.tool.call.result"] == "welcome ann"
    out = json.loads(chats[0].attributes["gen_ai.output.messages"])
    assert out[0]["parts"][0]["name"] == "login"
    assert json.loads(run.attributes["gen_ai.output.messages"])[0]["parts"][0]["content"] == (
        "logged in as ann"
    )


async def test_metrics_count_tokens_and_durations(otel: OTel) -> None:
    agent = Agent(two_calls_then_answer(), tools=tools_that_overlap())
    await agent.run("fetch a and b")
    tokens = otel.metric_points("gen_ai.client.token.usage")
    by_type = {p.attributes["gen_ai.token.type"]: p for p in tokens}
    assert by_type["input"].sum == 1500 + 1800 and by_type["input"].count == 2
    assert by_type["output"].sum == 47
    assert by_type["input"].attributes["gen_ai.request.model"] == "gpt-4.1"
    [chat_time] = otel.metric_points("gen_ai.client.operation.duration")
    assert chat_time.count == 2 and chat_time.sum >= 0
    tool_points = otel.metric_points("gen_ai.execute_tool.duration")
    assert sum(p.count for p in tool_points) == 3
    assert {p.attributes.get("error.type") for p in tool_points} == {None, "tool_error"}
    [agent_time] = otel.metric_points("gen_ai.invoke_agent.duration")
    assert agent_time.count == 1


async def test_a_failed_run_ends_its_spans_with_the_error(otel: OTel) -> None:
    model = ScriptedModel([ToolCallPart(name="nope", arguments={})] * 3)
    with pytest.raises(Exception, match="invalid arguments"):
        await Agent(model, max_turns=5).run("go")
    [run] = otel.named("invoke_agent")
    assert run.attributes["error.type"] == "ToolRetriesExceeded" and not run.status.is_ok


async def test_a_resumed_run_continues_the_trace_of_the_run_it_resumes(
    otel: OTel, tmp_path: Path
) -> None:
    @tool(needs_approval=True)
    def delete(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}"

    model = ScriptedModel(
        [ToolCallPart(name="delete", arguments={"path": "a.txt"}, id="d1"), "deleted it"]
    )
    agent = Agent(model, tools=[delete], store=tmp_path / "runs.db", artifacts_dir=tmp_path)
    paused = await agent.run("delete a.txt", run_id="r-1")
    assert paused.status == "awaiting_approval"
    assert (tmp_path / "r-1" / CONTEXT_FILE).exists()
    outer_tracer = otel.provider.get_tracer("the-app")
    with outer_tracer.start_as_current_span("approval webhook") as webhook:
        done = await agent.resume("r-1", approvals={"d1": True})
    assert done.output == "deleted it"
    first, second = sorted(otel.named("invoke_agent"), key=lambda s: s.start_time)
    assert first.attributes["agentsdk.status"] == "awaiting_approval"
    assert second.attributes["agentsdk.resumed"] is True
    assert second.context.trace_id == first.context.trace_id
    assert second.parent.span_id == first.context.span_id
    assert [link.context.span_id for link in second.links] == [webhook.get_span_context().span_id]
    [call] = otel.named("execute_tool")
    assert call.parent.span_id == second.context.span_id


async def test_without_a_provider_nothing_is_made(tmp_path: Path) -> None:
    remove_providers()
    model = ScriptedModel(["hi"])
    agent = Agent(model, store=tmp_path / "runs.db", artifacts_dir=tmp_path)
    cfg = agent._config(None, None, None, False, None)
    assert GenAIObserver.for_run(agent, cfg) is None
    await agent.run("hello", run_id="r-2")
    assert not (tmp_path / "r-2").exists()


CRASHING_RUN = """
import sys, time
from pathlib import Path
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from agentsdk import Agent, ToolCallPart, tool
from agentsdk.testing import ScriptedModel

trace.set_tracer_provider(TracerProvider())  # spans made, sent nowhere
folder, marker = Path(sys.argv[1]), Path(sys.argv[2])

@tool
def slow_step() -> str:
    '''A step that hangs the first time.'''
    if not marker.exists():
        marker.write_text("hanging")
        time.sleep(600)
    return "step done"

model = ScriptedModel([ToolCallPart(name="slow_step", arguments={}, id="s1"), "unused"])
agent = Agent(model, tools=[slow_step], store=folder / "runs.db", artifacts_dir=folder)
agent.run_sync("go", run_id="crashy")
"""


async def test_a_run_resumed_after_a_crash_continues_its_trace(otel: OTel, tmp_path: Path) -> None:
    marker = tmp_path / "hanging"
    status = kill_when_marked(CRASHING_RUN, [str(tmp_path), str(marker)], marker)
    assert status == -signal.SIGKILL
    saved = json.loads((tmp_path / "crashy" / CONTEXT_FILE).read_text())
    crashed_trace, crashed_span = saved["traceparent"].split("-")[1:3]

    @tool
    def slow_step() -> str:
        """A step that hangs the first time."""
        return "step done"

    agent = Agent(
        ScriptedModel(["finished after the crash"]),
        tools=[slow_step],
        store=tmp_path / "runs.db",
        artifacts_dir=tmp_path,
    )
    result = await agent.resume("crashy")
    assert result.output == "finished after the crash"
    [run] = otel.named("invoke_agent")
    assert f"{run.context.trace_id:032x}" == crashed_trace
    assert f"{run.parent.span_id:016x}" == crashed_span
    assert all(s.context.trace_id == run.context.trace_id for s in otel.spans())
