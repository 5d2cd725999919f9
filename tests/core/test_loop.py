"""The agent loop with ScriptedModel/FunctionModel and real tools."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest
from agentsdk.events import (
    ImageProduced,
    ModelRequestStarted,
    RunFailed,
    RunFinished,
    TextDelta,
    ToolCallFinished,
    TurnFinished,
)
from agentsdk.sandbox import run_process
from agentsdk.testing import FunctionModel, ScriptedModel
from pydantic import BaseModel

from agentsdk import (
    Agent,
    FallbackModel,
    Image,
    ImagePart,
    MaxTurnsExceeded,
    ModelError,
    ModelProfile,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    OutputValidationError,
    RunTimeout,
    TextPart,
    Tiers,
    ToolCallPart,
    ToolRetriesExceeded,
    TurnInfo,
    tool,
)


def _png() -> bytes:
    import io

    from PIL import Image as PILImage

    buf = io.BytesIO()
    PILImage.new("RGB", (1, 1), (255, 0, 0)).save(buf, "PNG")
    return buf.getvalue()


PNG_1PX = _png()

pytestmark = pytest.mark.anyio


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def call(name: str, **arguments: object) -> ToolCallPart:
    return ToolCallPart(name=name, arguments=arguments)


def tool_texts(result_messages: list) -> list[str]:  # type: ignore[type-arg]
    return [r.text for m in result_messages for r in m.tool_results]


async def test_round_trip_and_usage() -> None:
    model = ScriptedModel([call("add", a=2, b=3), "The sum is 5."])
    result = await Agent(model, "You add.", tools=[add]).run("2+3?")
    assert result.output == "The sum is 5."
    assert result.turns == 2 and result.usage.requests == 2
    assert result.usage_by_model["scripted"].requests == 2
    assert tool_texts(result.messages) == ["5"]
    assert [m.role for m in result.messages] == ["system", "user", "assistant", "tool", "assistant"]
    second = model.requests[1]
    assert second.messages[-1].tool_results[0].text == "5"
    assert second.tools[0].name == "add"
    model.assert_consumed()


async def test_two_tools_in_one_turn_really_overlap() -> None:
    both_started = anyio.Event()
    arrived = 0

    @tool
    async def meet(who: str) -> str:
        nonlocal arrived
        arrived += 1
        if arrived == 2:
            both_started.set()
        with anyio.fail_after(5):  # would time out if the calls ran one after the other
            await both_started.wait()
        return f"{who} met"

    model = ScriptedModel([[call("meet", who="a"), call("meet", who="b")], "done"])
    result = await Agent(model, tools=[meet]).run("go")
    assert tool_texts(result.messages) == ["a met", "b met"]


async def test_sequential_tools_never_overlap() -> None:
    running, peak = 0, 0

    @tool(sequential=True)
    async def exclusive(n: int) -> int:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await anyio.sleep(0.01)
        running -= 1
        return n

    model = ScriptedModel([[call("exclusive", n=i) for i in range(4)], "done"])
    result = await Agent(model, tools=[exclusive]).run("go")
    assert peak == 1
    assert tool_texts(result.messages) == ["0", "1", "2", "3"]


async def test_error_paths_reach_the_model_and_the_run_continues() -> None:
    @tool(timeout=0.2)
    async def hang() -> str:
        await anyio.sleep(60)
        return "never"

    @tool
    def crash() -> str:
        raise ValueError("bad state")

    model = ScriptedModel(
        [
            [
                call("hang"),
                call("crash"),
                call("nope"),
                call("add", a="x", b=1),
                ToolCallPart(name="add", raw_arguments='{"a": 1,'),
            ],
            "recovered",
        ]
    )
    result = await Agent(model, tools=[add, hang, crash]).run("go")
    assert result.output == "recovered"
    texts = tool_texts(result.messages)
    assert texts[0] == "Tool 'hang' timed out after 0.2 s."
    assert texts[1] == "Tool 'crash' failed: ValueError: bad state"
    assert texts[2] == "Unknown tool 'nope'. Available tools: add, crash, hang."
    assert "a: Input should be a valid integer" in texts[3]
    assert "could not be read: invalid JSON" in texts[4] and '{"a": 1,' in texts[4]
    results = [r for m in result.messages for r in m.tool_results]
    assert all(r.is_error for r in results)


async def test_validation_retries_are_bounded() -> None:
    bad = call("add", a="x", b=1)
    model = ScriptedModel([bad, bad, bad, "unreachable"])
    with pytest.raises(
        ToolRetriesExceeded, match="invalid arguments to tool 'add' 3 times"
    ) as info:
        await Agent(model, tools=[add]).run("go")
    assert info.value.result is not None and info.value.result.turns == 3


async def test_max_turns_carries_partial_result() -> None:
    model = FunctionModel(lambda request: call("add", a=1, b=1))
    with pytest.raises(MaxTurnsExceeded) as info:
        await Agent(model, tools=[add], max_turns=3, loop_guard=None).run("loop forever")
    partial = info.value.result
    assert partial is not None and partial.turns == 3
    assert tool_texts(partial.messages) == ["2", "2", "2"]


async def test_a_request_says_when_it_is_the_runs_last_turn() -> None:
    # A model that would turn an answer into one more call (the local model's checks for a
    # skipped part) must not on the last turn: the run would end on its limit unanswered.
    model = FunctionModel(lambda request: call("add", a=1, b=1))
    with pytest.raises(MaxTurnsExceeded):
        await Agent(model, tools=[add], max_turns=3, loop_guard=None).run("loop forever")
    assert [r.last_turn for r in model.requests] == [False, False, True]
    answered = ScriptedModel([call("add", a=1, b=2), "3"])
    result = await Agent(answered, tools=[add], max_turns=5).run("go", max_turns=2)
    assert result.output == "3"
    assert [r.last_turn for r in answered.requests] == [False, True]


async def test_max_turns_per_run_overrides_the_agent() -> None:
    model = FunctionModel(lambda request: call("add", a=1, b=1))
    agent = Agent(model, tools=[add], max_turns=10)
    with pytest.raises(MaxTurnsExceeded) as info:
        await agent.run("loop forever", max_turns=2)
    assert info.value.result is not None and info.value.result.turns == 2
    with pytest.raises(ValueError, match="max_turns must be at least 1"):
        await agent.run("go", max_turns=0)
    assert agent.max_turns == 10  # the override did not stick


def _calls_until_told_otherwise(request: ModelRequest) -> ToolCallPart | str:
    # Calls add while a tool call is forced; answers as soon as it may.
    return call("add", a=2, b=3) if request.settings.tool_choice in ("required", "add") else "five"


@pytest.mark.parametrize("stream", [False, True])
async def test_forced_tool_choice_resets_to_auto_after_a_tool_call(stream: bool) -> None:
    model = FunctionModel(_calls_until_told_otherwise)
    agent = Agent(model, tools=[add], settings=ModelSettings(tool_choice="required"))
    if stream:
        events = [e async for e in agent.stream("add 2 and 3")]
        result = events[-1].result  # type: ignore[union-attr]
    else:
        result = await agent.run("add 2 and 3")
    assert [r.settings.tool_choice for r in model.requests] == ["required", "auto"]
    assert result.output == "five" and tool_texts(result.messages) == ["5"]
    assert agent.settings.tool_choice == "required"  # the next run is forced again


async def test_forced_tool_choice_kept_when_reset_is_off() -> None:
    model = FunctionModel(_calls_until_told_otherwise)
    agent = Agent(
        model,
        tools=[add],
        settings=ModelSettings(tool_choice="add"),
        reset_tool_choice=False,
        max_turns=3,
    )
    with pytest.raises(MaxTurnsExceeded):
        await agent.run("add 2 and 3")
    assert [r.settings.tool_choice for r in model.requests] == ["add", "add", "add"]


async def test_run_timeout() -> None:
    @tool
    async def slow() -> str:
        await anyio.sleep(30)
        return "late"

    agent = Agent(ScriptedModel([call("slow"), "x"]), tools=[slow], timeout=0.3)
    with pytest.raises(RunTimeout):
        await agent.run("go")


async def test_cancelling_a_run_kills_its_sandboxed_child() -> None:
    pids: list[int] = []
    started = anyio.Event()

    @tool
    async def long_job() -> str:
        async def watch() -> None:
            # the pid appears once the child exists
            while True:
                out = await run_process(["pgrep", "-f", "sleep 1234"], timeout=5)
                if out.stdout.strip():
                    pids.extend(int(p) for p in out.stdout.split())
                    started.set()
                    return
                await anyio.sleep(0.05)

        async with anyio.create_task_group() as tg:
            tg.start_soon(watch)
            result = await run_process(["bash", "-c", "sleep 1234; echo done"])
        return result.stdout

    agent = Agent(ScriptedModel([call("long_job"), "x"]), tools=[long_job])
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, "go")
        with anyio.fail_after(10):
            await started.wait()
        tg.cancel_scope.cancel()
    assert pids
    await anyio.sleep(0.1)
    for pid in pids:
        assert (
            not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z"
        )


class Answer(BaseModel):
    city: str
    population: int


async def test_output_type_is_validated_with_bounded_retry() -> None:
    model = ScriptedModel(
        ['{"city": "Oslo"}', '```json\n{"city": "Oslo", "population": 709000}\n```']
    )
    result = await Agent(model, output_type=Answer).run("Largest Norwegian city?")
    assert result.output == Answer(city="Oslo", population=709000)
    retry_prompt = model.requests[1].messages[-1].text
    assert "did not match the required schema" in retry_prompt and "population" in retry_prompt
    assert model.requests[0].output_schema is not None
    assert "JSON schema" in model.requests[0].messages[0].text

    always_bad = ScriptedModel(["nope", "nope", "nope"])
    with pytest.raises(OutputValidationError):
        await Agent(always_bad, output_type=Answer, output_retries=2).run("?")


@tool
def snapshot(label: str) -> list[object]:
    """Return a picture."""
    return [f"rendered {label}", Image(PNG_1PX)]


async def test_images_inside_tool_results_when_the_profile_allows(tmp_path) -> None:  # type: ignore[no-untyped-def]
    profile = ModelProfile(images_in_tool_results=True, image_input=True)
    model = ScriptedModel([call("snapshot", label="a"), "seen"], profile=profile)
    events = []
    agent = Agent(model, tools=[snapshot], artifacts_dir=tmp_path)
    async for event in agent.stream("draw"):
        events.append(event)
    result_msg = model.requests[1].messages[-1]
    assert result_msg.role == "tool"
    assert [type(p) for p in result_msg.tool_results[0].parts] == [TextPart, ImagePart]
    produced = [e for e in events if isinstance(e, ImageProduced)]
    assert len(produced) == 1 and open(produced[0].path, "rb").read() == PNG_1PX


async def test_images_move_to_a_trailing_user_message_otherwise(tmp_path) -> None:  # type: ignore[no-untyped-def]
    profile = ModelProfile(images_in_tool_results=False, image_input=True)
    first = call("snapshot", label="a")
    model = ScriptedModel([first, "seen"], profile=profile)
    await Agent(model, tools=[snapshot], artifacts_dir=tmp_path).run("draw")
    tool_msg, trailing = model.requests[1].messages[-2:]
    assert tool_msg.role == "tool"
    assert not any(isinstance(p, ImagePart) for p in tool_msg.tool_results[0].parts)
    assert "attached in the next user message" in tool_msg.tool_results[0].text
    assert trailing.role == "user"
    assert first.id in trailing.parts[0].text  # names the call the image came from
    assert isinstance(trailing.parts[1], ImagePart)


async def test_models_without_image_input_get_the_saved_path(tmp_path) -> None:  # type: ignore[no-untyped-def]
    model = ScriptedModel([call("snapshot", label="a"), "ok"], profile=ModelProfile())
    await Agent(model, tools=[snapshot], artifacts_dir=tmp_path).run("draw")
    text = model.requests[1].messages[-1].tool_results[0].text
    assert "cannot view images" in text and str(tmp_path) in text


@tool
def views(n: int) -> list[object]:
    """Return n pictures between two lines of text."""
    return ["rendered", *[Image(PNG_1PX) for _ in range(n)], "done"]


async def test_a_model_without_image_input_reads_one_line_for_all_of_a_calls_images(
    tmp_path,
) -> None:  # type: ignore[no-untyped-def]
    model = ScriptedModel([call("views", n=8), "ok"], profile=ModelProfile())
    events = []
    await Agent(model, tools=[views], artifacts_dir=tmp_path).run("draw", on_event=events.append)
    parts = model.requests[1].messages[-1].tool_results[0].parts
    texts = [p.text for p in parts if isinstance(p, TextPart)]
    assert len(texts) == 3 and texts[0] == "rendered" and texts[2] == "done"
    saved = [e.path for e in events if isinstance(e, ImageProduced)]
    assert len(saved) == 8 and len({Path(p).parent for p in saved}) == 1
    line = texts[1]
    assert line.startswith(f"[8 images saved in {Path(saved[0]).parent}: ")
    assert all(Path(p).name in line for p in saved) and str(saved[1]) not in line
    assert line.endswith("; this model cannot view images]")


async def test_only_the_latest_k_images_stay_in_context(tmp_path) -> None:  # type: ignore[no-untyped-def]
    profile = ModelProfile(images_in_tool_results=True, image_input=True)
    steps = [call("snapshot", label=str(i)) for i in range(5)] + ["done"]
    model = ScriptedModel(steps, profile=profile)
    await Agent(model, tools=[snapshot], keep_images=2, artifacts_dir=tmp_path).run("draw 5")
    last = model.requests[-1].messages
    images = [p for m in last for r in m.tool_results for p in r.parts if isinstance(p, ImagePart)]
    assert len(images) == 2
    placeholders = [r.text for m in last for r in m.tool_results if "older image removed" in r.text]
    assert len(placeholders) == 3 and str(tmp_path) in placeholders[0]


async def test_long_tool_output_is_truncated_and_saved(tmp_path) -> None:  # type: ignore[no-untyped-def]
    @tool
    def dump() -> str:
        return "x" * 5000

    model = ScriptedModel([call("dump"), "ok"])
    await Agent(model, tools=[dump], max_tool_output_chars=100, artifacts_dir=tmp_path).run("go")
    text = model.requests[1].messages[-1].tool_results[0].text
    assert text.startswith("x" * 100) and "showing 100 of 5000 characters" in text
    saved = text.rsplit("saved at ", 1)[1].rstrip("]")
    assert open(saved).read() == "x" * 5000


async def test_stream_yields_text_deltas_and_failure_event() -> None:
    model = ScriptedModel(["hello there world"])
    deltas = [e.text async for e in Agent(model).stream("hi") if isinstance(e, TextDelta)]
    assert "".join(deltas) == "hello there world" and len(deltas) == 3

    failing = ScriptedModel([ModelError("server down", retryable=True)])
    seen = []
    with pytest.raises(ModelError, match="server down"):
        async for event in Agent(failing).stream("hi"):
            seen.append(event)
    assert isinstance(seen[-1], RunFailed) and seen[-1].message == "server down"


async def test_fallback_moves_on_after_retryable_error() -> None:
    broken = ScriptedModel([ModelError("429", retryable=True)], name="primary")
    backup = ScriptedModel(["from backup"], name="backup")
    result = await Agent(FallbackModel([broken, backup])).run("hi")
    assert result.output == "from backup"
    assert list(result.usage_by_model) == ["backup"]

    fatal = ScriptedModel([ModelError("bad key", retryable=False)])
    with pytest.raises(ModelError, match="bad key"):
        await Agent(FallbackModel([fatal, ScriptedModel(["x"])])).run("hi")


async def test_tiers_pick_fast_for_text_turns_and_standard_when_tools_are_offered() -> None:
    fast = ScriptedModel(["quick answer"], name="fast-model")
    standard = ScriptedModel([call("add", a=1, b=2), "3"], name="std-model")
    result = await Agent(Tiers(fast=fast, standard=standard)).run("hi")
    assert result.output == "quick answer" and not standard.requests

    fast2 = ScriptedModel([], name="fast-model")
    agent = Agent(Tiers(fast=fast2, standard=standard), tools=[add])
    finished = [e async for e in agent.stream("add") if isinstance(e, ToolCallFinished)]
    assert finished and not fast2.requests and len(standard.requests) == 2


async def test_an_escalated_fast_answer_is_asked_of_the_standard_tier() -> None:
    seen: list[tuple[int, str]] = []

    def escalate(info: TurnInfo, response: ModelResponse) -> bool:
        seen.append((info.turn, response.text))
        return response.text.startswith("?")

    fast = ScriptedModel(["? the request again"], name="fast-model")
    standard = ScriptedModel([call("add", a=1, b=2), "1 + 2 is 3"], name="std-model")
    picks = iter(["standard", "fast"])
    tiers = Tiers(fast=fast, standard=standard, policy=lambda _: next(picks), escalate=escalate)
    events: list[object] = []
    result = await Agent(tiers, tools=[add]).run("add 1 and 2", on_event=events.append)
    assert result.output == "1 + 2 is 3"
    assert seen == [(2, "? the request again")]  # only fast answers are judged
    started = [(e.turn, e.tier) for e in events if isinstance(e, ModelRequestStarted)]
    assert started == [(1, "standard"), (2, "fast"), (2, "standard")]
    finished = [e for e in events if isinstance(e, TurnFinished)]
    assert [e.tier for e in finished] == ["standard", "standard"]
    assert finished[-1].usage.requests == 2  # the fast request and the standard one
    assert set(result.usage_by_model) == {"fast-model", "std-model"}
    assert len(standard.requests) == 2 and standard.requests[1] == fast.requests[0]
    # or another request: here the same with tools off
    quiet = Tiers(
        fast=ScriptedModel(["?"], name="f"),
        standard=ScriptedModel(["an answer"], name="s"),
        policy=lambda _: "fast",
        escalate=lambda i, _r: i.request.model_copy(
            update={"settings": ModelSettings(tool_choice="none")}
        ),
    )
    assert (await Agent(quiet, tools=[add]).run("hi")).output == "an answer"
    assert quiet.model("standard").requests[0].settings.tool_choice == "none"  # type: ignore[attr-defined]

    # a fast answer that will do stands, and a streamed turn is never asked twice
    fine = Tiers(
        fast=ScriptedModel(["fine"], name="f"), standard=ScriptedModel([], name="s"),
        policy=lambda _: "fast", escalate=lambda _i, r: r.text != "fine",
    )  # fmt: skip
    assert (await Agent(fine).run("hi")).output == "fine"
    streamed = Tiers(
        fast=ScriptedModel(["?"], name="f"), standard=ScriptedModel([], name="s"),
        policy=lambda _: "fast", escalate=lambda _i, _r: True,
    )  # fmt: skip
    last = [e async for e in Agent(streamed).stream("hi")][-1]
    assert isinstance(last, RunFinished) and last.result and last.result.output == "?"


async def test_function_model_sees_tool_results() -> None:
    def decide(request: ModelRequest) -> object:
        last = request.messages[-1]
        if last.role == "tool":
            return f"got {last.tool_results[0].text}"
        return call("add", a=20, b=22)

    result = await Agent(FunctionModel(decide), tools=[add]).run("go")  # type: ignore[arg-type]
    assert result.output == "got 42"


async def test_streaming_a_finished_run_has_the_result() -> None:
    model = ScriptedModel(["done"])
    events = [e async for e in Agent(model).stream("x")]
    assert isinstance(events[-1], RunFinished) and events[-1].result is not None
    assert events[-1].result.output == "done"


def test_run_sync_works_outside_an_event_loop() -> None:
    result = Agent(ScriptedModel([call("add", a=1, b=1), "two"]), tools=[add]).run_sync("1+1")
    assert result.output == "two" and sys.version_info >= (3, 11)
