"""Every response is a usable turn or a documented error, streamed or not; shapes real
servers send are read when their intent is clear, and named when they cannot be."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
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
    ContentFilteredError,
    EmptyResponseError,
    MalformedResponseError,
    Message,
    ModelError,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    ResponseTruncatedError,
    StreamDelta,
    ToolCallPart,
)

ASK = ModelRequest(messages=[Message.user("hello")])
BARE_EXCEPTIONS = (ValueError, AttributeError, KeyError, IndexError, TypeError)


def both(body: dict[str, Any]) -> Any:
    """A reply serving ``body`` whole, or as the stream a server would send for it."""

    def reply(request: httpx.Request) -> httpx.Response:
        if not json.loads(request.content).get("stream"):
            return httpx.Response(200, json=body)
        events = []
        for choice in body.get("choices") or []:
            message = choice["message"]
            delta = {k: v for k, v in message.items() if k != "tool_calls"}
            if message.get("tool_calls"):
                delta["tool_calls"] = [
                    {**call, "index": i} for i, call in enumerate(message["tool_calls"])
                ]
            events.append(chunk(delta))
            events.append(chunk(finish_reason=choice.get("finish_reason")))
        if "usage" in body:
            events.append(chunk(usage=body["usage"]))
        return sse_response(*events, DONE)

    return reply


async def ask(model: Any, stream: bool, request: ModelRequest = ASK) -> ModelResponse:
    if not stream:
        response: ModelResponse = await model.request(request)
        return response
    items = [item async for item in model.stream(request)]
    assert isinstance(items[-1], ModelResponse)
    return items[-1]


STREAMED = pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])


# -- the one rule: a usable turn or a documented error ------------------------------------


@pytest.mark.anyio
@STREAMED
async def test_content_filter_without_content_is_an_error_not_an_empty_answer(
    stream: bool,
) -> None:
    recorder = Recorder(both(completion(None, finish_reason="content_filter")))
    clock = FakeClock()
    with pytest.raises(ContentFilteredError) as caught:
        await ask(mock_model(recorder, clock=clock), stream)
    assert caught.value.refusal is None and caught.value.retryable is False
    assert "content filter" in str(caught.value) and "'content_filter'" in str(caught.value)
    assert len(recorder.requests) == 1 and clock.sleeps == []


@pytest.mark.anyio
@STREAMED
async def test_content_filter_after_some_text_keeps_that_text(stream: bool) -> None:
    recorder = Recorder(both(completion("Here is how to", finish_reason="content_filter")))
    with pytest.raises(ContentFilteredError) as caught:
        await ask(mock_model(recorder), stream)
    assert caught.value.refusal == "Here is how to" and "Here is how to" in str(caught.value)


@pytest.mark.anyio
@STREAMED
async def test_a_refusal_field_is_a_content_filtered_error(stream: bool) -> None:
    body = completion(None)
    body["choices"][0]["message"]["refusal"] = "I can't help with that."
    recorder = Recorder(both(body))
    with pytest.raises(ContentFilteredError) as caught:
        await ask(mock_model(recorder), stream)
    assert caught.value.refusal == "I can't help with that."
    assert 'the model refused: "I can\'t help with that."' in str(caught.value)


@pytest.mark.anyio
@STREAMED
async def test_length_is_a_truncation_error_that_keeps_the_turn(stream: bool) -> None:
    recorder = Recorder(both(completion("The answer is forty", finish_reason="length")))
    request = ASK.model_copy(update={"settings": ModelSettings(max_tokens=7)})
    with pytest.raises(ResponseTruncatedError) as caught:
        await ask(mock_model(recorder), stream, request)
    assert caught.value.response is not None
    assert caught.value.response.text == "The answer is forty"
    assert caught.value.response.finish_reason == "length"
    assert "max_tokens=7" in str(caught.value) and "allow_truncated=True" in str(caught.value)
    assert caught.value.retryable is False and len(recorder.requests) == 1


@pytest.mark.anyio
@STREAMED
async def test_allow_truncated_accepts_a_cut_answer_but_never_an_empty_one(stream: bool) -> None:
    recorder = Recorder(
        both(completion("The answer is forty", finish_reason="length")),
        both(completion("", finish_reason="length")),
    )
    model = mock_model(recorder)
    request = ASK.model_copy(update={"settings": ModelSettings(allow_truncated=True)})
    response = await ask(model, stream, request)
    assert response.text == "The answer is forty" and response.finish_reason == "length"
    with pytest.raises(ResponseTruncatedError, match="nothing usable came before the cut"):
        await ask(model, stream, request)


EMPTY_BODIES = {
    "empty-choices": {"id": "x", "choices": []},
    "no-choices-key": {"id": "x", "usage": {"prompt_tokens": 3, "completion_tokens": 0}},
    "empty-content": completion(""),
    "null-content": completion(None),
    "whitespace": completion(" \n "),
}


@pytest.mark.anyio
@STREAMED
@pytest.mark.parametrize("body", EMPTY_BODIES.values(), ids=EMPTY_BODIES.keys())
async def test_an_empty_turn_is_retried_then_an_empty_response_error(
    stream: bool, body: dict[str, Any]
) -> None:
    recorder = Recorder(both(body))
    clock = FakeClock()
    with pytest.raises(EmptyResponseError) as caught:
        await ask(mock_model(recorder, clock=clock), stream)
    assert caught.value.retryable is True and "gave up after 4 attempts" in str(caught.value)
    assert "the server answered with" in str(caught.value)
    assert len(recorder.requests) == 4 and len(clock.sleeps) == 3


@pytest.mark.anyio
@STREAMED
async def test_an_empty_turn_then_a_real_one_succeeds(stream: bool) -> None:
    recorder = Recorder(both({"choices": []}), both(completion("there you are")))
    clock = FakeClock()
    response = await ask(mock_model(recorder, clock=clock), stream)
    assert response.text == "there you are" and len(clock.sleeps) == 1


@pytest.mark.anyio
@STREAMED
async def test_an_agent_run_never_succeeds_with_an_empty_answer(stream: bool) -> None:
    agent = Agent(mock_model(Recorder(both({"choices": []}))))
    with pytest.raises(EmptyResponseError):
        if stream:
            async for _ in agent.stream("hi"):
                pass
        else:
            await agent.run("hi")


@pytest.mark.anyio
@STREAMED
@pytest.mark.parametrize(
    ("reported", "has_call", "expected"),
    [
        (None, False, "stop"),
        (None, True, "tool_calls"),
        ("eos", False, "stop"),
        ("function_call", True, "tool_calls"),
        ("end_turn", False, "stop"),
        ("something_new", False, "something_new"),
    ],
)
async def test_the_finish_reason_is_always_set_in_openai_words(
    stream: bool, reported: str | None, has_call: bool, expected: str
) -> None:
    calls = [("c1", "add", '{"a": 1}')] if has_call else None
    body = completion(None if has_call else "ok", calls)
    body["choices"][0]["finish_reason"] = reported
    response = await ask(mock_model(Recorder(both(body))), stream)
    assert response.finish_reason == expected


# -- tolerant parsing ---------------------------------------------------------------------


@pytest.mark.anyio
async def test_arguments_as_an_object_numeric_ids_and_usage_as_strings() -> None:
    body = completion(None, finish_reason="tool_calls")
    body["choices"][0]["message"]["tool_calls"] = [
        {"id": 17, "type": "function", "function": {"name": "add", "arguments": {"a": 1, "b": 2}}}
    ]
    body["usage"] = {
        "prompt_tokens": "12",
        "completion_tokens": 5.0,
        "prompt_tokens_details": {"cached_tokens": "4"},
    }
    response = await mock_model(Recorder(httpx.Response(200, json=body))).request(ASK)
    assert response.tool_calls == [ToolCallPart(id="17", name="add", arguments={"a": 1, "b": 2})]
    usage = response.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens) == (12, 5, 4)


@pytest.mark.anyio
async def test_content_as_parts_and_the_legacy_function_call() -> None:
    body = completion(None, finish_reason="function_call")
    message = body["choices"][0]["message"]
    message["content"] = [{"type": "text", "text": "Let me "}, {"type": "text", "text": "add."}]
    message["function_call"] = {"name": "add", "arguments": '{"a": 2, "b": 3}'}
    response = await mock_model(Recorder(httpx.Response(200, json=body))).request(ASK)
    assert response.text == "Let me add." and response.finish_reason == "tool_calls"
    (call,) = response.tool_calls
    assert (call.name, call.arguments) == ("add", {"a": 2, "b": 3})


@pytest.mark.anyio
async def test_streamed_string_indexes_numeric_ids_object_arguments_and_missing_indexes() -> None:
    events = [
        chunk({"role": "assistant"}),
        chunk({"tool_calls": [{"index": "0", "id": 5, "function": {"name": "add"}}]}),
        chunk({"tool_calls": [{"index": "0", "function": {"arguments": '{"a": '}}]}),
        chunk({"tool_calls": [{"index": "0", "function": {"arguments": "1}"}}]}),
        # a server that sends the next call whole, and no index at all
        chunk({"tool_calls": [{"id": "c2", "function": {"name": "mul", "arguments": {"x": 3}}}]}),
        chunk({"tool_calls": [{"function": {"arguments": ""}}]}),
        chunk(finish_reason="tool_calls"),
        chunk(usage={"prompt_tokens": "9", "completion_tokens": "4"}),
        DONE,
    ]
    model = mock_model(Recorder(sse_response(*events)))
    *deltas, response = [item async for item in model.stream(ASK)]
    assert all(isinstance(d, StreamDelta) for d in deltas)
    assert response.tool_calls == [
        ToolCallPart(id="5", name="add", arguments={"a": 1}),
        ToolCallPart(id="c2", name="mul", arguments={"x": 3}),
    ]
    assert (response.usage.input_tokens, response.usage.output_tokens) == (9, 4)


MALFORMED = {
    "usage-not-a-number": (
        lambda b: b["usage"].update(prompt_tokens="lots"),
        "usage.prompt_tokens",
    ),
    "usage-negative": (
        lambda b: b["usage"].update(completion_tokens=-3),
        "usage.completion_tokens",
    ),
    "usage-not-an-object": (lambda b: b.update(usage="12 tokens"), "usage"),
    "null-choice": (lambda b: b.update(choices=[None]), "choices[0]"),
    "choices-not-a-list": (lambda b: b.update(choices={"0": {}}), "choices"),
    "message-missing": (lambda b: b["choices"][0].pop("message"), "choices[0].message"),
    "content-a-number": (
        lambda b: b["choices"][0]["message"].update(content=42),
        "choices[0].message.content",
    ),
    "tool-calls-not-a-list": (
        lambda b: b["choices"][0]["message"].update(tool_calls={"name": "add"}),
        "choices[0].message.tool_calls",
    ),
    "tool-call-without-name": (
        lambda b: b["choices"][0]["message"].update(tool_calls=[{"function": {}}]),
        "choices[0].message.tool_calls[0].function.name",
    ),
    "id-an-object": (
        lambda b: b["choices"][0]["message"].update(
            tool_calls=[{"id": {"x": 1}, "function": {"name": "add", "arguments": "{}"}}]
        ),
        "choices[0].message.tool_calls[0].id",
    ),
    "finish-reason-a-number": (
        lambda b: b["choices"][0].update(finish_reason=1),
        "choices[0].finish_reason",
    ),
    "body-a-list": (lambda b: (b.clear(), b.update({"__list__": True})), "body"),
}


@pytest.mark.anyio
@pytest.mark.parametrize(("damage", "field"), MALFORMED.values(), ids=list(MALFORMED.keys()))
async def test_a_wrong_shape_is_malformed_with_the_field_named_and_retried(
    damage: Any, field: str
) -> None:
    body = completion("fine")
    damage(body)
    payload: Any = [body] if body.get("__list__") else body
    recorder = Recorder(
        httpx.Response(200, json=payload), httpx.Response(200, json=completion("ok"))
    )
    clock = FakeClock()
    model = mock_model(recorder, clock=clock)
    assert (await model.request(ASK)).text == "ok"  # a glitch: asked again, answered
    recorder = Recorder(httpx.Response(200, json=payload))
    with pytest.raises(MalformedResponseError) as caught:
        await mock_model(recorder, clock=clock).request(ASK)
    assert caught.value.field == field, str(caught.value)
    assert field in str(caught.value) and "gave up after 4 attempts" in str(caught.value)
    assert not isinstance(caught.value, BARE_EXCEPTIONS)


STREAM_MALFORMED = {
    "chunk-a-list": ("data: [1, 2]\n\n", "stream chunk"),
    "null-choice": ('data: {"choices": [null]}\n\n', "choices[0]"),
    "delta-a-string": ('data: {"choices": [{"delta": "hi"}]}\n\n', "choices[0].delta"),
    "usage-not-a-number": (
        'data: {"choices": [], "usage": {"prompt_tokens": "n/a"}}\n\n',
        "usage.prompt_tokens",
    ),
    "index-not-a-number": (
        'data: {"choices": [{"delta": {"tool_calls": [{"index": "first"}]}}]}\n\n',
        "choices[0].delta.tool_calls[0].index",
    ),
    "not-json": ('data: {"choices": [\n\n', "stream event"),
}


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("event", "field"), STREAM_MALFORMED.values(), ids=list(STREAM_MALFORMED.keys())
)
async def test_a_streamed_wrong_shape_before_any_delta_is_retried_then_named(
    event: str, field: str
) -> None:
    good = sse_response(chunk({"content": "ok"}), chunk(finish_reason="stop"), DONE)
    recorder = Recorder(sse_response(chunk({"role": "assistant"}), event, DONE), good)
    clock = FakeClock()
    *_, response = [i async for i in mock_model(recorder, clock=clock).stream(ASK)]
    assert response.text == "ok" and len(recorder.requests) == 2 and len(clock.sleeps) == 1
    recorder = Recorder(sse_response(chunk({"role": "assistant"}), event, DONE))
    with pytest.raises(MalformedResponseError) as caught:
        async for _ in mock_model(recorder, clock=clock).stream(ASK):
            pass
    assert caught.value.field == field, str(caught.value)
    assert len(recorder.requests) == 4


# -- glitches before anything was shown are retried; after, they are raised -----------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    "glitch",
    [
        sse_response(chunk({"role": "assistant"})),  # ended before [DONE], nothing shown
        sse_response('data: {"error": {"message": "worker died", "type": "server_error"}}\n\n'),
        sse_response('data: {"error": {"message": "busy", "code": 503}}\n\n'),
        sse_response(chunk({"content": "  "}), chunk({"content": "\n"})),  # only whitespace
    ],
    ids=["ended-early", "server-error-event", "503-event", "whitespace-then-cut"],
)
async def test_a_stream_that_fails_before_its_first_delta_is_retried(
    glitch: httpx.Response,
) -> None:
    recorder = Recorder(
        glitch, sse_response(chunk({"content": "ok"}), chunk(finish_reason="stop"), DONE)
    )
    clock = FakeClock()
    items = [item async for item in mock_model(recorder, clock=clock).stream(ASK)]
    assert [i.text for i in items if isinstance(i, StreamDelta)] == ["ok"]
    assert len(recorder.requests) == 2 and len(clock.sleeps) == 1


@pytest.mark.anyio
async def test_an_error_event_the_client_caused_is_not_retried() -> None:
    event = 'data: {"error": {"message": "context too long", "type": "BadRequestError", "code": 400}}\n\n'
    recorder = Recorder(sse_response(event))
    with pytest.raises(ModelError, match="context too long") as caught:
        async for _ in mock_model(recorder).stream(ASK):
            pass
    assert caught.value.retryable is False and caught.value.status_code == 400
    assert len(recorder.requests) == 1


@pytest.mark.anyio
async def test_after_the_first_delta_a_failure_is_raised_not_replayed() -> None:
    recorder = Recorder(
        sse_response(
            chunk({"content": "Hel"}),
            'data: {"error": {"message": "worker died", "type": "server_error"}}\n\n',
        )
    )
    seen: list[Any] = []
    with pytest.raises(ModelError, match="worker died") as caught:
        async for item in mock_model(recorder).stream(ASK):
            seen.append(item)
    assert [type(i) for i in seen] == [StreamDelta] and caught.value.retryable is True
    assert len(recorder.requests) == 1


# -- the finish reason reaches the run's result ---------------------------------------------


@pytest.mark.anyio
@STREAMED
async def test_the_run_result_carries_the_last_turns_finish_reason(stream: bool) -> None:
    recorder = Recorder(both(completion("The answer is forty", finish_reason="length")))
    agent = Agent(mock_model(recorder), settings=ModelSettings(allow_truncated=True))
    if stream:
        events = [e async for e in agent.stream("hi")]
        result = events[-1].result  # type: ignore[attr-defined]
    else:
        result = await agent.run("hi")
    assert result.output == "The answer is forty" and result.finish_reason == "length"


@pytest.mark.anyio
async def test_a_stream_answered_with_a_whole_json_body_is_read() -> None:
    # a server or proxy that ignored "stream": true
    recorder = Recorder(httpx.Response(200, json=completion("whole, not streamed")))
    response = await ask(mock_model(recorder), True)
    assert response.text == "whole, not streamed" and len(recorder.requests) == 1
