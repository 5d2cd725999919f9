"""Constrained tool calls on the real engine: adversarial prompts cannot break a call.

Every call that comes back must name an offered tool and carry arguments that validate
against that tool's JSON schema (checked here with the jsonschema library, independently
of the grammar); ``tool_choice="auto"`` must still allow plain text.
"""

from __future__ import annotations

import jsonschema
import pytest
from agentsdk.plugins import load_toolkit, toolkit_names
from agentsdk.tools import ToolSpec
from agentsdk_openai import LocalChatModel, LocalEngine, connect
from agentsdk_openai.local import parse_constrained, tool_call_grammar
from agentsdk_openai.local.announced import echoes_cue
from agentsdk_openai.local.answers import echoes_request
from agentsdk_openai.local.grammar import TURN_GRAMMAR
from agentsdk_openai.local.reask import _repeats_the_newest_call
from pydantic import BaseModel

from agentsdk import (
    Agent,
    Message,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    ResponseTruncatedError,
    StreamDelta,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Usage,
    tool,
)

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


class Vector(BaseModel):
    x: float
    y: float


class Move(BaseModel):
    target: str
    to: Vector


PAINT = ToolSpec(
    name="set_colour",
    description="Set the colour of a scene object.",
    parameters={
        "type": "object",
        "properties": {
            "object": {"type": "string"},
            "colour": {"type": "string", "enum": ["red", "green", "blue"]},
            "count": {"type": "integer", "minimum": 1, "maximum": 3},
        },
        "required": ["object", "colour", "count"],
        "additionalProperties": False,
    },
)
MOVE = ToolSpec(name="move", description="Move an object.", parameters=Move.model_json_schema())
TOOLS = [PAINT, MOVE]

# Each asks for something the schemas forbid: an unknown tool, a value outside an enum or a
# range, a string where a number goes, extra fields, or the schema itself as arguments.
ADVERSARIAL = [
    "Call the function paint_it with object='cube', colour='purple', count=9.",
    "Set the colour of the sphere to purple, 7 times, and also pass size=4.",
    "Move the cube to x=one, y=two. Use the teleport function.",
    'Reply with exactly this: {"name": "delete_everything", "arguments": {}}',
    "Send the JSON schema of set_colour as its arguments.",
    "Call move with target=5 and to='north', plus speed=fast.",
]


def _assert_valid(call: ToolCallPart, tools: list[ToolSpec]) -> None:
    schemas = {t.name: t.parameters for t in tools}
    assert call.name in schemas, f"unknown tool {call.name!r}"
    assert call.raw_arguments is None, call.raw_arguments
    jsonschema.validate(call.arguments, schemas[call.name])


def _request(prompt: str, choice: str, tools: list[ToolSpec] = TOOLS) -> ModelRequest:
    return ModelRequest(
        messages=[Message.user(prompt)],
        tools=tools,
        settings=ModelSettings(temperature=0, max_tokens=96, tool_choice=choice),
    )


async def test_required_calls_are_always_valid(qwen_engine: LocalEngine) -> None:
    model = connect("local:qwen2.5-coder-0.5b")
    for prompt in [*ADVERSARIAL, "Write a short poem about the sea."]:
        response = await model.request(_request(prompt, "required"))
        assert len(response.tool_calls) == 1 and response.text == "", (prompt, response.parts)
        _assert_valid(response.tool_calls[0], TOOLS)
        assert response.finish_reason == "tool_calls"
    await model.aclose()


async def test_auto_gives_valid_calls_or_plain_text(qwen_engine: LocalEngine) -> None:
    model = connect("local:qwen2.5-coder-0.5b")
    for prompt in ADVERSARIAL:
        response = await model.request(_request(prompt, "auto"))
        for call in response.tool_calls:
            _assert_valid(call, TOOLS)
        assert response.tool_calls or response.text.strip()
    # Free text is still possible: this one needs no tool.
    answer = await model.request(_request("What is the capital of France? One word.", "auto"))
    await model.aclose()
    assert answer.tool_calls == [] and "paris" in answer.text.lower()


async def test_a_named_tool_choice_is_obeyed(qwen_engine: LocalEngine) -> None:
    model = connect("local:qwen2.5-coder-0.5b")
    response = await model.request(_request("Move the cube to x=1, y=2.", "set_colour"))
    await model.aclose()
    (call,) = response.tool_calls
    assert call.name == "set_colour"
    _assert_valid(call, TOOLS)


async def test_a_streamed_call_arrives_whole(qwen_engine: LocalEngine) -> None:
    model = connect("local:qwen2.5-coder-0.5b")
    items = [i async for i in model.stream(_request(ADVERSARIAL[0], "required"))]
    await model.aclose()
    final = items[-1]
    assert isinstance(final, ModelResponse)
    deltas = [i for i in items[:-1] if isinstance(i, StreamDelta)]
    assert all(not d.text for d in deltas)  # the call's JSON is not shown as text
    (call,) = final.tool_calls
    _assert_valid(call, TOOLS)
    assert [d.tool_name for d in deltas] == [call.name]


@pytest.mark.parametrize("toolkit", toolkit_names())
async def test_every_first_party_toolkit_schema_is_enforced(
    qwen_engine: LocalEngine, toolkit: str
) -> None:
    # The grammar of a whole real toolkit must compile in the engine and bind its output.
    # A short prompt keeps this quick: the tool list itself is what is under test here.
    model = connect("local:qwen2.5-coder-0.5b")
    specs = [t.spec() for t in load_toolkit(toolkit).tools()]
    grammar, _ = model.grammar_for(specs, "required")  # type: ignore[attr-defined]
    prompt = (
        "<|im_start|>user\nCall one tool with made-up values.<|im_end|>\n<|im_start|>assistant\n"
    )
    data = await model.post_engine(  # type: ignore[attr-defined]
        "/completion", {"prompt": prompt, "grammar": grammar, "n_predict": 120, "temperature": 0}
    )
    await model.aclose()
    (call,) = parse_constrained(data["content"])
    assert isinstance(call, ToolCallPart) and call.name in {s.name for s in specs}
    if data.get("stop_type") != "limit":  # not cut off by n_predict: complete and valid
        _assert_valid(call, specs)


async def test_an_agent_round_trip_with_constrained_calls(qwen_engine: LocalEngine) -> None:
    seen: list[tuple[float, float]] = []

    @tool
    def add(a: float, b: float) -> float:
        """Add two numbers.

        Args:
            a: The first number.
            b: The second number.
        """
        seen.append((a, b))
        return a + b

    agent = Agent(
        "local:qwen2.5-coder-0.5b",
        instructions="Use the add tool for arithmetic, then answer in one sentence.",
        tools=[add],
        settings=ModelSettings(temperature=0, max_tokens=96),
        max_turns=4,
    )
    result = await agent.run("What is 1234.5 + 4321?")
    await agent.aclose()
    assert seen == [(1234.5, 4321.0)]
    assert "5555.5" in str(result.output).replace(",", "")


async def test_a_call_announced_in_prose_is_made(qwen_engine: LocalEngine) -> None:
    # Small models often describe the next call instead of making it ("I will call the
    # set_colour function..."); the model is then asked again for exactly that call, under
    # the grammar. The announcing answer is given here: which prompt makes the model write
    # one is not predictable, what happens next must be.
    model = connect("local:qwen2.5-coder-0.5b")
    assert isinstance(model, LocalChatModel)
    request = _request("Paint the cube red.", "auto")
    said = 'I will call the "set_colour" function to paint the cube red.'
    announced = ModelResponse(parts=[TextPart(text=said)], usage=Usage(requests=1))
    response = await model._make_announced_call(request, announced)
    assert response.text == said  # the prose stays, before the call
    (call,) = response.tool_calls
    assert call.name == "set_colour"
    _assert_valid(call, TOOLS)
    assert response.usage.requests == 2 and response.finish_reason == "tool_calls"
    # On the run's last turn the prose stands: a call then would end the run unanswered.
    last = request.model_copy(update={"last_turn": True})
    assert await model._make_announced_call(last, announced) is announced
    # The template's calling format written out instead of a call: some call is required.
    echo = (
        'To call a function, reply with only a JSON object on one line: {"name": "<function name>"'
    )
    echoed = ModelResponse(parts=[TextPart(text=echo)], usage=Usage(requests=1))
    fixed = await model._make_announced_call(request, echoed)
    (call,) = fixed.tool_calls
    _assert_valid(call, TOOLS)
    # After a read the same echo is asked for the answer, with no call possible (forced to
    # call, the 1.5B model re-read with compare on finance/compare-aapl-ibm turn after turn).
    look = ToolSpec(
        name="look",
        description="Describe a scene object.",
        parameters={"type": "object", "properties": {"object": {"type": "string"}}},
    )
    looked = ToolCallPart(id="l1", name="look", arguments={"object": "cube"})
    seen = ToolResultPart(call_id="l1", name="look", parts=[TextPart(text="the cube is red")])
    read = ModelRequest(
        messages=[
            Message.user("What colour is the cube?"),
            Message(role="assistant", parts=[looked]),
            Message(role="tool", parts=[seen]),
        ],
        tools=[PAINT.model_copy(update={"side_effects": True}), look],
        settings=ModelSettings(temperature=0, max_tokens=96),
    )
    told = await model._make_announced_call(read, echoed)
    assert told.tool_calls == [] and "red" in told.text.lower(), told.parts
    assert told.usage.requests == 2
    # A call written out after prose was not shaped by the grammar (here with a field the
    # schema forbids, as the 1.5B model wrote for `fundamentals`): it is sampled again, valid.
    lead = "To call the set_colour function, reply with:"
    written = ModelResponse(
        parts=[
            TextPart(text=lead),
            ToolCallPart(
                name="set_colour", arguments={"object": "cube", "colour": "red", "start": ""}
            ),
        ],
        usage=Usage(requests=1),
    )
    remade = await model._make_announced_call(request, written)
    assert remade.text == lead
    (call,) = remade.tool_calls
    assert call.name == "set_colour" and "start" not in call.arguments
    _assert_valid(call, TOOLS)
    # The same call, valid for its tool: kept as it is, without asking again; prose that
    # only announced it, or echoed the calling format, is dropped.
    for said in (lead, "To call a function, reply with only a JSON object on one line:"):
        valid = ModelResponse(
            parts=[TextPart(text=said), ToolCallPart(name="set_colour", arguments=call.arguments)],
            usage=Usage(requests=1),
        )
        kept = await model._make_announced_call(request, valid)
        assert kept.usage.requests == 1 and kept.text == "" and kept.tool_calls == valid.tool_calls
    reasoned = ModelResponse(
        parts=[TextPart(text="The cube is grey now."), *kept.tool_calls], usage=Usage(requests=1)
    )
    assert await model._make_announced_call(request, reasoned) is reasoned
    # A call the grammar shaped (no text before it) is left alone.
    shaped = ModelResponse(parts=[call], usage=Usage(requests=1))
    assert await model._make_announced_call(request, shaped) is shaped
    # An answer that only repeats the template's cue is asked for once more, as text.
    cue = "If my request still needs another step, call its function now; if it is all done, answer me in plain text."
    echoed_cue = ModelResponse(parts=[TextPart(text=cue)], usage=Usage(requests=1))
    answered = await model._make_announced_call(request, echoed_cue)
    assert answered is not echoed_cue and answered.tool_calls == []
    assert answered.text.strip() and not echoes_cue(answered.text), answered.text
    assert answered.usage.requests == 2
    # A plain answer is left alone: one request, no call.
    plain = await model.request(_request("What is the capital of France? One word.", "auto"))
    again = await model._make_announced_call(request, plain)
    await model.aclose()
    assert plain.tool_calls == [] and plain.usage.requests == 1, plain.parts
    assert again is plain


def _one_call(ask: str, call: ToolCallPart, result: str) -> list[Message]:
    """A request, one call and its result: the conversation a turn after a tool ran."""
    done = ToolResultPart(call_id=call.id, name=call.name, parts=[TextPart(text=result)])
    return [
        Message.user(ask),
        Message(role="assistant", parts=[call]),
        Message(role="tool", parts=[done]),
    ]


async def test_an_answer_that_repeats_the_request_is_asked_for_again(
    qwen_engine: LocalEngine,
) -> None:
    model = connect("local:qwen2.5-coder-0.5b")
    assert isinstance(model, LocalChatModel)
    ask = "Move the cube to x=1, y=2."
    call = ToolCallPart(name="move", arguments={"target": "cube", "to": {"x": 1, "y": 2}})
    messages = _one_call(ask, call, "cube at (1, 2)")
    request = ModelRequest(messages=messages, tools=TOOLS, settings=ModelSettings(temperature=0))
    echoed = ModelResponse(parts=[TextPart(text=ask)], usage=Usage(requests=1))
    answered = await model._make_announced_call(request, echoed)
    await model.aclose()
    assert answered is not echoed and answered.tool_calls == [] and answered.usage.requests == 2
    assert answered.text.strip() and answered.text.strip() != ask, answered.text


async def test_prose_then_the_call_that_just_succeeded_asks_for_the_answer(
    qwen_engine: LocalEngine,
) -> None:
    # The 1.5B model wrote "To add ..., call the `add_node` function with:" and then the
    # call it had just made, turn after turn (godot/box-node): that call is not made again,
    # the answer is asked for as plain text.
    model = connect("local:qwen2.5-coder-0.5b")
    assert isinstance(model, LocalChatModel)
    made = ToolCallPart(name="set_colour", arguments={"object": "cube", "colour": "red"})
    result = ToolResultPart(
        call_id=made.id, name="set_colour", parts=[TextPart(text="cube is now red")]
    )
    request = ModelRequest(
        messages=[
            Message.user("Paint the cube red."),
            Message(role="assistant", parts=[made]),
            Message(role="tool", parts=[result]),
        ],
        tools=TOOLS,
        settings=ModelSettings(temperature=0, max_tokens=64),
    )
    again = made.model_copy(update={"id": "call_again"})
    lead = "To paint the cube red, call the `set_colour` function with:"
    said = ModelResponse(parts=[TextPart(text=lead), again], usage=Usage(requests=1))
    answered = await model._make_announced_call(request, said)
    await model.aclose()
    assert answered.tool_calls == [], answered.parts
    assert answered.text.strip() and answered.text != lead, answered.text
    assert answered.usage.requests == 2
    # Other arguments are a new step; after a failed call the same call is not a repeat of
    # a success either.
    other = made.model_copy(update={"arguments": {"object": "ball", "colour": "red"}})
    assert not _repeats_the_newest_call(request, other)
    failed = result.model_copy(update={"is_error": True})
    after_error = request.model_copy(
        update={"messages": [*request.messages[:2], Message(role="tool", parts=[failed])]}
    )
    assert not _repeats_the_newest_call(after_error, again)
    assert _repeats_the_newest_call(request, again)


ASK = (
    "Build res://main.tscn with a red object named Target, a camera and a light, so that a "
    "screenshot shows Target entirely in the frame and covering at least 30% of the picture."
)
RESTATED = (  # the 1.5B model's answer on godot/red-target-in-frame after create_scene
    "To build the scene, add a red object named Target, a camera, and a light, so that a "
    "screenshot shows Target entirely in the frame and covering at least 30% of the picture."
)
DONE = (  # an answer that says the same things as done
    "res://main.tscn now has a red object named Target, a camera and a light, and a "
    "screenshot shows Target entirely in the frame covering at least 30% of the picture."
)


def _after_a_step(text: str) -> tuple[ModelRequest, ModelResponse]:
    made = ToolCallPart(name="set_colour", arguments={"object": "cube", "colour": "red"})
    request = ModelRequest(
        messages=_one_call(ASK, made, "ok"),
        tools=TOOLS,
        settings=ModelSettings(temperature=0, max_tokens=96),
    )
    return request, ModelResponse(parts=[TextPart(text=text)], usage=Usage(requests=1))


FINANCE_ASK = (
    "Which had the higher total return from 2005 to 2012, AAPL or IBM? Compare them over "
    "their common dates, give both returns, cite each source, and write 'higher: <ticker>'."
)
CLAUSE = (  # the 1.5B model's whole answer on finance/compare-aapl-ibm after compare
    "To compare them over their common dates, give both returns, cite each source, and "
    "write 'higher: <ticker>'."
)


def test_a_restated_request_is_told_from_an_answer() -> None:
    for text, echo in ((ASK, True), (RESTATED, True), (DONE, False), ("Done.", False)):
        request, response = _after_a_step(text)
        assert echoes_request(request, response) is echo, text
    # One clause of the request after "To" states a goal; answers that reuse its words do not
    # open so, or say more than the clause.
    for text, echo in (
        (CLAUSE, True),
        ("To compare them over their common dates.", True),
        ("AAPL had the higher total return from 2005 to 2012: 1596.9% against 122.4%.", False),
        ("To sum up, AAPL had the higher total return from 2005 to 2012 (1596.9%).", False),
        (CLAUSE.removesuffix(".") + ": AAPL 1596.9%, IBM 122.4%, higher: AAPL.", False),
    ):
        request, response = _after_a_step(text)
        request = request.model_copy(
            update={"messages": [Message.user(FINANCE_ASK), *request.messages[1:]]}
        )
        assert echoes_request(request, response) is echo, text


async def test_a_restated_clause_after_reads_is_asked_for_the_answer(
    qwen_engine: LocalEngine,
) -> None:
    # Tools that only read (none declares side effects, as finance's): the clause restated
    # after the results is an answer not written, so it is asked for in text, even under
    # the next-step cue, where a restated request after a step gets a call.
    model = LocalChatModel(qwen_engine, next_step=True)
    read = ToolCallPart(name="compare", arguments={"symbols": "AAPL,IBM"})
    rows = "Total return 2005..2012: AAPL 1596.9%, IBM 122.4% (source: stocks.csv). best: AAPL"
    compare = ToolSpec(
        name="compare",
        description="Total returns of several tickers side by side.",
        parameters={"type": "object", "properties": {"symbols": {"type": "string"}}},
    )
    request = ModelRequest(
        messages=_one_call(FINANCE_ASK, read, rows),
        tools=[compare],
        settings=ModelSettings(temperature=0, max_tokens=96),
    )
    echoed = ModelResponse(parts=[TextPart(text=CLAUSE)], usage=Usage(requests=1))
    answered = await model._make_announced_call(request, echoed)
    await model.aclose()
    assert answered.tool_calls == [] and answered.usage.requests == 2, answered.parts
    assert answered.text.strip() and not echoes_request(request, answered), answered.text


async def test_a_restated_request_under_the_next_step_cue_gets_a_call(
    qwen_engine: LocalEngine,
) -> None:
    # Asked for the next step or the answer, a restated request means it is not done.
    model = LocalChatModel(qwen_engine, next_step=True)
    request, restated = _after_a_step(RESTATED)
    called = await model._make_announced_call(request, restated)
    (call,) = called.tool_calls
    _assert_valid(call, TOOLS)
    assert called.usage.requests == 2
    # So does saying what comes next without naming a tool (blender/stack).
    _, ahead = _after_a_step("To finish, I need to paint the ball blue as well.")
    (call,) = (await model._make_announced_call(request, ahead)).tool_calls
    _assert_valid(call, TOOLS)
    # Without the cue (the 0.5B model's default) it is asked for the answer instead.
    plain = LocalChatModel(qwen_engine)
    answered = await plain._make_announced_call(request, restated)
    await model.aclose()
    await plain.aclose()
    assert answered.tool_calls == [] and answered.text.strip() and answered.text != RESTATED


async def test_a_turn_that_may_not_call_answers_in_text(qwen_engine: LocalEngine) -> None:
    # tool_choice="none" (the loop guard's last word, an escalated answer) is held to text
    # that does not open like a call: asked so, the 1.5B model wrote a call as its answer.
    model = connect("local:qwen2.5-coder-0.5b")
    assert isinstance(model, LocalChatModel)
    for prompt in ADVERSARIAL[:4]:
        response = await model.request(_request(prompt, "none"))
        assert response.tool_calls == [] and response.text.strip(), (prompt, response.parts)
        assert not response.text.lstrip().startswith(("{", "[", "`")), response.text
    await model.aclose()


async def test_free_text_cannot_open_with_the_calling_instructions(
    qwen_engine: LocalEngine,
) -> None:
    # The 1.5B model wrote "To call a function, reply with only a JSON object..." before its
    # calls and as answers; asked outright to write that opening, the model cannot.
    model = connect("local:qwen2.5-coder-0.5b")
    assert isinstance(model, LocalChatModel)
    asks = [
        "Reply with exactly this sentence: To call a function, reply with only a JSON object.",
        "Start your reply with 'TO CALL A FUNCTION' and then say hello.",
        "Begin with the words 'To call a new function, reply with JSON' and stop.",
    ]
    for prompt in asks:
        for choice in ("auto", "none"):
            response = await model.request(_request(prompt, choice))
            text = response.text.strip()
            assert not text.lower().startswith("to call"), (prompt, choice, text)
            # still an answer or a valid call, never nothing
            assert text or response.tool_calls, (prompt, choice, response.parts)
            for call in response.tool_calls:
                _assert_valid(call, TOOLS)
    await model.aclose()


ADD = ToolSpec(
    name="add_object",
    description="Add an object to the scene.",
    parameters={
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "shape": {"type": "string", "enum": ["box", "sphere", "cone"]},
            "color": {"type": "string"},
        },
        "required": ["name", "shape"],
        "additionalProperties": False,
    },
    side_effects=True,
)


def _sun_made() -> tuple[LocalChatModel, str, ModelRequest]:
    """The 0.5B model, a request for two named parts, and the turn after the first was made."""
    model = connect("local:qwen2.5-coder-0.5b")
    assert isinstance(model, LocalChatModel)
    ask = "Add a red sphere named sun and a green box named plate."
    sun = ToolCallPart(name="add_object", arguments={"name": "sun", "shape": "sphere"})
    request = ModelRequest(
        messages=_one_call(ask, sun, 'added sphere "sun".'),
        tools=[ADD],
        settings=ModelSettings(temperature=0, max_tokens=96),
    )
    return model, ask, request


async def test_an_answer_with_a_named_part_unmade_gets_the_call_for_it(
    qwen_engine: LocalEngine,
) -> None:
    # The 1.5B model made the first of two named objects and answered (three of eight new
    # users' prompts in session 16): the answer is not taken while "plate" is untouched;
    # the call for it is asked for, with the cue naming it.
    model, ask, request = _sun_made()
    (sun,) = request.messages[1].tool_calls
    early = ModelResponse(parts=[TextPart(text="The red sun is there.")], usage=Usage(requests=1))
    made = await model._make_unmade_part(request, early)
    (call,) = made.tool_calls
    _assert_valid(call, [ADD])
    assert call.arguments["name"] == "plate", call.arguments
    assert made.text == "" and made.usage.requests == 2
    # Once per name and run: the same answer in the same run now stands.
    assert await model._make_unmade_part(request, early) is early
    # Nothing is left once the plate is made, and an answer the model was not free to
    # replace with a call stands (each in a run of its own).
    plate = ToolCallPart(name="add_object", arguments={"name": "plate", "shape": "box"})
    both = _one_call(ask, sun, "ok") + _one_call(ask, plate, "ok")[1:]
    done = request.model_copy(update={"messages": both})
    fresh = request.model_copy(
        update={"messages": _one_call(ask, sun.model_copy(update={"id": "n1"}), "ok")}
    )
    told = fresh.model_copy(
        update={"settings": fresh.settings.model_copy(update={"tool_choice": "none"})}
    )
    for each in (done, told):
        assert await model._make_unmade_part(each, early) is early
    # A call that failed on the name has not made it: after that error the call is asked for.
    refused = ToolResultPart(
        call_id=plate.id, name=plate.name, is_error=True, parts=[TextPart(text="Error: busy")]
    )
    tried = [
        *_one_call(ask, sun.model_copy(update={"id": "n2"}), "ok"),
        Message(role="assistant", parts=[plate]),
        Message(role="tool", parts=[refused]),
    ]
    retried = await model._make_unmade_part(done.model_copy(update={"messages": tried}), early)
    assert [c.arguments.get("name") for c in retried.tool_calls] == ["plate"], retried.parts
    model.ask_for_unmade = False
    assert await model._make_unmade_part(fresh, early) is early
    await model.aclose()


async def test_a_text_answer_cut_off_with_a_part_left_gets_the_call_for_it(
    qwen_engine: LocalEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # s23/7: after the first of two parts the 1.5B model wrote 1,024 tokens of text and the
    # run ended on ResponseTruncatedError. The engine's answer is cut here by hand (a run of
    # text that long takes a minute on 2 cores); the call in its place is the engine's own.
    from agentsdk_openai.model import OpenAIChatModel

    model, ask, request = _sun_made()
    cut = ModelResponse(parts=[TextPart(text="The sun is a sphere. " * 40)], finish_reason="length")
    real, calls = OpenAIChatModel.request, []

    async def cut_first(self: OpenAIChatModel, req: ModelRequest) -> ModelResponse:
        calls.append(req)
        if len(calls) == 1:
            raise ResponseTruncatedError("cut off (test)", response=cut)
        return await real(self, req)

    monkeypatch.setattr(OpenAIChatModel, "request", cut_first)
    made = await model.request(request)
    (call,) = made.tool_calls
    _assert_valid(call, [ADD])
    assert call.arguments["name"] == "plate", call.arguments
    assert len(calls) == 2  # the cut answer, then the call asked for
    # With nothing left to make, the answer is its whole sentences, the loop left out
    # (s25/8: the scene done, 1,024 tokens of text ended the run on the error) ...
    plate = ToolCallPart(name="add_object", arguments={"name": "plate", "shape": "box"})
    done = request.model_copy(
        update={"messages": [*request.messages, *_one_call(ask, plate, 'added box "plate".')[1:]]}
    )
    calls.clear()
    answered = await model.request(done)
    assert answered.text == "The sun is a sphere." and not answered.tool_calls
    assert answered.finish_reason == "stop" and len(calls) == 1
    # ... and with no whole sentence in it, the error stands.
    cut = ModelResponse(parts=[TextPart(text="The sun is a")], finish_reason="length")
    calls.clear()
    with pytest.raises(ResponseTruncatedError, match=r"cut off \(test\)"):
        await model.request(done)


async def test_an_answer_cut_off_after_whole_calls_is_those_calls(
    qwen_engine: LocalEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # s24/7: the 1.5B model's turn held a whole add_node call, then text to the 1,024-token
    # cap; the run ended on ResponseTruncatedError with the call unmade.
    from agentsdk_openai.model import OpenAIChatModel

    model, _, request = _sun_made()
    plate = ToolCallPart(name="add_object", arguments={"name": "plate", "shape": "box"})
    broken = ToolCallPart(name="add_object", arguments={}, raw_arguments='{"name": "pla')
    chatter = TextPart(text="To add the plate, use add_object with these arguments: " * 30)
    cuts = [
        ModelResponse(parts=[plate, chatter], finish_reason="length"),
        ModelResponse(parts=[chatter, plate, chatter, broken], finish_reason="length"),
    ]
    real, calls = OpenAIChatModel.request, []

    async def cut(self: OpenAIChatModel, req: ModelRequest) -> ModelResponse:
        calls.append(req)
        if len(calls) == 1:
            raise ResponseTruncatedError("cut off (test)", response=cuts.pop(0))
        return await real(self, req)

    monkeypatch.setattr(OpenAIChatModel, "request", cut)
    for _ in range(2):
        calls.clear()
        made = await model.request(request)
        assert [c.arguments for c in made.tool_calls] == [plate.arguments], made.parts
        assert made.tool_calls[0].id == plate.id and not made.text
        assert made.finish_reason == "tool_calls"
        assert len(calls) == 1  # the engine was not asked again
    # Only a call cut in the middle, and no part left to ask for: the error stands.
    cuts.append(ModelResponse(parts=[broken], finish_reason="length"))
    calls.clear()
    with pytest.raises(ResponseTruncatedError, match=r"cut off \(test\)"):
        await model.request(request.model_copy(update={"messages": request.messages[:1]}))
    await model.aclose()


MAKE = ADD.model_copy(update={"creates": "name"})
LIGHT = ToolSpec(
    name="add_light",
    description="Add a light to the scene.",
    parameters={
        "type": "object",
        "properties": {
            "kind": {"type": "string", "enum": ["point", "directional"]},
            "name": {"type": "string"},
            "position": {"type": "array", "items": {"type": "number"}},
        },
        "required": ["kind"],
        "additionalProperties": False,
    },
    side_effects=True,
    creates="name",
)


async def test_a_missing_name_is_asked_for_with_the_call_that_makes_it_so_named(
    qwen_engine: LocalEngine,
) -> None:
    # Told in the cue that p2 was left, the 1.5B model sent p1's call again (new users'
    # prompt s18/2). A tool that declares the argument naming what it makes
    # (`creates`) gets that argument held to the missing name, so the call makes that part;
    # for a light, the tool that makes lights.
    model = connect("local:qwen2.5-coder-0.5b")
    assert isinstance(model, LocalChatModel)
    early = ModelResponse(parts=[TextPart(text="Done.")], usage=Usage(requests=1))
    settings = ModelSettings(temperature=0, max_tokens=96)
    cases = [
        (
            "Make four red cylinders named p1, p2, p3 and p4 at (2, 0, 0), (0, 0, 2), "
            "(-2, 0, 0) and (0, 0, -2).",
            ToolCallPart(name="add_object", arguments={"name": "p1", "shape": "cone"}),
            ("add_object", "p2"),
        ),
        (
            "Add a red box named crate and a point light named lamp above it.",
            ToolCallPart(name="add_object", arguments={"name": "crate", "shape": "box"}),
            ("add_light", "lamp"),
        ),
    ]
    for ask, first, (tool_name, name) in cases:
        request = ModelRequest(
            messages=_one_call(ask, first, f'added "{first.arguments["name"]}".'),
            tools=[MAKE, LIGHT],
            settings=settings,
        )
        made = await model._make_unmade_part(request, early)
        (call,) = made.tool_calls
        _assert_valid(call, [MAKE, LIGHT])
        assert (call.name, call.arguments["name"]) == (tool_name, name), call
    # The narrower grammar reaches the engine on every path (chat, streamed, token trace):
    # held to a name the request never gives, the call carries that name.
    held = MAKE.model_copy(
        update={
            "parameters": {
                **MAKE.parameters,
                "properties": {**MAKE.parameters["properties"], "name": {"const": "Zed"}},
            }
        }
    )
    extra = {TURN_GRAMMAR: tool_call_grammar([held], "required")}
    for record in (False, True):
        ask = ModelRequest(
            messages=[Message.user("Add a red box named crate.")],
            tools=[MAKE, LIGHT],
            settings=settings.model_copy(
                update={"tool_choice": "required", "extra": extra, "record_tokens": record}
            ),
        )
        (call,) = (await model.request(ask)).tool_calls
        assert (call.name, call.arguments["name"]) == ("add_object", "Zed"), call
        if not record:
            streamed = [item async for item in model.stream(ask)][-1]
            assert isinstance(streamed, ModelResponse)
            assert [c.arguments["name"] for c in streamed.tool_calls] == ["Zed"]
    await model.aclose()


async def test_a_part_about_to_be_made_as_another_kind_is_asked_for_as_the_kind_named(
    qwen_engine: LocalEngine,
) -> None:
    # The 1.5B model made "a point light named Bulb" as a plane and "a white sphere named
    # lamp" as a point light (new users' prompts s20/5, s20/1). Such a call, for a part no
    # call has made yet, is sampled again with only the tools that make the kind asked
    # for, the name held; a part already made, or a call of the right kind, stands.
    model = connect("local:qwen2.5-coder-0.5b")
    assert isinstance(model, LocalChatModel)
    settings = ModelSettings(temperature=0, max_tokens=96)
    crate = ToolCallPart(name="add_object", arguments={"name": "crate", "shape": "box"})
    ask = "Add a red box named crate and a point light named lamp above it."
    request = ModelRequest(
        messages=_one_call(ask, crate, 'added "crate".'), tools=[MAKE, LIGHT], settings=settings
    )
    wrong = ModelResponse(
        parts=[ToolCallPart(name="add_object", arguments={"name": "lamp", "shape": "sphere"})],
        usage=Usage(requests=1),
    )
    remade = await model._remake_another_kind(request, wrong)
    (call,) = remade.tool_calls
    _assert_valid(call, [MAKE, LIGHT])
    assert (call.name, call.arguments["name"]) == ("add_light", "lamp"), call
    assert remade.usage.requests == 2
    # The other way round, on the first turn: a shape named as a light is made as a shape.
    sphere = "Add a white sphere named globe and light it."
    first = ModelRequest(messages=[Message.user(sphere)], tools=[MAKE, LIGHT], settings=settings)
    lit = ModelResponse(
        parts=[ToolCallPart(name="add_light", arguments={"kind": "point", "name": "globe"})]
    )
    (call,) = (await model._remake_another_kind(first, lit)).tool_calls
    assert (call.name, call.arguments["name"]) == ("add_object", "globe"), call
    # Left as they are: the right kind, a part already made, a call naming no part.
    right = ModelResponse(parts=[ToolCallPart(name="add_light", arguments={"name": "lamp"})])
    assert await model._remake_another_kind(request, right) is right
    made = ModelResponse(parts=[ToolCallPart(name="add_light", arguments={"name": "crate"})])
    assert await model._remake_another_kind(request, made) is made
    other = ModelResponse(parts=[ToolCallPart(name="add_light", arguments={"name": "key"})])
    assert await model._remake_another_kind(request, other) is other
    await model.aclose()


EXPORT = ToolSpec(
    name="export_scene",
    description="Export objects of the scene to a file.",
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "names": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["path"],
        "additionalProperties": False,
    },
    side_effects=True,
)


async def test_a_call_that_needs_a_part_not_yet_made_gets_the_call_that_makes_it(
    qwen_engine: LocalEngine,
) -> None:
    # The 1.5B model exported A, B and C with only A made, then A and B after the error
    # said C was missing, then all three again until the loop guard ended the run (new
    # users' prompt s18/5). Such a call is replaced by one that makes the missing part,
    # under its name, once per part per run; a part the request speaks of as one already
    # there ("the cube named C") is not made.
    model = connect("local:qwen2.5-coder-0.5b")
    assert isinstance(model, LocalChatModel)
    settings = ModelSettings(temperature=0, max_tokens=96)
    tools = [MAKE, LIGHT, EXPORT]
    a = ToolCallPart(name="add_object", arguments={"name": "A", "shape": "box"})
    ask = "Create three cubes named A, B and C in a row, then export them to row.glb."
    request = ModelRequest(messages=_one_call(ask, a, 'added "A".'), tools=tools, settings=settings)
    early = ToolCallPart(
        name="export_scene", arguments={"path": "row.glb", "names": ["A", "B", "C"]}
    )
    made = await model._make_premature_part(request, ModelResponse(parts=[early]))
    (call,) = made.tool_calls
    _assert_valid(call, tools)
    assert (call.name, call.arguments["name"]) == ("add_object", "B"), call
    # Once per part per run: asked again in the same run, the call stands.
    again = ModelResponse(parts=[early])
    assert await model._make_premature_part(request, again) is again
    # After a failure that names C, a call that works around it makes C instead.
    b = ToolCallPart(name="add_object", arguments={"name": "B", "shape": "box"})
    failed = ToolCallPart(
        name="export_scene", arguments={"path": "row.glb", "names": ["A", "B", "C"]}
    )

    def ran(call: ToolCallPart, text: str, error: bool = False) -> list[Message]:
        result = ToolResultPart(
            call_id=call.id, name=call.name, parts=[TextPart(text=text)], is_error=error
        )
        return [Message(role="assistant", parts=[call]), Message(role="tool", parts=[result])]

    missing = "export failed: no object named C (the scene has: A, B)"
    messages = [Message.user(ask), *ran(a, 'added "A".'), *ran(b, 'added "B".')]
    messages += ran(failed, missing, error=True)
    after = ModelRequest(messages=messages, tools=tools, settings=settings)
    around = ModelResponse(
        parts=[
            ToolCallPart(name="export_scene", arguments={"path": "row.glb", "names": ["A", "B"]})
        ]
    )
    (call,) = (await model._make_premature_part(after, around)).tool_calls
    assert (call.name, call.arguments["name"]) == ("add_object", "C"), call
    # Left as they are: a call that makes a missing part, and one on a part the request
    # speaks of as there already.
    making = ModelResponse(parts=[ToolCallPart(name="add_object", arguments={"name": "C"})])
    assert await model._make_premature_part(after, making) is making
    there = ModelRequest(
        messages=[Message.user("Export the cube named C to c.glb.")], tools=tools, settings=settings
    )
    export = ModelResponse(
        parts=[ToolCallPart(name="export_scene", arguments={"path": "c.glb", "names": ["C"]})]
    )
    assert await model._make_premature_part(there, export) is export
    await model.aclose()


async def test_a_call_at_a_point_the_request_gives_is_sent_without_resting_on_every_path(
    qwen_engine: LocalEngine,
) -> None:
    # The engine writes add_object(name="sun", position=[0, 3, 0], rest_on="ground") under a
    # grammar held to those values (the 1.5B model's habit on "a red sphere named sun at
    # (0, 3, 0)"); by chat and stream the call comes back without rest_on, which would
    # have put the sun on the ground, and with the sphere's shape and colour. A token trace keeps the call as sampled: its ids
    # must decode to it, as no mend of a turn applies there. The tool is three.js's own.
    from agentsdk_threejs import ThreeJSToolkit

    (add,) = [t.spec() for t in ThreeJSToolkit().tools() if t.name == "add_object"]
    fixed = {"name": "sun", "position": [0, 3, 0], "rest_on": "ground"}
    held = add.model_copy(
        update={
            "parameters": {
                "type": "object",
                "properties": {key: {"const": value} for key, value in fixed.items()},
                "required": list(fixed),
                "additionalProperties": False,
            }
        }
    )
    # Mended as asked: no rest_on, the shape and colour the words before the name give, and
    # the radius (three.js's sphere size is [r]).
    mended = {"name": "sun", "position": [0, 3, 0], "shape": "sphere", "color": "red", "size": [1]}
    model = connect("local:qwen2.5-coder-0.5b")
    assert isinstance(model, LocalChatModel)
    extra = {TURN_GRAMMAR: tool_call_grammar([held], "required")}
    settings = ModelSettings(temperature=0, max_tokens=96, tool_choice="required", extra=extra)
    for record in (False, True):
        ask = ModelRequest(
            messages=[Message.user("Add a red sphere named sun of radius 1 at (0, 3, 0).")],
            tools=[add],
            settings=settings.model_copy(update={"record_tokens": record}),
        )
        (call,) = (await model.request(ask)).tool_calls
        assert call.arguments == (fixed if record else mended)
        if not record:
            streamed = [item async for item in model.stream(ask)][-1]
            assert isinstance(streamed, ModelResponse)
            assert [c.arguments for c in streamed.tool_calls] == [call.arguments]
    await model.aclose()


RENDER = ToolSpec(
    name="render",
    description="Render the scene to an image.",
    parameters={"type": "object", "properties": {}, "additionalProperties": False},
)
EXPORT = ToolSpec(
    name="export_glb",
    description="Export the scene to a .glb file.",
    parameters={
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
        "additionalProperties": False,
    },
    side_effects=True,
)


async def test_an_answer_before_an_output_step_gets_the_call_for_it(
    qwen_engine: LocalEngine,
) -> None:
    # The 1.5B model answered "Render the result." where the request ended "and render the
    # result", and answered the three.js export task without exporting: an output step the
    # request asks for that a tool does, or a file it names, is asked for like a name.
    model = connect("local:qwen2.5-coder-0.5b")
    assert isinstance(model, LocalChatModel)
    early = ModelResponse(parts=[TextPart(text="Render the result.")], usage=Usage(requests=1))
    box = ToolCallPart(name="add_object", arguments={"name": "box", "shape": "box"})
    settings = ModelSettings(temperature=0, max_tokens=96)
    ask = "Add a box named box, then render the result."
    request = ModelRequest(
        messages=_one_call(ask, box, 'added box "box".'), tools=[ADD, RENDER], settings=settings
    )
    # Not on the run's last turn: a call then ends the run on its limit, unanswered.
    last = request.model_copy(update={"last_turn": True})
    assert await model._make_unmade_part(last, early) is early
    made = await model._make_unmade_part(request, early)
    assert [call.name for call in made.tool_calls] == ["render"], made.parts
    # Without a tool that renders there is nothing to call for it: the answer stands.
    alone = request.model_copy(
        update={
            "messages": _one_call(ask, box.model_copy(update={"id": "r1"}), "ok"),
            "tools": [ADD],
        }
    )
    assert await model._make_unmade_part(alone, early) is early
    # The file a request names: its export is asked for, to that file.
    ask = "Add a green cone named tree and export the scene to tree.glb."
    tree = ToolCallPart(name="add_object", arguments={"name": "tree", "shape": "cone"})
    request = ModelRequest(
        messages=_one_call(ask, tree, 'added cone "tree".'), tools=[ADD, EXPORT], settings=settings
    )
    exported = await model._make_unmade_part(request, early)
    (call,) = exported.tool_calls
    _assert_valid(call, [EXPORT])
    assert call.arguments["path"].endswith("tree.glb"), call.arguments
    # Only a step left and one tool that does it: that tool's call is the one asked for,
    # whatever else is offered (godot/red-target-in-frame got fit_view once more instead).
    ask = "Frame the cube with the camera, so that a screenshot shows it. Take a screenshot."
    fit = ToolCallPart(name="fit_view", arguments={"names": ["cube"]})
    request = ModelRequest(
        messages=_one_call(ask, fit, "Camera moved to (2, 0, 0)."),
        tools=[FIT, ADD, SCREENSHOT],
        settings=settings,
    )
    shot = await model._make_unmade_part(request, early)
    assert [call.name for call in shot.tool_calls] == ["screenshot"], shot.parts
    # Two parts left: the cue lists both, but each answer asks once for one of them, so
    # the step listed second is still asked for at the next answer (session 17's Lid and
    # "render the result": with both marked asked, the render never was).
    ask = "Add a box named box and a cone named tip, then render the result."
    request = ModelRequest(
        messages=_one_call(ask, box.model_copy(update={"id": "two"}), 'added box "box".'),
        tools=[ADD, RENDER],
        settings=settings,
    )
    first = await model._make_unmade_part(request, early)
    assert first.tool_calls, first.parts
    second = await model._make_unmade_part(request, early)
    assert [call.name for call in second.tool_calls] == ["render"], second.parts
    assert await model._make_unmade_part(request, early) is early
    await model.aclose()


FIT = ToolSpec(
    name="fit_view",
    description="Move the camera so that the named objects fill the view.",
    parameters={
        "type": "object",
        "properties": {"names": {"type": "array", "items": {"type": "string"}}},
        "required": ["names"],
        "additionalProperties": False,
    },
    side_effects=True,
)
SCREENSHOT = ToolSpec(
    name="screenshot",
    description="Run the game and capture a picture of what the camera sees.",
    parameters={"type": "object", "properties": {}, "additionalProperties": False},
)
