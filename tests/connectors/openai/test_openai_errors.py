"""Every error class of the connector, against MockTransport, on a fake clock."""

from __future__ import annotations

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
    MalformedResponseError,
    Message,
    ModelAuthError,
    ModelError,
    ModelRequest,
    ModelResponse,
    StreamDelta,
)

REQUEST = ModelRequest(messages=[Message.user("hello")])


@pytest.mark.anyio
@pytest.mark.parametrize("status", [401, 403])
async def test_auth_errors_are_never_retried_and_hide_the_key(status: int) -> None:
    recorder = Recorder(
        httpx.Response(status, json={"error": {"message": "Incorrect API key provided"}})
    )
    clock = FakeClock()
    model = mock_model(recorder, engine="openai", clock=clock)
    with pytest.raises(ModelAuthError) as caught:
        await model.request(REQUEST)
    assert len(recorder.requests) == 1 and clock.sleeps == []
    assert "Incorrect API key provided" in str(caught.value)
    assert "OPENAI_API_KEY" in str(caught.value)
    assert "sk-test-secret-123" not in str(caught.value) and "sk-test-secret-123" not in repr(model)
    assert caught.value.retryable is False and caught.value.status_code == status


@pytest.mark.anyio
@pytest.mark.parametrize("status", [400, 404, 422])
async def test_client_errors_carry_the_server_message_and_model_name(status: int) -> None:
    recorder = Recorder(
        httpx.Response(status, json={"error": {"message": "model 'test-model' does not exist"}})
    )
    clock = FakeClock()
    with pytest.raises(ModelError) as caught:
        await mock_model(recorder, clock=clock).request(REQUEST)
    message = str(caught.value)
    assert "does not exist" in message and "test-model" in message and f"HTTP {status}" in message
    assert caught.value.retryable is False and len(recorder.requests) == 1 and clock.sleeps == []


@pytest.mark.anyio
@pytest.mark.parametrize("status", [429, 500, 502, 503])
async def test_transient_statuses_back_off_then_succeed(status: int) -> None:
    recorder = Recorder(
        httpx.Response(status, json={"error": {"message": "busy"}}),
        httpx.Response(status, text="busy"),
        httpx.Response(200, json=completion("finally")),
    )
    clock = FakeClock()
    response = await mock_model(recorder, clock=clock).request(REQUEST)
    assert response.text == "finally"
    assert len(recorder.requests) == 3 and len(clock.sleeps) == 2
    # Exponential with equal jitter: attempt n waits between half and all of base * 2**(n-1).
    assert 0.25 <= clock.sleeps[0] <= 0.5 and 0.5 <= clock.sleeps[1] <= 1.0


@pytest.mark.anyio
async def test_retry_after_header_is_honoured() -> None:
    recorder = Recorder(
        httpx.Response(
            429, headers={"Retry-After": "7"}, json={"error": {"message": "rate limited"}}
        ),
        httpx.Response(200, json=completion("ok")),
    )
    clock = FakeClock()
    await mock_model(recorder, clock=clock).request(REQUEST)
    assert clock.sleeps == [7.0]


@pytest.mark.anyio
async def test_gives_up_with_a_retryable_error_after_bounded_attempts() -> None:
    recorder = Recorder(httpx.Response(503, json={"error": {"message": "overloaded"}}))
    clock = FakeClock()
    with pytest.raises(ModelError) as caught:
        await mock_model(recorder, clock=clock).request(REQUEST)
    assert caught.value.retryable is True and caught.value.status_code == 503
    assert "overloaded" in str(caught.value) and "gave up after 4 attempts" in str(caught.value)
    assert len(recorder.requests) == 4 and len(clock.sleeps) == 3
    assert all(wait <= 20.0 for wait in clock.sleeps)


@pytest.mark.anyio
@pytest.mark.parametrize(
    "exc",
    [httpx.ConnectError("connection refused"), httpx.ReadTimeout("timed out")],
    ids=["connect-error", "read-timeout"],
)
async def test_connect_errors_and_read_timeouts_are_retried(exc: Exception) -> None:
    recorder = Recorder(exc, httpx.Response(200, json=completion("recovered")))
    clock = FakeClock()
    response = await mock_model(recorder, clock=clock).request(REQUEST)
    assert response.text == "recovered" and len(clock.sleeps) == 1


@pytest.mark.anyio
async def test_connect_errors_exhausted_become_retryable_model_error() -> None:
    recorder = Recorder(httpx.ConnectError("connection refused"))
    with pytest.raises(ModelError) as caught:
        await mock_model(recorder, clock=FakeClock()).request(REQUEST)
    assert caught.value.retryable is True
    assert "cannot connect to the server (connection refused)" in str(caught.value)
    assert "gave up after 4 attempts" in str(caught.value)


@pytest.mark.anyio
async def test_stream_retries_before_the_first_byte() -> None:
    recorder = Recorder(
        httpx.Response(429, headers={"Retry-After": "2"}, text="slow down"),
        sse_response(chunk({"content": "hi"}), chunk(finish_reason="stop"), DONE),
    )
    clock = FakeClock()
    items = [item async for item in mock_model(recorder, clock=clock).stream(REQUEST)]
    assert clock.sleeps == [2.0]
    assert isinstance(items[-1], ModelResponse) and items[-1].text == "hi"


async def _drain(model_stream: object) -> list[StreamDelta | ModelResponse]:
    items: list[StreamDelta | ModelResponse] = []
    async for item in model_stream:  # type: ignore[attr-defined]
        items.append(item)
    return items


@pytest.mark.anyio
async def test_stream_that_ends_before_done_yields_no_response() -> None:
    recorder = Recorder(sse_response(chunk({"content": "half an ans"})))
    items: list[StreamDelta | ModelResponse] = []
    with pytest.raises(ModelError, match=r"closed the stream after \d+ bytes before \[DONE\]"):
        async for item in mock_model(recorder).stream(REQUEST):
            items.append(item)
    assert [type(i) for i in items] == [StreamDelta]  # the delta was shown, no response was made


@pytest.mark.anyio
async def test_stream_with_malformed_json_is_a_clear_error() -> None:
    recorder = Recorder(
        sse_response(chunk({"content": "ok"}), 'data: {"choices": [{"delta": \n\n', DONE)
    )
    with pytest.raises(MalformedResponseError, match="an event that is not JSON") as caught:
        await _drain(mock_model(recorder).stream(REQUEST))
    assert caught.value.model_name == "vllm:test-model" and caught.value.field == "stream event"


@pytest.mark.anyio
async def test_stream_broken_off_by_the_network() -> None:
    class BreakingStream(httpx.AsyncByteStream):
        async def __aiter__(self):  # type: ignore[override]
            yield chunk({"content": "partial"}).encode()
            raise httpx.ReadError("connection reset by peer")

    recorder = Recorder(lambda request: httpx.Response(200, stream=BreakingStream()))
    with pytest.raises(ModelError, match="closed the stream after 146 bytes before") as caught:
        await _drain(mock_model(recorder).stream(REQUEST))
    assert caught.value.retryable is True


@pytest.mark.anyio
async def test_error_event_inside_a_stream() -> None:
    recorder = Recorder(sse_response('data: {"error": {"message": "context length exceeded"}}\n\n'))
    with pytest.raises(ModelError, match="context length exceeded"):
        await _drain(mock_model(recorder).stream(REQUEST))


@pytest.mark.anyio
async def test_unparseable_tool_arguments_go_to_raw_arguments() -> None:
    recorder = Recorder(
        httpx.Response(
            200,
            json=completion(None, [("c1", "add", '{"a": 1, "b": ')], finish_reason="tool_calls"),
        )
    )
    response = await mock_model(recorder).request(REQUEST)
    (call,) = response.tool_calls
    assert call.name == "add" and call.arguments == {} and call.raw_arguments == '{"a": 1, "b": '


@pytest.mark.anyio
async def test_body_that_is_not_json() -> None:
    recorder = Recorder(httpx.Response(200, text="<html>proxy error</html>"))
    with pytest.raises(ModelError, match="not JSON"):
        await mock_model(recorder).request(REQUEST)
