"""Parsing complete Messages and assembling streamed ones."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from anthropic_recordings import (
    BAD_TOOL_JSON_STREAM,
    BROKEN_OFF_STREAM,
    MALFORMED_JSON_STREAM,
    OVERLOADED_MID_STREAM,
    TEXT_STREAM,
    TWO_TOOLS_STREAM,
    MakeModel,
    answer,
    json_reply,
    message_body,
    sse,
)

from agentsdk import (
    MalformedResponseError,
    Message,
    ModelError,
    ModelRequest,
    ModelResponse,
    StreamDelta,
    TextPart,
    ToolCallPart,
)

ASK = ModelRequest(messages=[Message.user("Weather in Paris and Oslo?")])


async def _collect(
    model_stream: AsyncIterator[StreamDelta | ModelResponse],
) -> tuple[list[StreamDelta], ModelResponse]:
    deltas: list[StreamDelta] = []
    final: list[ModelResponse] = []
    async for item in model_stream:
        (final if isinstance(item, ModelResponse) else deltas).append(item)  # type: ignore[arg-type]
    assert len(final) == 1, "the stream must end with exactly one ModelResponse"
    return deltas, final[0]


async def _deltas_before_error(
    model_stream: AsyncIterator[StreamDelta | ModelResponse],
) -> tuple[list[StreamDelta | ModelResponse], ModelError]:
    seen: list[StreamDelta | ModelResponse] = []
    with pytest.raises(ModelError) as info:
        async for item in model_stream:
            seen.append(item)
    return seen, info.value


@pytest.mark.anyio
async def test_non_streaming_text_tool_use_usage_and_skipped_thinking(
    make_model: MakeModel,
) -> None:
    body = message_body(
        [
            {"type": "thinking", "thinking": "Let me think", "signature": "sig"},
            {"type": "text", "text": "Let me check."},
            {
                "type": "tool_use",
                "id": "toolu_01A",
                "name": "get_weather",
                "input": {"city": "Paris"},
            },
        ],
        stop_reason="tool_use",
        usage={
            "input_tokens": 50,
            "cache_creation_input_tokens": 1000,
            "cache_read_input_tokens": 3000,
            "output_tokens": 40,
        },
    )
    model, _ = make_model(json_reply(200, body))
    response = await model.request(ASK)
    assert response.parts == [
        TextPart(text="Let me check."),
        ToolCallPart(id="toolu_01A", name="get_weather", arguments={"city": "Paris"}),
    ]
    assert response.finish_reason == "tool_calls"
    assert response.model_name == "anthropic:claude-sonnet-4-5"
    usage = response.usage
    assert (usage.input_tokens, usage.output_tokens) == (4050, 40)
    assert (usage.cache_read_tokens, usage.cache_write_tokens, usage.requests) == (3000, 1000, 1)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("stop_reason", "finish"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        (None, "stop"),  # a gateway that says nothing: the turn still has a finish reason
    ],
)
async def test_stop_reasons(make_model: MakeModel, stop_reason: str | None, finish: str) -> None:
    model, _ = make_model(
        json_reply(200, message_body([{"type": "text", "text": "x"}], stop_reason=stop_reason))
    )
    assert (await model.request(ASK)).finish_reason == finish


@pytest.mark.anyio
async def test_streamed_text_is_delivered_in_deltas_then_assembled(make_model: MakeModel) -> None:
    model, fake = make_model(sse(TEXT_STREAM))
    deltas, response = await _collect(model.stream(ASK))
    assert fake.body()["stream"] is True
    assert [d.text for d in deltas] == ["Hello", "!"]
    assert response.parts == [TextPart(text="Hello!")]
    assert response.finish_reason == "stop"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (25, 15)


@pytest.mark.anyio
async def test_streamed_text_and_two_tool_calls_from_json_fragments(make_model: MakeModel) -> None:
    model, _ = make_model(sse(TWO_TOOLS_STREAM))
    deltas, response = await _collect(model.stream(ASK))
    assert "".join(d.text for d in deltas) == "Checking both cities."
    starts = [(d.tool_call_index, d.tool_name) for d in deltas if d.tool_name]
    assert starts == [(0, "get_weather"), (1, "get_weather")]
    fragments = {0: "", 1: ""}
    for d in deltas:
        if d.arguments_delta:
            assert d.tool_call_index is not None
            fragments[d.tool_call_index] += d.arguments_delta
    assert fragments == {0: '{"city": "Paris", "unit": "c"}', 1: '{"city": "Oslo"}'}
    assert response.parts == [
        TextPart(text="Checking both cities."),
        ToolCallPart(
            id="toolu_01Paris", name="get_weather", arguments={"city": "Paris", "unit": "c"}
        ),
        ToolCallPart(id="toolu_01Oslo", name="get_weather", arguments={"city": "Oslo"}),
    ]
    assert response.finish_reason == "tool_calls"
    usage = response.usage
    assert (usage.input_tokens, usage.output_tokens) == (472 + 100 + 2048, 89)
    assert (usage.cache_read_tokens, usage.cache_write_tokens) == (2048, 100)


@pytest.mark.anyio
async def test_unparseable_streamed_tool_input_keeps_the_raw_text(make_model: MakeModel) -> None:
    model, _ = make_model(sse(BAD_TOOL_JSON_STREAM))
    _, response = await _collect(model.stream(ASK))
    (call,) = response.tool_calls
    assert call.arguments == {}
    assert call.raw_arguments == '{"city": Paris'
    assert call.id == "toolu_01Bad"


@pytest.mark.anyio
async def test_error_event_mid_stream_raises_and_returns_no_response(make_model: MakeModel) -> None:
    model, _ = make_model(sse(OVERLOADED_MID_STREAM))
    seen, error = await _deltas_before_error(model.stream(ASK))
    # the text deltas arrived; no ModelResponse did
    assert [x.text for x in seen if isinstance(x, StreamDelta)] == ["Hello", "!"]
    assert not any(isinstance(x, ModelResponse) for x in seen)
    assert "overloaded_error" in str(error) and "Overloaded" in str(error)
    assert error.retryable is True
    assert error.model_name == "anthropic:claude-sonnet-4-5"


@pytest.mark.anyio
async def test_stream_that_stops_before_message_stop_is_an_error(make_model: MakeModel) -> None:
    model, _ = make_model(sse(BROKEN_OFF_STREAM))
    seen, error = await _deltas_before_error(model.stream(ASK))
    assert not any(isinstance(x, ModelResponse) for x in seen)
    assert "before message_stop" in str(error)
    assert error.retryable is True


@pytest.mark.anyio
async def test_malformed_json_event_is_a_clear_error(make_model: MakeModel) -> None:
    model, _ = make_model(sse(MALFORMED_JSON_STREAM))
    seen, error = await _deltas_before_error(model.stream(ASK))
    assert not any(isinstance(x, ModelResponse) for x in seen)
    assert isinstance(error, MalformedResponseError) and error.field == "stream event"
    assert "stream event is not JSON" in str(error) and '"text": "!"' in str(error)
    assert error.retryable is True  # like a 5xx, but the deltas were shown: raised, not retried


# Up to and including the "Hello" delta: something was shown, so no silent replay.
CUT_AFTER_HELLO = TEXT_STREAM.split('"text": "!"')[0].rsplit("event:", 1)[0]


class _BreaksAfterFirstChunk(httpx.AsyncByteStream):
    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield CUT_AFTER_HELLO.encode()
        raise httpx.RemoteProtocolError(
            "peer closed connection without sending complete message body"
        )


@pytest.mark.anyio
async def test_connection_dropping_mid_stream_is_a_retryable_error(make_model: MakeModel) -> None:
    broken = httpx.Response(
        200, headers={"content-type": "text/event-stream"}, stream=_BreaksAfterFirstChunk()
    )
    model, fake = make_model(broken)
    seen, error = await _deltas_before_error(model.stream(ASK))
    assert not any(isinstance(x, ModelResponse) for x in seen)
    assert error.retryable is True
    assert str(error).endswith(
        f"the server closed the stream after {len(CUT_AFTER_HELLO)} bytes before message_stop; "
        "the partial answer was discarded"
    )
    assert "RemoteProtocolError" not in str(error)
    assert len(fake.requests) == 1  # a started stream is not silently replayed


@pytest.mark.anyio
async def test_streamed_output_tool_json_arrives_as_text(make_model: MakeModel) -> None:
    forecast = message_body(
        [
            {
                "type": "tool_use",
                "id": "toolu_01Out",
                "name": "final_result",
                "input": {"city": "Oslo"},
            }
        ],
        stop_reason="tool_use",
    )
    model, _ = make_model(answer(forecast))
    request = ASK.model_copy(update={"output_schema": {"type": "object"}})
    deltas, response = await _collect(model.stream(request))
    assert all(d.tool_name is None and not d.arguments_delta for d in deltas)
    assert "".join(d.text for d in deltas) == '{"city": "Oslo"}'
    assert response.parts == [TextPart(text='{"city": "Oslo"}')]
    assert response.finish_reason == "stop"
