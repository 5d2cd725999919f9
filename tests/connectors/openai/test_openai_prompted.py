"""Prompted tool calling: tools in the system prompt, calls parsed from the model's text."""

from __future__ import annotations

import json

import httpx
import pytest
from agentsdk.tools import ToolSpec
from agentsdk_openai import parse_tool_calls
from openai_wire_shapes import (
    DONE,
    FakeClock,
    Recorder,
    chunk,
    completion,
    mock_model,
    sse_response,
)

from agentsdk import (
    Agent,
    Message,
    ModelProfile,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    StreamDelta,
    tool,
)

WEATHER = ToolSpec(
    name="weather",
    description="Weather for a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)
PROMPTED = ModelProfile(native_tool_calls=False)


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>{"name": "weather", "arguments": {"city": "Oslo"}}</tool_call>',
        '<tool_call>\n{"name": "weather", "arguments": {"city": "Oslo"}}\n',  # closing tag cut off
        '```json\n{"name": "weather", "arguments": {"city": "Oslo"}}\n```',
        '```\n[{"name": "weather", "arguments": {"city": "Oslo"}}]\n```',
        '{"name": "weather", "arguments": {"city": "Oslo"}}',
        'Let me check.\n{"name": "weather", "parameters": {"city": "Oslo"}}',
        '{"name": "weather", "arguments": "{\\"city\\": \\"Oslo\\"}"}',  # arguments encoded twice
    ],
    ids=[
        "tagged",
        "tagged-unclosed",
        "fenced",
        "fenced-list",
        "bare",
        "bare-after-text",
        "string-arguments",
    ],
)
def test_all_three_formats_parse_to_the_same_call(text: str) -> None:
    _, calls = parse_tool_calls(text, ["weather"])
    assert [(c.name, c.arguments, c.raw_arguments) for c in calls] == [
        ("weather", {"city": "Oslo"}, None)
    ]


def test_several_tagged_calls_and_surrounding_text() -> None:
    text = 'Sure.\n<tool_call>{"name": "weather", "arguments": {"city": "Oslo"}}</tool_call>\n<tool_call>{"name": "weather", "arguments": {"city": "Rome"}}</tool_call>'
    remaining, calls = parse_tool_calls(text, ["weather"])
    assert remaining == "Sure." and [c.arguments["city"] for c in calls] == ["Oslo", "Rome"]
    assert calls[0].id != calls[1].id


def test_broken_json_keeps_the_raw_text_for_the_model_to_fix() -> None:
    _, calls = parse_tool_calls(
        '<tool_call>{"name": "weather", "arguments": {"city": "Oslo"</tool_call>', ["weather"]
    )
    (call,) = calls
    assert (
        call.name == "weather" and call.arguments == {} and call.raw_arguments == '{"city": "Oslo"'
    )
    _, bare = parse_tool_calls('{"name": "weather", "arguments": {"city": "Oslo"}', ["weather"])
    assert bare[0].raw_arguments is not None


def test_plain_answers_and_json_answers_are_not_calls() -> None:
    assert parse_tool_calls("It is sunny in Oslo.", ["weather"]) == ("It is sunny in Oslo.", [])
    data = '{"name": "Oslo", "country": "Norway", "population": 700000}'  # JSON, not a call
    assert parse_tool_calls(data, ["weather"]) == (data, [])
    fenced = 'Here:\n```json\n{"name": "Oslo", "population": 700000}\n```'
    assert parse_tool_calls(fenced, ["weather"]) == (fenced, [])


def test_a_call_to_a_tool_that_does_not_exist_still_reaches_the_loop() -> None:
    # The loop answers with the list of real tools, so the model can recover.
    text = '{"name":"say_hello","arguments": {"message":"Bonjour !"}}'
    _, calls = parse_tool_calls(text, ["weather"])
    assert [(c.name, c.arguments) for c in calls] == [("say_hello", {"message": "Bonjour !"})]


@pytest.mark.anyio
async def test_prompted_request_puts_tools_in_the_system_prompt_and_none_on_the_wire() -> None:
    recorder = Recorder(
        httpx.Response(
            200,
            json=completion(
                '<tool_call>{"name": "weather", "arguments": {"city": "Oslo"}}</tool_call>'
            ),
        )
    )
    model = mock_model(recorder, engine="llamacpp", profile=PROMPTED)
    request = ModelRequest(
        messages=[Message.system("Be brief."), Message.user("Weather in Oslo?")],
        tools=[WEATHER],
        settings=ModelSettings(tool_choice="required"),
    )
    response = await model.request(request)
    body = recorder.bodies()[0]
    assert "tools" not in body and "tool_choice" not in body
    system = body["messages"][0]["content"]
    assert (
        system.startswith("Be brief.") and '"name":"weather"' in system and "<tool_call>" in system
    )
    assert "must call at least one tool" in system
    assert [(c.name, c.arguments) for c in response.tool_calls] == [("weather", {"city": "Oslo"})]


@pytest.mark.anyio
async def test_prompted_stream_holds_back_call_text() -> None:
    events = [
        chunk({"content": "<tool_call>"}),
        chunk({"content": '{"name": "weather", "arguments": {"city": "Oslo"}}'}),
        chunk({"content": "</tool_call>"}),
        chunk(finish_reason="stop"),
        DONE,
    ]
    model = mock_model(Recorder(sse_response(*events)), engine="llamacpp", profile=PROMPTED)
    items = [
        i
        async for i in model.stream(
            ModelRequest(messages=[Message.user("Weather?")], tools=[WEATHER])
        )
    ]
    assert [i for i in items if isinstance(i, StreamDelta) and i.text] == []
    final = items[-1]
    assert (
        isinstance(final, ModelResponse)
        and final.text == ""
        and final.tool_calls[0].arguments == {"city": "Oslo"}
    )


@pytest.mark.anyio
async def test_prompted_round_trip_through_the_agent_loop() -> None:
    @tool
    def weather(city: str) -> str:
        """Weather for a city.

        Args:
            city: The city.
        """
        return f"Sunny in {city}"

    recorder = Recorder(
        httpx.Response(
            200, json=completion('```json\n{"name": "weather", "arguments": {"city": "Oslo"}}\n```')
        ),
        httpx.Response(200, json=completion("It is sunny in Oslo.")),
    )
    model = mock_model(recorder, engine="llamacpp", profile=PROMPTED)
    result = await Agent(model=model, tools=[weather]).run("Weather in Oslo?")
    assert result.output == "It is sunny in Oslo."
    second = recorder.bodies()[1]["messages"]
    # The earlier call is shown back in the same tag format, the result as plain text.
    assert second[-2] == {
        "role": "assistant",
        "content": '<tool_call>{"name":"weather","arguments":{"city":"Oslo"}}</tool_call>',
    }
    assert second[-1]["role"] == "user" and "Sunny in Oslo" in second[-1]["content"]


PARSE_FAILURE = {
    "error": {
        "code": 500,
        "message": "The model produced output that does not match the expected peg-native format",
        "type": "server_error",
    }
}


@pytest.mark.anyio
async def test_llamacpp_parse_failure_is_asked_again_with_prompted_tools() -> None:
    recorder = Recorder(
        httpx.Response(500, json=PARSE_FAILURE),
        httpx.Response(200, json=completion("Bonjour !")),
    )
    clock = FakeClock()
    model = mock_model(recorder, engine="llamacpp", clock=clock)
    response = await model.request(
        ModelRequest(messages=[Message.user("Say hello in French.")], tools=[WEATHER])
    )
    native, prompted = recorder.bodies()
    assert (
        "tools" in native and "tools" not in prompted and clock.sleeps == []
    )  # not retried blindly
    assert '"name":"weather"' in prompted["messages"][0]["content"]
    assert response.text == "Bonjour !" and response.tool_calls == []


@pytest.mark.anyio
async def test_llamacpp_parse_failure_mid_stream_is_asked_again() -> None:
    recorder = Recorder(
        sse_response(
            chunk({"role": "assistant", "content": None}), f"data: {json.dumps(PARSE_FAILURE)}\n\n"
        ),
        sse_response(
            chunk({"content": '{"name": "weather", "arguments": {"city": "Oslo"}}'}),
            chunk(finish_reason="stop"),
            DONE,
        ),
    )
    model = mock_model(recorder, engine="llamacpp")
    items = [
        i
        async for i in model.stream(
            ModelRequest(messages=[Message.user("Weather in Oslo?")], tools=[WEATHER])
        )
    ]
    final = items[-1]
    assert len(recorder.requests) == 2
    assert isinstance(final, ModelResponse) and [
        (c.name, c.arguments) for c in final.tool_calls
    ] == [("weather", {"city": "Oslo"})]


@pytest.mark.anyio
async def test_llamacpp_parse_failure_after_text_deltas_is_asked_again_whole() -> None:
    # With sampling, the model may write some text, then a call the engine cannot parse.
    recorder = Recorder(
        sse_response(
            chunk({"role": "assistant", "content": "Let me check"}),
            chunk({"content": " the weather."}),
            f"data: {json.dumps(PARSE_FAILURE)}\n\n",
        ),
        httpx.Response(
            200,
            json=completion(
                '<tool_call>{"name": "weather", "arguments": {"city": "Oslo"}}</tool_call>'
            ),
        ),
    )
    model = mock_model(recorder, engine="llamacpp")
    items = [
        i
        async for i in model.stream(
            ModelRequest(messages=[Message.user("Weather in Oslo?")], tools=[WEATHER])
        )
    ]
    *deltas, final = items
    assert [d.text for d in deltas] == ["Let me check", " the weather."]
    assert isinstance(final, ModelResponse)
    assert [(c.name, c.arguments) for c in final.tool_calls] == [("weather", {"city": "Oslo"})]
    streamed, whole = recorder.bodies()
    assert streamed["stream"] is True and "tools" in streamed
    assert "stream" not in whole and "tools" not in whole  # asked whole, tools in the prompt
    assert '"name":"weather"' in whole["messages"][0]["content"]


@pytest.mark.anyio
async def test_other_engines_retry_a_500_as_usual() -> None:
    recorder = Recorder(
        httpx.Response(500, json=PARSE_FAILURE), httpx.Response(200, json=completion("ok"))
    )
    clock = FakeClock()
    await mock_model(recorder, engine="vllm", clock=clock).request(
        ModelRequest(messages=[Message.user("hi")], tools=[WEATHER])
    )
    assert len(clock.sleeps) == 1 and "tools" in recorder.bodies()[1]
