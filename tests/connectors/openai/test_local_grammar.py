"""The tool-call grammar and the tier policy, without an engine: schemas, parsing, routing."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from agentsdk.tools import ToolSpec, tool
from agentsdk_openai import LocalChatModel, LocalEngine, connect
from agentsdk_openai.local import (
    TIERED,
    call_schema,
    local_escalation,
    local_tier_policy,
    parse_constrained,
    tool_call_grammar,
)
from agentsdk_openai.local.answers import whole_sentences, without_pasted_json
from agentsdk_openai.local.grammar import TURN_GRAMMAR
from pydantic import BaseModel

from agentsdk import (
    Message,
    ModelRequest,
    ModelResponse,
    TextPart,
    Tiers,
    ToolCallPart,
    ToolResultPart,
    TurnInfo,
)


class Vector(BaseModel):
    x: float
    y: float


class Move(BaseModel):
    target: str
    to: Vector


class Segment(BaseModel):
    start: Vector
    end: Vector
    label: str | None = None


MOVE = ToolSpec(name="move", description="Move an object.", parameters=Move.model_json_schema())
# Both tools define their own `Vector` in $defs: the hoisted names must not clash.
DRAW = ToolSpec(name="draw", description="Draw a segment.", parameters=Segment.model_json_schema())


def _schema_of(grammar: str) -> dict[str, object]:
    line = next(line for line in grammar.splitlines() if line.startswith("call: %json "))
    return json.loads(line.removeprefix("call: %json "))  # type: ignore[no-any-return]


def test_call_schema_accepts_only_real_calls() -> None:
    schema = call_schema([MOVE, DRAW])
    assert set(schema["$defs"]) == {"t0_Vector", "t1_Vector"}  # hoisted per tool
    good = [
        {"name": "move", "arguments": {"target": "cube", "to": {"x": 1, "y": 2}}},
        {"name": "draw", "arguments": {"start": {"x": 0, "y": 0}, "end": {"x": 1, "y": 1}}},
    ]
    for call in good:
        jsonschema.validate(call, schema)
    bad = [
        {"name": "teleport", "arguments": {"target": "cube", "to": {"x": 1, "y": 2}}},
        {"name": "move", "arguments": {"target": "cube", "to": {"x": "one", "y": 2}}},
        {"name": "move", "arguments": {"target": "cube"}},  # required field missing
        {"name": "draw", "arguments": {"target": "cube", "to": {"x": 1, "y": 2}}},
        {"name": "move", "arguments": {"target": "cube", "to": {"x": 1, "y": 2}}, "extra": 1},
    ]
    for call in bad:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(call, schema)


def test_grammar_per_tool_choice() -> None:
    assert tool_call_grammar([], "auto") is None
    # no call possible: text that does not open like a call, and no call rule at all
    none = tool_call_grammar([MOVE], "none")
    assert none is not None and "start: TEXT\n" in none and "call" not in none
    auto = tool_call_grammar([MOVE, DRAW], "auto")
    assert auto is not None and "start: call | TEXT" in auto  # free text stays possible
    required = tool_call_grammar([MOVE, DRAW], "required")
    assert required is not None and "start: call\n" in required and "TEXT" not in required
    named = tool_call_grammar([MOVE, DRAW], "draw")
    assert named is not None
    variants = _schema_of(named)["anyOf"]
    assert isinstance(variants, list) and len(variants) == 1
    assert variants[0]["properties"]["name"] == {"const": "draw"}


def test_constrained_output_is_read_back() -> None:
    call = parse_constrained(
        '{"name": "move", "arguments": {"target": "cube", "to": {"x": 1, "y": 2}}}'
    )
    assert [(c.name, c.arguments) for c in call if isinstance(c, ToolCallPart)] == [
        ("move", {"target": "cube", "to": {"x": 1, "y": 2}})
    ]
    assert parse_constrained("Paris") == [TextPart(text="Paris")]
    assert parse_constrained("") == []
    # Cut off by max_tokens: the loop gets raw arguments it can report back.
    (cut,) = parse_constrained('{"name": "move", "arguments": {"target": "cu')
    assert isinstance(cut, ToolCallPart) and cut.name == "move"
    assert cut.raw_arguments is not None and cut.raw_arguments.startswith('{"target"')


def _info(turn: int, messages: list[Message]) -> TurnInfo:
    return TurnInfo(turn=turn, request=ModelRequest(messages=messages, tools=[MOVE]))


def test_tier_policy_plans_with_the_standard_model() -> None:
    ask = Message.user("Move the cube.")
    assert (
        local_tier_policy(_info(1, [ask])) == "standard"
    )  # the planning turn (turns count from 1)
    ok = Message(
        role="tool",
        parts=[ToolResultPart(call_id="c1", name="move", parts=[TextPart(text="done")])],
    )
    failed = Message(
        role="tool",
        parts=[
            ToolResultPart(
                call_id="c1", name="move", parts=[TextPart(text="no such object")], is_error=True
            )
        ],
    )
    assert local_tier_policy(_info(2, [ask, ok])) == "fast"  # routine: the 0.5B model
    assert local_tier_policy(_info(2, [ask, failed])) == "standard"  # change course


def _result(text: str) -> Message:
    part = ToolResultPart(call_id="c1", name="render", parts=[TextPart(text=text)])
    return Message(role="tool", parts=[part])


def test_tier_policy_corrects_with_the_standard_model_after_a_hint() -> None:
    ask = Message.user("Frame the box.")
    report = "view camera: 1 of 1 objects visible\nbox: 2%, right, red, cut off 56% (right)"
    hinted = report + '\nhint: box is cut off on the right: call fit_view(names=["box"])'
    assert local_tier_policy(_info(2, [ask, _result(report)])) == "fast"
    assert local_tier_policy(_info(2, [ask, _result(hinted)])) == "standard"
    looped = "Loop detected: the same call gave the same result 3 times"
    assert local_tier_policy(_info(3, [ask, _result(looped)])) == "standard"
    # "hint:" inside a line (a file's text, an object's name) is not a hint.
    assert local_tier_policy(_info(2, [ask, _result("label: 'hint: none'")])) == "fast"
    # The report of an image for a model without vision arrives in a trailing user message.
    trailing = Message.user("[image: render.png]\n" + hinted)
    assert local_tier_policy(_info(2, [ask, _result("rendered"), trailing])) == "standard"


@tool(side_effects=True)
def paint(name: str, colour: str) -> str:
    """Paint an object."""
    return f"{name} is {colour}"


@tool
def look(name: str) -> str:
    """Describe an object."""
    return f"{name}: a red cube"


def test_tier_policy_lets_the_standard_model_judge_the_step_after_a_change() -> None:
    # After a call that changed the world the request may need another step, which the
    # 0.5B model cannot judge; after a read the next turn usually writes the answer.
    ask = Message.user("Paint the cube red and the ball blue.")
    tools = [paint.spec(), look.spec()]
    assert [t.side_effects for t in tools] == [True, False]

    def after(*names: str) -> TurnInfo:
        results = [
            ToolResultPart(call_id=f"c{i}", name=n, parts=[TextPart(text="ok")])
            for i, n in enumerate(names)
        ]
        return TurnInfo(
            turn=2,
            request=ModelRequest(messages=[ask, Message(role="tool", parts=results)], tools=tools),
        )

    assert local_tier_policy(after("paint")) == "standard"
    assert local_tier_policy(after("look")) == "fast"
    assert local_tier_policy(after("look", "paint")) == "standard"
    # A tool the request no longer offers (or a renamed one) is not guessed at.
    assert local_tier_policy(after("paint_old")) == "fast"


def test_tier_policy_has_the_standard_model_weigh_several_items_read_at_once() -> None:
    ask = Message.user("Rank AAPL, MSFT and IBM by total return.")
    tools = [look.spec()]

    def after(*calls: ToolCallPart) -> TurnInfo:
        results = [
            ToolResultPart(call_id=c.id, name=c.name, parts=[TextPart(text="figures")])
            for c in calls
        ]
        messages = [ask, Message(role="assistant", parts=list(calls))]
        messages.append(Message(role="tool", parts=list(results)))
        return TurnInfo(turn=2, request=ModelRequest(messages=messages, tools=tools))

    def asked(**arguments: object) -> ToolCallPart:
        return ToolCallPart(id=f"c{len(arguments)}", name="look", arguments=arguments)

    assert local_tier_policy(after(asked(symbols="AAPL,MSFT,IBM"))) == "standard"
    assert local_tier_policy(after(asked(names=["Floor", "Crate"]))) == "standard"
    assert local_tier_policy(after(asked(name="a"), asked(name="b", x=1))) == "standard"
    # one item, or a comma inside ordinary text, is a read like any other
    assert local_tier_policy(after(asked(symbols="AAPL"))) == "fast"
    assert local_tier_policy(after(asked(names=["Crate"]))) == "fast"
    assert local_tier_policy(after(asked(query="close, adjusted for splits"))) == "fast"


def test_a_fast_reply_that_is_no_answer_goes_to_the_standard_model() -> None:
    ask = Message.user("Give AAPL's 50-day and 200-day moving averages at the end of 2012.")
    done = _result('{"sma": {"50": 72.66, "200": 77.34}}')
    info = _info(2, [ask, done])

    def reply(text: str) -> ModelResponse:
        return ModelResponse(parts=[TextPart(text=text)])

    # what the 0.5B model answered on the finance suite, after being asked once more
    assert local_escalation(
        info, reply("AAPL's 50-day and 200-day moving averages at the end of 2012.")
    )
    assert local_escalation(
        info, reply('GOOG 2010: 252 bars,"cite":"GOOG, bokeh","symbol":"GOOG","bars":252')
    )
    assert local_escalation(info, reply("The function result is already provided."))
    assert local_escalation(info, reply("  ")) is not False
    bare = TurnInfo(turn=2, request=ModelRequest(messages=[ask, done]))
    assert local_escalation(bare, reply("  ")) is True  # no tools offered: the same request
    offered = TurnInfo(turn=2, request=ModelRequest(messages=[ask, done], tools=[look.spec()]))
    instead = local_escalation(offered, reply("The function result is already provided."))
    assert isinstance(instead, ModelRequest) and instead.settings.tool_choice == "none"
    assert instead.messages == offered.request.messages and instead.tools == offered.request.tools
    assert not local_escalation(info, reply("SMA 50 was 72.66 and SMA 200 was 77.34 (source: x)."))
    call_reply = ModelResponse(parts=[ToolCallPart(id="c", name="look", arguments={"name": "a"})])
    assert not local_escalation(info, call_reply)
    assert connect("local:default").escalate is local_escalation  # type: ignore[union-attr]


def test_a_tool_result_pasted_after_the_answer_is_cut_off() -> None:
    ask = Message.user("What was AAPL's CAGR?")
    done = _result('{"summary": "AAPL 2000..2013: CAGR 22.1%", "cagr": 0.221}')
    request = ModelRequest(messages=[ask, done])

    def answer(text: str) -> str:
        return without_pasted_json(request, ModelResponse(parts=[TextPart(text=text)])).text

    # the 0.5B model's answer on finance/aapl-cagr, shortened
    pasted = (
        "AAPL 2000-03-01..2013-03-01 (source: bokeh-sampledata): total return 1240.9%, "
        'CAGR 22.1%,"cite":"AAPL, bokeh-sampledata","symbol":"AAPL","bars":3270,'
        '"drawdown":{"max_drawdown":-0.818}'
    )
    assert answer(pasted) == (
        "AAPL 2000-03-01..2013-03-01 (source: bokeh-sampledata): total return 1240.9%, CAGR 22.1%"
    )
    # one or two quoted pairs are part of an answer; JSON from the start is left whole
    quoted = 'The summary says "CAGR": 22.1% and "total return": 1240.9%.'
    assert answer(quoted) == quoted
    whole = '{"summary": "x", "cagr": 0.221, "bars": 3270}'
    assert answer(whole) == whole
    # before any tool result there is nothing to have pasted
    first = ModelRequest(messages=[ask])
    kept = without_pasted_json(first, ModelResponse(parts=[TextPart(text=pasted)]))
    assert kept.text == pasted


def test_an_answer_cut_off_keeps_its_whole_sentences_up_to_the_loop() -> None:
    looped = "The Pole stands on the ground. The light is named Sun. " + "The scene is done. " * 30
    assert whole_sentences(looped) == (
        "The Pole stands on the ground. The light is named Sun. The scene is done."
    )
    assert whole_sentences("Done! Pole is 3 m tall (as asked). It is re") == (
        "Done! Pole is 3 m tall (as asked)."
    )
    opened = 'The label says "0". Then:\n```gdscript\nfunc _ready():\n'  # a block left open
    assert whole_sentences(opened) == 'The label says "0".'
    assert whole_sentences("To add the node, call") == ""  # no sentence whole: nothing kept
    assert whole_sentences("") == ""


def test_model_strings_for_every_local_model() -> None:
    tiered = connect("local:tiered")
    assert isinstance(tiered, Tiers)
    assert tiered.name == (
        f"tiers(fast=local:{TIERED['fast']}, standard=local:{TIERED['standard']})"
    )
    assert tiered.model("standard").name == "local:qwen2.5-coder-1.5b"
    stronger = connect("local:qwen2.5-coder-1.5b")
    assert isinstance(stronger, LocalChatModel) and stronger.constrained
    assert stronger.local_engine.builtin is not None
    assert stronger.local_engine.builtin.size == 1_117_320_768
    default = connect("local:default")  # the default is the two tiers
    assert isinstance(default, Tiers) and default.name == tiered.name
    assert default.policy is local_tier_policy
    plain = connect("local:qwen2.5-coder-0.5b", constrained=False)
    assert isinstance(plain, LocalChatModel) and not plain.constrained
    assert plain.local_engine.model == "qwen2.5-coder-0.5b"
    options = connect("local:default", constrained=False)  # options reach both tiers
    assert isinstance(options, Tiers)
    assert all(
        isinstance(m, LocalChatModel) and not m.constrained
        for m in (options.model("fast"), options.model("standard"))
    )


def test_parallel_slots_are_set_on_the_shared_engine(tmp_path: Path) -> None:
    gguf = str(tmp_path / "model.gguf")  # nothing starts, so the file need not exist yet
    model = connect(f"local:{gguf}", parallel=3)
    assert isinstance(model, LocalChatModel) and model.local_engine.slots == 3
    assert LocalEngine.shared(gguf) is model.local_engine  # one engine per model
    assert LocalEngine.shared(gguf, parallel=2).slots == 2  # not running: takes the new count
    with pytest.raises(ValueError, match="at least 1"):
        LocalEngine(gguf, parallel=0)


def test_a_call_written_out_after_prose_is_read_as_that_call() -> None:
    offered = {"move", "performance"}
    said = 'To call the "performance" function: {"name": "performance", "arguments": {"symbol": "MSFT", "start": "2010"}} and then I answer.'
    lead, call = parse_constrained(said, offered)
    assert lead == TextPart(text='To call the "performance" function:')
    assert isinstance(call, ToolCallPart) and call.name == "performance"
    assert call.arguments == {"symbol": "MSFT", "start": "2010"} and call.raw_arguments is None
    # Not offered, not an object, not JSON, or no offered tools given: text as it came.
    for text in (
        'Use {"name": "delete_everything", "arguments": {}} if you dare.',
        'Try {"name": "move", "arguments": "up"}.',
        'Half a call: {"name": "move", "arguments": {"target": ',
        "No call here, just {curly} words.",
    ):
        assert parse_constrained(text, offered) == [TextPart(text=text)], text
    plain = 'Call {"name": "move", "arguments": {}} now.'
    assert parse_constrained(plain) == [TextPart(text=plain)]
    # The first offered call wins; an unknown one before it is skipped.
    two = 'x {"name": "nope", "arguments": {}} y {"name": "move", "arguments": {"to": 1}}'
    last = parse_constrained(two, offered)[-1]
    assert isinstance(last, ToolCallPart) and (last.name, last.arguments) == ("move", {"to": 1})


def test_request_bodies_carry_the_cue_and_the_token_cap() -> None:
    ask = ModelRequest(messages=[Message.user("Move the cube.")], tools=[MOVE])
    for name, cue in (("qwen2.5-coder-1.5b", True), ("qwen2.5-coder-0.5b", False)):
        model = LocalChatModel(LocalEngine(name))  # nothing starts
        assert model.next_step is cue
        for constrained in (True, False):
            body = json.loads(
                model.chat_body(model._with_defaults(ask), constrained=constrained, stream=False)
            )
            kwargs = body.get("chat_template_kwargs", {})
            assert kwargs.get("agentsdk_next_step", False) is cue, (name, constrained)
            # A model stuck repeating itself stops at the cap instead of filling 8k tokens.
            assert body["max_tokens"] == 1024
    model = LocalChatModel(
        LocalEngine("qwen2.5-coder-0.5b"), next_step=True, default_max_tokens=None
    )
    asked = ask.model_copy(update={"settings": ask.settings.model_copy(update={"max_tokens": 64})})
    body = json.loads(model.chat_body(model._with_defaults(asked), constrained=True, stream=False))
    assert body["chat_template_kwargs"]["agentsdk_next_step"] is True and body["max_tokens"] == 64
    body = json.loads(model.chat_body(model._with_defaults(ask), constrained=True, stream=False))
    assert "max_tokens" not in body


def test_a_turn_of_its_own_grammar_keeps_the_prompt_the_same() -> None:
    # The call for a missing part is sampled under a narrower grammar, but the tools shown
    # in the prompt stay as offered: the cached prefix (system turn and tools) still holds.
    model = LocalChatModel(LocalEngine("qwen2.5-coder-1.5b"))  # nothing starts
    ask = ModelRequest(messages=[Message.user("Move the cube.")], tools=[MOVE])
    narrow = tool_call_grammar([MOVE], "required")
    own = ask.model_copy(
        update={"settings": ask.settings.model_copy(update={"extra": {TURN_GRAMMAR: narrow}})}
    )
    usual = json.loads(model.chat_body(ask, constrained=True, stream=False))
    body = json.loads(model.chat_body(own, constrained=True, stream=False))
    assert body["grammar"] == narrow != usual["grammar"]
    kwargs, usual_kwargs = body["chat_template_kwargs"], usual["chat_template_kwargs"]
    assert kwargs["agentsdk_tools"] == usual_kwargs["agentsdk_tools"]
    assert TURN_GRAMMAR not in body and TURN_GRAMMAR not in json.dumps(kwargs)
    plain = json.loads(model.chat_body(own, constrained=False, stream=False))
    assert TURN_GRAMMAR not in plain and "grammar" not in plain


@pytest.mark.anyio
async def test_an_announcement_right_after_that_tool_succeeded_is_the_answer() -> None:
    # The 1.5B model said "I will call the export_asset function" turn after turn, after
    # export_asset had succeeded; forcing the call each time looped until the guard stopped it.
    model = LocalChatModel(LocalEngine("qwen2.5-coder-0.5b"))  # never started: no request made
    done = Message(
        role="tool",
        parts=[ToolResultPart(call_id="c1", name="move", parts=[TextPart(text="moved")])],
    )
    request = ModelRequest(messages=[Message.user("Move the cube."), done], tools=[MOVE])
    said = ModelResponse(parts=[TextPart(text='I will call the "move" function to move the cube.')])
    assert await model._make_announced_call(request, said) is said


def test_tier_policy_stays_on_the_standard_model_when_a_switch_costs_more() -> None:
    # A switch makes the other engine read the whole conversation; the engine that served
    # the last turn reads only the newest result.
    ask = Message.user("Build the scene, then tell me what the camera sees.")
    long_history = [ask]
    for n in range(4):
        call_part = ToolCallPart(id=f"c{n}", name="look", arguments={"name": "box"})
        long_history += [Message(role="assistant", parts=[call_part]), _result("x" * 800)]
    short_read = [*long_history[:-1], _result("box: 38%, centre, red")]

    def info(messages: list[Message], previous: str | None) -> TurnInfo:
        request = ModelRequest(messages=messages, tools=[look.spec()])
        return TurnInfo(turn=6, request=request, previous_tier=previous)

    assert local_tier_policy(info(short_read, "standard")) == "standard"
    assert local_tier_policy(info(short_read, "fast")) == "fast"  # its cache is warm
    assert local_tier_policy(info(short_read, None)) == "fast"  # nothing known: the default
    # The newest result is most of what there is to read: the 0.5B model reads it faster.
    assert local_tier_policy(info([ask, long_history[1], _result("y" * 3000)], "standard")) == (
        "fast"
    )


def test_the_next_step_cue_follows_a_change_and_the_answer_cue_follows_a_read() -> None:
    # Under the next-step cue after a read, the 1.5B model re-rendered a finished scene
    # until the loop guard stopped the demo.
    model = LocalChatModel(LocalEngine("qwen2.5-coder-1.5b"))  # nothing starts
    ask = Message.user("Paint the cube red, then look at it.")

    def cue(tools: list[ToolSpec], *names: str) -> bool:
        results = [
            ToolResultPart(call_id=f"c{i}", name=n, parts=[TextPart(text="ok")])
            for i, n in enumerate(names)
        ]
        messages = [ask, Message(role="tool", parts=results)] if names else [ask]
        request = ModelRequest(messages=messages, tools=tools)
        body = json.loads(model.chat_body(request, constrained=True, stream=False))
        return bool(body.get("chat_template_kwargs", {}).get("agentsdk_next_step"))

    declared = [paint.spec(), look.spec()]
    assert cue(declared, "paint") and cue(declared, "look", "paint")
    assert not cue(declared, "look")
    assert cue(declared)  # no result yet (the cue is only shown after one)
    # Tools that declare no side effects say nothing: every result may need a next step.
    assert cue([look.spec(), MOVE], "look")
