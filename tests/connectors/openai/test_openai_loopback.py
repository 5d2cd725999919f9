"""The connector's default HTTP stack against a scripted server on 127.0.0.1.

No ``transport=``: these go through the same sockets, pool, framing and timeouts a user
gets, including the broken cases MockTransport cannot produce (refused connections,
bodies cut short, silent servers, SSE split across TCP segments).
"""

from __future__ import annotations

import asyncio
import json
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from agentsdk.http import tls_context
from agentsdk.tools import ToolSpec
from agentsdk_openai import OpenAIChatModel, RetryPolicy
from loopback_server import (
    LoopbackServer,
    RecordedRequest,
    hang_up,
    hang_up_midway,
    never_answer,
    reply_json,
    reply_raw,
    reply_sse,
    unused_port,
)
from openai_wire_shapes import DONE, FakeClock, chunk, completion

from agentsdk import (
    MalformedResponseError,
    Message,
    ModelAuthError,
    ModelError,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    StreamDelta,
)

API_KEY = "sk-secret-xyz"
REQUEST = ModelRequest(messages=[Message.user("hello")])
SAVE = ToolSpec(
    name="save",
    description="Save a file.",
    parameters={
        "type": "object",
        "properties": {"path": {"type": "string"}, "blob": {"type": "string"}},
    },
)


def loopback_model(
    port: int, clock: FakeClock | None = None, *, max_attempts: int = 4
) -> OpenAIChatModel:
    """The connector as a user builds it: no transport, retries on ``clock`` when given."""
    retry = RetryPolicy(max_attempts=max_attempts, sleep=(clock or FakeClock()).sleep)
    return OpenAIChatModel(
        "m", base_url=f"http://127.0.0.1:{port}/v1", api_key=API_KEY, retry=retry
    )


def echo(request: RecordedRequest) -> dict[str, Any]:
    """A completion that repeats the last message's text, to tell answers apart."""
    content = request.json()["messages"][-1]["content"]
    text = content if isinstance(content, str) else "".join(p["text"] for p in content)
    return completion(f"echo: {text}")


async def drain(stream: AsyncIterator[StreamDelta | ModelResponse]) -> list[Any]:
    return [item async for item in stream]


# -- answers ------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_tool_call_completion_and_what_went_over_the_wire() -> None:
    answer = completion(
        None, [("call_1", "save", '{"path": "a.txt", "blob": "hi"}')], finish_reason="tool_calls"
    )
    async with LoopbackServer(reply_json(200, answer)) as server:
        async with loopback_model(server.port) as model:
            response = await model.request(
                ModelRequest(messages=[Message.user("save hi to a.txt")], tools=[SAVE])
            )
    (call,) = response.tool_calls
    assert call.name == "save" and call.arguments == {"path": "a.txt", "blob": "hi"}
    assert call.id == "call_1" and response.finish_reason == "tool_calls"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (11, 7)
    assert response.usage.cache_read_tokens == 3
    (sent,) = server.requests
    assert (sent.method, sent.path) == ("POST", "/v1/chat/completions")
    assert sent.headers["authorization"] == f"Bearer {API_KEY}"
    assert sent.headers["content-type"].startswith("application/json")
    body = sent.json()
    assert body["model"] == "m"
    assert body["messages"] == [{"role": "user", "content": "save hi to a.txt"}]
    assert [t["function"]["name"] for t in body["tools"]] == ["save"]
    assert body["tools"][0]["function"]["parameters"] == SAVE.parameters
    assert "stream" not in body


@pytest.mark.anyio
async def test_sequential_requests_reuse_one_connection() -> None:
    async with LoopbackServer(reply_json(200, echo)) as server:
        async with loopback_model(server.port) as model:
            texts = [
                (await model.request(ModelRequest(messages=[Message.user(f"n{i}")]))).text
                for i in range(5)
            ]
    assert texts == [f"echo: n{i}" for i in range(5)]
    assert len(server.requests) == 5 and server.connections == 1


@pytest.mark.anyio
async def test_concurrent_requests_share_the_pool() -> None:
    async with LoopbackServer(reply_json(200, echo, delay=0.02)) as server:
        async with loopback_model(server.port) as model:
            texts: dict[int, str] = {}

            async def ask(i: int) -> None:
                response = await model.request(ModelRequest(messages=[Message.user(f"q{i}")]))
                texts[i] = response.text

            async with anyio.create_task_group() as group:
                for i in range(100):
                    group.start_soon(ask, i)
    assert texts == {i: f"echo: q{i}" for i in range(100)}
    assert len(server.requests) == 100 and 1 <= server.connections <= 100


def test_one_model_across_two_event_loops() -> None:
    # run_sync starts a fresh loop per call; pooled connections of the old loop must not leak in.
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    model = loopback_model(port)

    async def one_run(word: str) -> tuple[str, int]:
        async with LoopbackServer(reply_json(200, echo), sock=listener.dup()) as server:
            response = await model.request(ModelRequest(messages=[Message.user(word)]))
        return response.text, len(server.requests)

    async def last_run(word: str) -> tuple[str, int]:
        try:
            return await one_run(word)
        finally:
            await model.aclose()

    try:
        assert asyncio.run(one_run("first")) == ("echo: first", 1)
        assert asyncio.run(last_run("second")) == ("echo: second", 1)
    finally:
        listener.close()


def test_a_finished_event_loop_leaves_no_connection_open() -> None:
    # The server lives in its own thread and loop, so it outlives each asyncio.run and can
    # see whether the client's pooled connection was closed when that loop ended.
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    def on_server_loop(coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, loop).result(10)

    server = LoopbackServer(reply_json(200, echo))
    on_server_loop(server.__aenter__())
    try:
        model = loopback_model(server.port)
        for word in ("first", "second", "third"):
            response = asyncio.run(model.request(ModelRequest(messages=[Message.user(word)])))
            assert response.text == f"echo: {word}"
            assert on_server_loop(server.wait_until_all_closed(2.0)), (
                f"after asyncio.run returned, {server.open_connections} connection(s) stayed open"
            )
        assert server.connections == 3 and len(server.requests) == 3
    finally:
        on_server_loop(server.__aexit__(None, None, None))
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()


@pytest.mark.anyio
async def test_finished_streams_hand_their_connection_back() -> None:
    events = [chunk({"content": "ok"}), DONE]
    async with LoopbackServer(reply_sse(events)) as server:
        async with loopback_model(server.port) as model:
            for _ in range(4):
                *_deltas, response = await drain(model.stream(REQUEST))
                assert response.text == "ok"
    assert len(server.requests) == 4
    assert server.connections == 1, "a stream read to [DONE] should leave its connection reusable"


@pytest.mark.anyio
async def test_aclose_closes_the_pooled_connections() -> None:
    async with LoopbackServer(reply_json(200, echo, delay=0.05)) as server:
        model = loopback_model(server.port)
        async with anyio.create_task_group() as group:
            for i in range(3):
                group.start_soon(model.request, ModelRequest(messages=[Message.user(f"{i}")]))
        assert server.connections >= 1 and server.open_connections == server.connections
        await model.aclose()
        assert await server.wait_until_all_closed(1.0), (
            f"{server.open_connections} connection(s) still open a second after aclose()"
        )


@pytest.mark.anyio
async def test_an_api_key_read_with_its_newline_still_works() -> None:
    async with LoopbackServer(reply_json(200, echo)) as server:
        model = OpenAIChatModel(
            "m", base_url=server.base_url, api_key=f"  {API_KEY}\n", retry=RetryPolicy()
        )
        async with model:
            response = await model.request(REQUEST)
    assert response.text.startswith("echo")
    assert server.requests[0].headers["authorization"] == f"Bearer {API_KEY}"


@pytest.mark.anyio
async def test_a_header_that_cannot_be_sent_is_a_clear_error_not_a_retry() -> None:
    async with LoopbackServer(reply_json(200, echo)) as server:
        model = OpenAIChatModel(
            "m",
            base_url=server.base_url,
            headers={"X-Team": "agents\r\nX-Injected: 1"},
            retry=RetryPolicy(sleep=FakeClock().sleep),
        )
        async with model:
            with pytest.raises(ModelError, match="cannot send the request") as failure:
                await model.request(REQUEST)
    assert not failure.value.retryable and server.requests == []


@pytest.mark.parametrize(
    "url", ["htp://127.0.0.1:8000/v1", "127.0.0.1:8000/v1", "http:///v1", "ws://127.0.0.1/v1"]
)
def test_a_malformed_base_url_is_refused_at_once(url: str) -> None:
    with pytest.raises(ValueError, match="base_url must be an http:// or https:// URL"):
        OpenAIChatModel("m", base_url=url)


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (cert, key), made with the openssl command."""
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2"),
            *("-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"),
            *("-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


def https_model(base_url: str) -> OpenAIChatModel:
    return OpenAIChatModel(
        "m", base_url=base_url, api_key=API_KEY, retry=RetryPolicy(sleep=FakeClock().sleep)
    )


def _serving_tls(cert: Path, key: Path) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    return context


@pytest.mark.anyio
async def test_https_trusts_ssl_cert_file_and_refuses_an_unknown_certificate(
    certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = certificate
    async with LoopbackServer(reply_json(200, echo), tls=_serving_tls(cert, key)) as server:
        assert server.base_url.startswith("https://")
        # certifi's bundle (the default) does not know this certificate: a clear error, no retry.
        tls_context.cache_clear()
        monkeypatch.delenv("SSL_CERT_FILE", raising=False)
        monkeypatch.delenv("SSL_CERT_DIR", raising=False)
        async with https_model(server.base_url) as model:
            with pytest.raises(ModelError, match="TLS certificate was not trusted") as failure:
                await model.request(REQUEST)
        assert not failure.value.retryable and server.requests == []
        # SSL_CERT_FILE names the CA to trust, as with httpx and OpenSSL.
        tls_context.cache_clear()
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
        async with https_model(server.base_url) as model:
            response = await model.request(REQUEST)
        assert response.text == "echo: hello" and len(server.requests) == 1
    tls_context.cache_clear()


# -- HTTP errors --------------------------------------------------------------------------


@pytest.mark.anyio
async def test_429_waits_for_retry_after_then_succeeds() -> None:
    clock = FakeClock()
    async with LoopbackServer(
        reply_json(429, {"error": {"message": "rate limited"}}, headers={"Retry-After": "1"}),
        reply_json(200, completion("after the wait")),
    ) as server:
        async with loopback_model(server.port, clock) as model:
            response = await model.request(REQUEST)
    assert response.text == "after the wait"
    assert clock.sleeps == [1.0] and len(server.requests) == 2


@pytest.mark.anyio
async def test_500_until_the_attempts_run_out() -> None:
    clock = FakeClock()
    async with LoopbackServer(reply_json(500, {"error": {"message": "engine crashed"}})) as server:
        async with loopback_model(server.port, clock, max_attempts=3) as model:
            with pytest.raises(ModelError) as caught:
                await model.request(REQUEST)
    assert caught.value.retryable is True and caught.value.status_code == 500
    assert "engine crashed" in str(caught.value)
    assert len(server.requests) == 3 and len(clock.sleeps) == 2


@pytest.mark.anyio
async def test_401_is_an_auth_error_without_the_key() -> None:
    clock = FakeClock()
    async with LoopbackServer(
        reply_json(401, {"error": {"message": "Incorrect API key provided"}})
    ) as server:
        async with loopback_model(server.port, clock) as model:
            with pytest.raises(ModelAuthError) as caught:
                await model.request(REQUEST)
            assert API_KEY not in repr(model)
    assert caught.value.status_code == 401 and caught.value.retryable is False
    assert "Incorrect API key provided" in str(caught.value)
    assert API_KEY not in str(caught.value) and API_KEY not in repr(caught.value)
    assert len(server.requests) == 1 and clock.sleeps == []


@pytest.mark.anyio
async def test_400_carries_the_server_message_and_is_not_retried() -> None:
    clock = FakeClock()
    async with LoopbackServer(
        reply_json(400, {"error": {"message": "context too long", "type": "invalid_request"}})
    ) as server:
        async with loopback_model(server.port, clock) as model:
            with pytest.raises(ModelError) as caught:
                await model.request(REQUEST)
    assert "context too long" in str(caught.value)
    assert caught.value.status_code == 400 and caught.value.retryable is False
    assert len(server.requests) == 1 and clock.sleeps == []


@pytest.mark.anyio
async def test_200_with_a_body_that_is_not_json_is_retried_then_a_clear_error() -> None:
    clock = FakeClock()
    async with LoopbackServer(
        reply_raw(200, b"<html>502 proxy error</html>", content_type="text/html")
    ) as server:
        async with loopback_model(server.port, clock, max_attempts=3) as model:
            with pytest.raises(MalformedResponseError, match="not JSON") as caught:
                await model.request(REQUEST)
    assert "proxy error" in str(caught.value) and "gave up after 3 attempts" in str(caught.value)
    assert caught.value.field == "body" and caught.value.retryable is True
    assert len(server.requests) == 3 and len(clock.sleeps) == 2


# -- network failures ---------------------------------------------------------------------


@pytest.mark.anyio
async def test_connection_refused_is_retried_then_retryable() -> None:
    clock = FakeClock()
    started = time.monotonic()
    async with loopback_model(unused_port(), clock, max_attempts=3) as model:
        with pytest.raises(ModelError) as caught:
            with anyio.fail_after(10):
                await model.request(REQUEST)
    assert time.monotonic() - started < 5.0
    assert caught.value.retryable is True and caught.value.status_code is None
    assert len(clock.sleeps) == 2
    assert API_KEY not in str(caught.value)


@pytest.mark.anyio
async def test_silent_server_times_out_instead_of_hanging() -> None:
    clock = FakeClock()
    request = ModelRequest(messages=[Message.user("hello")], settings=ModelSettings(timeout=0.5))
    started = time.monotonic()
    async with LoopbackServer(never_answer()) as server:
        async with loopback_model(server.port, clock, max_attempts=2) as model:
            with pytest.raises(ModelError) as caught:
                with anyio.fail_after(10):
                    await model.request(request)
            elapsed = time.monotonic() - started
            # A timed-out connection holds a late answer: it must be dropped, not pooled.
            assert await server.wait_until_all_closed(1.0)
    assert caught.value.retryable is True and len(server.requests) == 2
    assert 0.9 <= elapsed < 4.0, elapsed


@pytest.mark.anyio
async def test_a_connection_closed_under_a_request_is_retried_at_once() -> None:
    clock = FakeClock()
    async with LoopbackServer(
        *(reply_json(200, echo), hang_up(), reply_json(200, echo)),
        *(hang_up(), hang_up(), reply_json(200, echo)),
    ) as server:
        async with loopback_model(server.port, clock) as model:
            assert (await model.request(REQUEST)).text == "echo: hello"
            # The pooled connection is closed under the next request: a new one, no backoff.
            assert (await model.request(REQUEST)).text == "echo: hello"
            assert clock.sleeps == [] and server.connections == 2
            # Dropped twice in a row is no stale connection any more: the second backs off.
            assert (await model.request(REQUEST)).text == "echo: hello"
    assert len(clock.sleeps) == 1 and len(server.requests) == 6 and server.connections == 4


@pytest.mark.anyio
async def test_a_dropped_connection_is_not_retried_when_retries_are_off() -> None:
    async with LoopbackServer(hang_up(), reply_json(200, echo)) as server:
        async with loopback_model(server.port, max_attempts=1) as model:
            with pytest.raises(
                ModelError, match="the server closed the connection without answering"
            ) as failure:
                await model.request(REQUEST)
    assert failure.value.retryable and len(server.requests) == 1


@pytest.mark.anyio
async def test_body_cut_short_is_retried() -> None:
    clock = FakeClock()
    whole = json.dumps(completion("never seen")).encode()
    async with LoopbackServer(
        hang_up_midway(200, whole), reply_json(200, completion("second time lucky"))
    ) as server:
        async with loopback_model(server.port, clock) as model:
            response = await model.request(REQUEST)
    assert response.text == "second time lucky"
    assert len(server.requests) == 2 and len(clock.sleeps) == 1 and server.connections == 2


@pytest.mark.anyio
async def test_body_cut_short_on_the_last_attempt_is_retryable() -> None:
    whole = json.dumps(completion("never seen")).encode()
    async with LoopbackServer(hang_up_midway(200, whole)) as server:
        async with loopback_model(server.port, max_attempts=1) as model:
            with pytest.raises(ModelError) as caught:
                with anyio.fail_after(10):
                    await model.request(REQUEST)
    assert caught.value.retryable is True and len(server.requests) == 1


# -- streaming ----------------------------------------------------------------------------

BLOB = "x" * 250_000  # its data: line is well over 200 KB
STREAM = [
    chunk({"role": "assistant", "content": "Hel"}),
    ": keep-alive comment\n\n",
    chunk({"content": "lo, "}),
    chunk({"content": "world"}),
    chunk(
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call_7",
                    "type": "function",
                    "function": {"name": "save", "arguments": ""},
                }
            ]
        }
    ),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"path": "a.t'}}]}),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": f'xt", "blob": "{BLOB}'}}]}),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"}'}}]}),
    chunk(finish_reason="tool_calls"),
    chunk(usage={"prompt_tokens": 20, "completion_tokens": 9}),
    DONE,
]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("framing", "line_ending", "piece"),
    [
        ("chunked", "\n", None),
        ("chunked", "\r\n", 4093),
        ("close", "\r\n", 65_537),
        ("close", "\n", 1021),
    ],
    ids=["chunked-lf-one-write", "chunked-crlf-4k-writes", "close-crlf-64k-writes", "close-lf-1k"],
)
async def test_stream_assembles_text_and_a_huge_split_tool_call(
    framing: str, line_ending: str, piece: int | None
) -> None:
    async with LoopbackServer(
        reply_sse(STREAM, framing=framing, line_ending=line_ending, piece=piece)
    ) as server:
        async with loopback_model(server.port) as model:
            items = await drain(
                model.stream(ModelRequest(messages=[Message.user("save it")], tools=[SAVE]))
            )
    *deltas, response = items
    assert all(isinstance(d, StreamDelta) for d in deltas)
    assert "".join(d.text for d in deltas) == "Hello, world"
    assert [d.tool_name for d in deltas if d.tool_name] == ["save"]
    assert len("".join(d.arguments_delta for d in deltas)) > 250_000
    assert isinstance(response, ModelResponse)
    assert response.text == "Hello, world" and response.finish_reason == "tool_calls"
    (call,) = response.tool_calls
    assert call.id == "call_7" and call.name == "save" and call.raw_arguments is None
    assert call.arguments == {"path": "a.txt", "blob": BLOB}
    assert (response.usage.input_tokens, response.usage.output_tokens) == (20, 9)
    (sent,) = server.requests
    assert sent.json()["stream"] is True


@pytest.mark.anyio
async def test_stream_split_byte_by_byte_with_crlf() -> None:
    events = [chunk({"content": "a"}), chunk({"content": "é"}), chunk({"content": "c"}), DONE]
    async with LoopbackServer(reply_sse(events, line_ending="\r\n", piece=1)) as server:
        async with loopback_model(server.port) as model:
            *deltas, response = await drain(model.stream(REQUEST))
    assert [d.text for d in deltas] == ["a", "é", "c"] and response.text == "aéc"


@pytest.mark.anyio
@pytest.mark.parametrize("framing", ["chunked", "close"])
async def test_stream_cut_off_before_done(framing: str) -> None:
    events = [chunk({"content": "half an "}), chunk({"content": "ans"})]
    async with LoopbackServer(reply_sse(events, framing=framing, complete=False)) as server:
        async with loopback_model(server.port) as model:
            items: list[Any] = []
            with pytest.raises(ModelError) as caught:
                with anyio.fail_after(10):
                    async for item in model.stream(REQUEST):
                        items.append(item)
    assert caught.value.retryable is True
    assert "discarded" in str(caught.value)
    assert items and all(isinstance(i, StreamDelta) for i in items)  # no ModelResponse
    assert len(server.requests) == 1  # deltas were shown: no silent replay


@pytest.mark.anyio
async def test_stream_retries_a_503_before_the_first_byte() -> None:
    clock = FakeClock()
    async with LoopbackServer(
        reply_json(503, {"error": {"message": "loading model"}}, headers={"Retry-After": "2"}),
        reply_sse([chunk({"content": "ready"}), chunk(finish_reason="stop"), DONE]),
    ) as server:
        async with loopback_model(server.port, clock) as model:
            *_, response = await drain(model.stream(REQUEST))
    assert response.text == "ready" and clock.sleeps == [2.0]
    # The error body was read to its end, so the connection stayed usable.
    assert len(server.requests) == 2 and server.connections == 1
