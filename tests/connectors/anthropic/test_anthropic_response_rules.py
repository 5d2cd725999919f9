"""Every response is a usable turn or a documented error, streamed or not; shapes real
gateways send are read when their intent is clear, and named when they cannot be."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from agentsdk.http import CONNECT_TIMEOUT
from agentsdk_anthropic import RetryPolicy
from anthropic_recordings import (
    TEXT_STREAM,
    FakeClock,
    MakeModel,
    answer,
    json_reply,
    message_body,
    sse,
    stream_of,
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

ASK = ModelRequest(messages=[Message.user("hi")])
TEXT = [{"type": "text", "text": "fine"}]
BARE_EXCEPTIONS = (ValueError, AttributeError, KeyError, IndexError, TypeError)


async def _ask(model: Any, stream: bool, request: ModelRequest = ASK) -> ModelResponse:
    if not stream:
        response: ModelResponse = await model.request(request)
        return response
    items = [item async for item in model.stream(request)]
    assert isinstance(items[-1], ModelResponse)
    return items[-1]


def _event(data: dict[str, Any]) -> str:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n"


# -- the one rule: usable turn or documented error -----------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_a_refusal_is_a_content_filtered_error_with_its_text(
    make_model: MakeModel, clock: FakeClock, stream: bool
) -> None:
    refused = message_body(
        [{"type": "text", "text": "I can't help with that."}], stop_reason="refusal"
    )
    model, fake = make_model(answer(refused))
    with pytest.raises(ContentFilteredError) as info:
        await _ask(model, stream)
    assert info.value.refusal == "I can't help with that." and info.value.retryable is False
    assert "refused" in str(info.value) and "stop_reason 'refusal'" in str(info.value)
    assert len(fake.requests) == 1 and clock.sleeps == []  # the same request, the same verdict


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_max_tokens_is_a_truncation_error_that_keeps_the_turn(
    make_model: MakeModel, stream: bool
) -> None:
    cut = message_body(
        [{"type": "text", "text": "The answer is forty"}],
        stop_reason="max_tokens",
        usage={"input_tokens": 9, "output_tokens": 5},
    )
    model, fake = make_model(answer(cut))
    request = ASK.model_copy(update={"settings": ModelSettings(max_tokens=5)})
    with pytest.raises(ResponseTruncatedError) as info:
        await _ask(model, stream, request)
    assert info.value.response is not None
    assert info.value.response.text == "The answer is forty"
    assert info.value.response.finish_reason == "length"
    assert "max_tokens=5" in str(info.value) and "allow_truncated" in str(info.value)
    assert len(fake.requests) == 1


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_allow_truncated_accepts_a_cut_answer_but_not_an_empty_one(
    make_model: MakeModel, stream: bool
) -> None:
    cut = message_body([{"type": "text", "text": "The answer is forty"}], stop_reason="max_tokens")
    nothing = message_body([], stop_reason="max_tokens")
    model, _ = make_model(answer(cut), answer(nothing))
    request = ASK.model_copy(update={"settings": ModelSettings(allow_truncated=True)})
    response = await _ask(model, stream, request)
    assert response.text == "The answer is forty" and response.finish_reason == "length"
    with pytest.raises(ResponseTruncatedError, match="nothing usable came before the cut"):
        await _ask(model, stream, request)


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize(
    "content", [[], [{"type": "text", "text": "  \n"}], None], ids=["no-blocks", "blank", "null"]
)
async def test_an_empty_turn_is_retried_then_an_empty_response_error(
    make_model: MakeModel, clock: FakeClock, stream: bool, content: Any
) -> None:
    empty = message_body(content or [])
    reply = answer(empty)
    if content is None:  # a gateway's "content": null (only a whole body can say that)
        empty["content"] = None
        reply = json_reply(200, empty) if not stream else sse(stream_of(message_body([])))
    model, fake = make_model(*[reply] * 4)
    with pytest.raises(EmptyResponseError) as info:
        await _ask(model, stream)
    assert info.value.retryable is True and "gave up after 4 attempts" in str(info.value)
    assert info.value.finish_reason == "stop"
    assert len(fake.requests) == 4 and len(clock.sleeps) == 3


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_an_empty_turn_then_a_real_one_succeeds(
    make_model: MakeModel, clock: FakeClock, stream: bool
) -> None:
    model, fake = make_model(answer(message_body([])), answer(message_body(TEXT)))
    assert (await _ask(model, stream)).text == "fine"
    assert len(fake.requests) == 2 and len(clock.sleeps) == 1


@pytest.mark.anyio
async def test_an_agent_run_never_succeeds_with_an_empty_answer(make_model: MakeModel) -> None:
    model, _ = make_model(*[answer(message_body([]))] * 4)
    with pytest.raises(EmptyResponseError):
        await Agent(model).run("hi")


# -- tolerant parsing ---------------------------------------------------------------------


@pytest.mark.anyio
async def test_usage_as_numeric_strings_numeric_ids_and_input_as_json_text(
    make_model: MakeModel,
) -> None:
    body = message_body(
        [{"type": "tool_use", "id": 7, "name": "add", "input": '{"a": 1, "b": 2}'}],
        stop_reason="tool_use",
        usage={"input_tokens": "12", "output_tokens": 6.0, "cache_read_input_tokens": "3"},
    )
    model, _ = make_model(json_reply(200, body))
    response = await model.request(ASK)
    (call,) = response.tool_calls
    assert (call.id, call.name, call.arguments) == ("7", "add", {"a": 1, "b": 2})
    assert (response.usage.input_tokens, response.usage.output_tokens) == (15, 6)
    assert response.usage.cache_read_tokens == 3


@pytest.mark.anyio
async def test_input_that_is_not_an_object_goes_back_to_the_model(make_model: MakeModel) -> None:
    body = message_body(
        [{"type": "tool_use", "id": "toolu_1", "name": "add", "input": [1, 2]}],
        stop_reason="tool_use",
    )
    model, _ = make_model(json_reply(200, body))
    (call,) = (await model.request(ASK)).tool_calls
    assert call.arguments == {} and call.raw_arguments == "[1, 2]"


@pytest.mark.anyio
async def test_streamed_string_index_and_tool_input_sent_whole_at_the_start(
    make_model: MakeModel,
) -> None:
    events = "".join(
        _event(e)
        for e in [
            {"type": "message_start", "message": {"usage": {"input_tokens": "4"}}},
            {
                "type": "content_block_start",
                "index": "0",
                "content_block": {
                    "type": "tool_use",
                    "id": 99,
                    "name": "add",
                    "input": {"a": 1, "b": 2},
                },
            },
            {"type": "content_block_stop", "index": "0"},
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use"},
                "usage": {"output_tokens": 3},
            },
            {"type": "message_stop"},
        ]
    )
    model, _ = make_model(sse(events))
    response = await _ask(model, True)
    assert response.tool_calls == [ToolCallPart(id="99", name="add", arguments={"a": 1, "b": 2})]
    assert response.usage.input_tokens == 4 and response.finish_reason == "tool_calls"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("usage", "field"),
    [
        ({"input_tokens": "many", "output_tokens": 1}, "usage.input_tokens"),
        ({"input_tokens": 1, "output_tokens": [3]}, "usage.output_tokens"),
    ],
)
async def test_unreadable_usage_names_the_field(
    make_model: MakeModel, usage: dict[str, Any], field: str
) -> None:
    model, fake = make_model(*[json_reply(200, message_body(TEXT, usage=usage))] * 4)
    with pytest.raises(MalformedResponseError) as info:
        await model.request(ASK)
    assert info.value.field == field and field in str(info.value)
    assert info.value.retryable is True and len(fake.requests) == 4


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("content", "field"),
    [
        ([None], "content[0]"),
        ([{"type": "tool_use", "id": "t", "input": {}}], "content[0].name"),
        ("text", "content"),
    ],
    ids=["null-block", "tool-use-without-name", "content-not-a-list"],
)
async def test_content_in_the_wrong_shape_names_the_field(
    make_model: MakeModel, content: Any, field: str
) -> None:
    body = message_body(TEXT)
    body["content"] = content
    model, _ = make_model(*[json_reply(200, body)] * 4)
    with pytest.raises(MalformedResponseError) as info:
        await model.request(ASK)
    assert info.value.field == field, str(info.value)


@pytest.mark.anyio
async def test_a_delta_for_a_block_never_started_is_malformed(make_model: MakeModel) -> None:
    events = _event({"type": "message_start", "message": {"usage": {}}}) + _event(
        {"type": "content_block_delta", "index": 3, "delta": {"type": "text_delta", "text": "x"}}
    )
    model, _ = make_model(*[sse(events)] * 4)
    with pytest.raises(MalformedResponseError) as info:
        await _ask(model, True)
    assert info.value.field == "content_block_delta event.index"


# -- glitches before the first delta are retried --------------------------------------------


def _broken_after(text: str) -> httpx.Response:
    class Cut(httpx.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            yield text.encode()
            raise httpx.RemoteProtocolError("peer closed connection")

    return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=Cut())


START = TEXT_STREAM.split("event: content_block_start")[0]  # message_start only


@pytest.mark.anyio
@pytest.mark.parametrize(
    "glitch",
    [
        _broken_after(START),
        sse(START),  # ended cleanly, but before message_stop
        sse(
            START
            + _event(
                {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
            )
        ),
        sse(START + "event: content_block_start\ndata: {not json\n\n"),
        json_reply(200, {"type": "message", "content": "oops"}),
    ],
    ids=["cut-after-message-start", "ended-early", "overloaded-event", "bad-json", "bad-shape"],
)
async def test_a_stream_that_fails_before_its_first_delta_is_retried(
    make_model: MakeModel, clock: FakeClock, glitch: httpx.Response
) -> None:
    model, fake = make_model(glitch, sse(TEXT_STREAM))
    items = [item async for item in model.stream(ASK)]
    deltas = [i.text for i in items if isinstance(i, StreamDelta)]
    assert deltas == ["Hello", "!"] and isinstance(items[-1], ModelResponse)
    assert len(fake.requests) == 2 and len(clock.sleeps) == 1


@pytest.mark.anyio
async def test_a_body_cut_short_says_how_much_came(make_model: MakeModel) -> None:
    whole = json.dumps(message_body(TEXT)).encode()

    class Half(httpx.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            yield whole[:50]
            raise httpx.RemoteProtocolError("peer closed connection without sending complete body")

    cut = httpx.Response(
        200,
        headers={"content-length": str(len(whole)), "content-type": "application/json"},
        stream=Half(),
    )
    model, _ = make_model(cut, retry=RetryPolicy(max_attempts=1))
    with pytest.raises(ModelError) as info:
        await model.request(ASK)
    assert f"the server closed the connection after 50 of {len(whole)} bytes" in str(info.value)
    assert not isinstance(info.value, BARE_EXCEPTIONS) and info.value.retryable is True


@pytest.mark.anyio
async def test_stream_of_helper_round_trips(make_model: MakeModel) -> None:
    # The helper the fault tests lean on serves the same turn whole and streamed.
    body = message_body(
        [{"type": "tool_use", "id": "t1", "name": "add", "input": {"a": 1}}], stop_reason="tool_use"
    )
    model, _ = make_model(sse(stream_of(body)), json_reply(200, body))
    streamed, whole = await _ask(model, True), await _ask(model, False)
    assert streamed.parts == whole.parts and streamed.finish_reason == whole.finish_reason


@pytest.mark.anyio
async def test_the_run_result_carries_the_last_turns_finish_reason(make_model: MakeModel) -> None:
    cut = message_body([{"type": "text", "text": "The answer is forty"}], stop_reason="max_tokens")
    model, _ = make_model(answer(cut), answer(message_body(TEXT)))
    agent = Agent(model, settings=ModelSettings(allow_truncated=True))
    assert (await agent.run("hi")).finish_reason == "length"
    assert (await agent.run("hi")).finish_reason == "stop"


@pytest.mark.anyio
async def test_a_stream_answered_with_a_whole_message_body_is_read(make_model: MakeModel) -> None:
    # a gateway that ignored "stream": true
    model, fake = make_model(json_reply(200, message_body(TEXT)))
    response = await _ask(model, True)
    assert response.text == "fine" and len(fake.requests) == 1


@pytest.mark.anyio
async def test_waiting_for_a_pooled_connection_is_not_bounded_by_the_read_timeout(
    make_model: MakeModel,
) -> None:
    # A burst of runs queues for the pool's connections; that wait is ours, not the server's.
    # With httpx's pool timeout equal to a 2 s read timeout, 500 concurrent runs retried
    # PoolTimeouts until every one of them hit its run timeout (benchmarks/faults.py).
    seen: list[dict[str, Any]] = []

    def reply(request: httpx.Request) -> httpx.Response:
        seen.append(dict(request.extensions["timeout"]))
        return json_reply(200, message_body(TEXT))

    model, _ = make_model(reply, reply)
    await model.request(ASK)
    await model.request(ASK.model_copy(update={"settings": ModelSettings(timeout=2.0)}))
    assert [t["pool"] for t in seen] == [None, None]
    assert [t["read"] for t in seen] == [600.0, 2.0]
    # connecting is bounded apart, the same for every read timeout (agentsdk.http)
    assert [t["connect"] for t in seen] == [CONNECT_TIMEOUT, CONNECT_TIMEOUT] == [10.0, 10.0]
