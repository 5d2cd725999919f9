"""HTTP error classes, retries with backoff, retry-after, and keeping the API key secret."""

from __future__ import annotations

import logging
from email.utils import formatdate

import httpx
import pytest
from agentsdk.testing import ScriptedModel
from agentsdk_anthropic import AnthropicModel
from anthropic_recordings import (
    SECRET_KEY,
    TEXT_STREAM,
    FakeClock,
    MakeModel,
    error_body,
    json_reply,
    message_body,
    sse,
)

from agentsdk import (
    Agent,
    FallbackModel,
    Message,
    ModelAuthError,
    ModelError,
    ModelRequest,
    ModelResponse,
)

ASK = ModelRequest(messages=[Message.user("hi")])
OK = json_reply(200, message_body([{"type": "text", "text": "fine"}]))


def _overloaded(headers: dict[str, str] | None = None) -> httpx.Response:
    return json_reply(529, error_body("overloaded_error", "Overloaded"), headers)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("status", "kind", "text"),
    [
        (401, "authentication_error", "invalid x-api-key"),
        (403, "permission_error", "Your API key does not have permission"),
    ],
)
async def test_auth_errors_are_never_retried(
    make_model: MakeModel, clock: FakeClock, status: int, kind: str, text: str
) -> None:
    model, fake = make_model(json_reply(status, error_body(kind, text)), OK)
    with pytest.raises(ModelAuthError) as info:
        await model.request(ASK)
    assert info.value.retryable is False and info.value.status_code == status
    assert text in str(info.value)
    assert len(fake.requests) == 1 and clock.sleeps == []


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("status", "kind", "text"),
    [
        (400, "invalid_request_error", "messages: text content blocks must be non-empty"),
        (404, "not_found_error", "model: claude-sonnet-4-5"),
        (422, "invalid_request_error", "max_tokens: must be greater than 0"),
    ],
)
async def test_request_errors_carry_the_server_message_and_model_name(
    make_model: MakeModel, clock: FakeClock, status: int, kind: str, text: str
) -> None:
    model, fake = make_model(json_reply(status, error_body(kind, text)))
    with pytest.raises(ModelError) as info:
        await model.request(ASK)
    error = info.value
    assert not isinstance(error, ModelAuthError)
    assert error.retryable is False and error.status_code == status
    assert text in str(error) and "anthropic:claude-sonnet-4-5" in str(error)
    assert error.model_name == "anthropic:claude-sonnet-4-5"
    assert len(fake.requests) == 1 and clock.sleeps == []


@pytest.mark.anyio
async def test_rate_limit_honours_retry_after_seconds(
    make_model: MakeModel, clock: FakeClock
) -> None:
    limited = json_reply(
        429,
        error_body(
            "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"
        ),
        {"retry-after": "7"},
    )
    model, fake = make_model(limited, OK)
    response = await model.request(ASK)
    assert response.text == "fine"
    assert clock.sleeps == [7.0]
    assert len(fake.requests) == 2


@pytest.mark.anyio
async def test_retry_after_as_http_date(make_model: MakeModel, clock: FakeClock) -> None:
    when = formatdate(clock.now + 3, usegmt=True)
    model, _ = make_model(_overloaded({"retry-after": when}), OK)
    await model.request(ASK)
    assert clock.sleeps == [pytest.approx(3.0, abs=1.0)]


@pytest.mark.anyio
async def test_overloaded_backs_off_exponentially_then_gives_up_retryable(
    make_model: MakeModel, clock: FakeClock
) -> None:
    model, fake = make_model(*[_overloaded() for _ in range(4)])
    with pytest.raises(ModelError) as info:
        await model.request(ASK)
    error = info.value
    assert error.retryable is True and error.status_code == 529
    assert "overloaded_error" in str(error) and "4 attempts" in str(error)
    assert len(fake.requests) == 4
    # equal jitter: each delay lies in [ceiling/2, ceiling] for ceilings 0.5, 1, 2
    assert len(clock.sleeps) == 3
    for delay, ceiling in zip(clock.sleeps, [0.5, 1.0, 2.0], strict=True):
        assert ceiling / 2 <= delay <= ceiling


@pytest.mark.anyio
async def test_retry_after_beyond_the_limit_gives_up_at_once(
    make_model: MakeModel, clock: FakeClock
) -> None:
    limited = json_reply(429, error_body("rate_limit_error", "slow down"), {"retry-after": "3600"})
    model, fake = make_model(limited, OK)
    with pytest.raises(ModelError) as info:
        await model.request(ASK)
    assert info.value.retryable is True and "3600" in str(info.value)
    assert len(fake.requests) == 1 and clock.sleeps == []


@pytest.mark.anyio
@pytest.mark.parametrize(
    "failure",
    [
        json_reply(500, error_body("api_error", "Internal server error")),
        json_reply(503, {"detail": "upstream"}),
        httpx.ConnectError("Connection refused"),
        httpx.ReadTimeout("timed out"),
    ],
    ids=["500", "503-non-json", "connect-error", "read-timeout"],
)
async def test_transient_failures_are_retried(
    make_model: MakeModel, clock: FakeClock, failure: httpx.Response | Exception
) -> None:
    model, fake = make_model(failure, OK)
    assert (await model.request(ASK)).text == "fine"
    assert len(fake.requests) == 2 and len(clock.sleeps) == 1


@pytest.mark.anyio
async def test_read_timeouts_exhausted_give_a_retryable_error(make_model: MakeModel) -> None:
    model, fake = make_model(*[httpx.ReadTimeout("timed out") for _ in range(4)])
    with pytest.raises(ModelError) as info:
        await model.request(ASK)
    assert info.value.retryable is True and "gave up after 4 attempts" in str(info.value)
    assert "no answer from the server within 600 s (the read timeout)" in str(info.value)
    assert "ReadTimeout" not in str(info.value)  # plain words, not httpx's class names
    assert len(fake.requests) == 4


@pytest.mark.anyio
async def test_stream_retries_before_the_first_event(
    make_model: MakeModel, clock: FakeClock
) -> None:
    model, fake = make_model(_overloaded({"retry-after": "2"}), sse(TEXT_STREAM))
    items = [item async for item in model.stream(ASK)]
    assert isinstance(items[-1], ModelResponse) and items[-1].text == "Hello!"
    assert clock.sleeps == [2.0] and len(fake.requests) == 2


@pytest.mark.anyio
async def test_key_never_appears_in_repr_errors_or_logs(
    make_model: MakeModel, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    model, _ = make_model(
        _overloaded(), json_reply(401, error_body("authentication_error", "invalid x-api-key"))
    )
    with pytest.raises(ModelAuthError) as info:
        await model.request(ASK)
    assert caplog.records, "the retry should have been logged"
    for text in (repr(model), str(info.value), repr(info.value), caplog.text, repr(vars(model))):
        assert SECRET_KEY not in text


def test_missing_key_says_which_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ModelAuthError, match="ANTHROPIC_API_KEY"):
        AnthropicModel("claude-sonnet-4-5")


@pytest.mark.anyio
async def test_error_body_with_status_200_is_an_error_not_an_empty_answer(
    make_model: MakeModel, clock: FakeClock
) -> None:
    model, fake = make_model(*[json_reply(200, error_body("overloaded_error", "Overloaded"))] * 4)
    with pytest.raises(ModelError) as info:
        await model.request(ASK)
    assert "overloaded_error: Overloaded" in str(info.value) and info.value.retryable is True
    assert "gave up after 4 attempts" in str(info.value)
    assert len(fake.requests) == 4 and len(clock.sleeps) == 3


@pytest.mark.anyio
async def test_error_body_with_status_200_is_retried_like_a_529(
    make_model: MakeModel, clock: FakeClock
) -> None:
    model, fake = make_model(json_reply(200, error_body("overloaded_error", "Overloaded")), OK)
    assert (await model.request(ASK)).text == "fine"
    assert len(fake.requests) == 2 and len(clock.sleeps) == 1


@pytest.mark.anyio
async def test_fallback_model_moves_on_after_retries_run_out(
    make_model: MakeModel, clock: FakeClock
) -> None:
    claude, fake = make_model(*[_overloaded() for _ in range(4)])
    backup = ScriptedModel(["answer from the backup model"])
    result = await Agent(FallbackModel([claude, backup])).run("hi")
    assert result.output == "answer from the backup model"
    assert len(fake.requests) == 4 and len(clock.sleeps) == 3


@pytest.mark.anyio
async def test_spend_limit_429_is_not_retried(make_model: MakeModel, clock: FakeClock) -> None:
    body = error_body("rate_limit_error", "You have reached your monthly spend limit.")
    body["error"]["details"] = {"error_code": "enforced_spend_limit_reached"}
    model, fake = make_model(json_reply(429, body), OK)
    with pytest.raises(ModelError) as info:
        await model.request(ASK)
    assert info.value.retryable is False and info.value.status_code == 429
    assert "spend limit" in str(info.value)
    assert len(fake.requests) == 1 and clock.sleeps == []


@pytest.mark.anyio
async def test_stream_request_answered_with_a_json_error_body(
    make_model: MakeModel, clock: FakeClock
) -> None:
    model, fake = make_model(*[json_reply(200, error_body("overloaded_error", "Overloaded"))] * 4)
    with pytest.raises(ModelError) as info:
        async for _ in model.stream(ASK):
            pass
    assert "overloaded_error: Overloaded" in str(info.value) and info.value.retryable is True
    assert len(fake.requests) == 4 and len(clock.sleeps) == 3
