"""The connector over real sockets: a small HTTP server on 127.0.0.1 replays documented shapes.

MockTransport tests cover the logic; these check what only a real connection shows: SSE
arriving in separate TCP writes, a chunked body cut off mid-stream, a read timeout on a
server that stalls, and a refused connection.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anyio
import pytest
from agentsdk_anthropic import AnthropicModel, RetryPolicy
from anthropic_recordings import TEXT_STREAM, TWO_TOOLS_STREAM, FakeClock, message_body

from agentsdk import Message, ModelError, ModelRequest, ModelResponse, ModelSettings, TextPart

ASK = ModelRequest(messages=[Message.user("hi")])
Behaviour = Callable[[BaseHTTPRequestHandler], None]


def _events(stream: str) -> list[bytes]:
    return [(block + "\n\n").encode() for block in stream.strip().split("\n\n")]


def stream_slowly(stream: str) -> Behaviour:
    """Each SSE event in its own write, with a pause, over a close-delimited body."""

    def behave(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.send_header("connection", "close")
        handler.end_headers()
        for event in _events(stream):
            handler.wfile.write(event)
            handler.wfile.flush()
            time.sleep(0.002)

    return behave


def chunked_then_cut(stream: str, keep: int) -> Behaviour:
    """A chunked body that stops after ``keep`` events without the terminating chunk."""

    def behave(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.send_header("transfer-encoding", "chunked")
        handler.end_headers()
        for event in _events(stream)[:keep]:
            handler.wfile.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
            handler.wfile.flush()
        handler.close_connection = True
        handler.connection.shutdown(socket.SHUT_RDWR)

    return behave


def stall(seconds: float) -> Behaviour:
    """Accept the request and say nothing for a while."""

    def behave(handler: BaseHTTPRequestHandler) -> None:
        time.sleep(seconds)

    return behave


def json_answer(body: dict[str, object]) -> Behaviour:
    def behave(handler: BaseHTTPRequestHandler) -> None:
        data = json.dumps(body).encode()
        handler.send_response(200)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    return behave


@dataclass
class _Seen:
    """One request the server received."""

    path: str
    headers: dict[str, str]
    body: dict[str, object]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    behaviours: list[Behaviour]
    seen: list[_Seen]


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"  # keep-alive, so pooled connections are really reused

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        body = json.loads(self.rfile.read(length))
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.server.seen.append(_Seen(path=self.path, headers=headers, body=body))
        self.server.behaviours.pop(0)(self)

    def log_message(self, format: str, *args: object) -> None:  # keep test output clean
        pass


@pytest.fixture
def server() -> Iterator[_Server]:
    srv = _Server(("127.0.0.1", 0), _Handler)
    srv.behaviours, srv.seen = [], []
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()
    thread.join(timeout=5)
    assert not thread.is_alive()


def _model(url: str, clock: FakeClock, **kwargs: object) -> AnthropicModel:
    return AnthropicModel(
        "claude-sonnet-4-5",
        api_key="sk-ant-loopback",
        base_url=url,
        retry=RetryPolicy(max_attempts=3, sleep=clock.sleep, clock=clock.time),
        **kwargs,  # type: ignore[arg-type]
    )


def _url(srv: _Server) -> str:
    host, port = srv.server_address[:2]
    return f"http://{host!s}:{port}"


@pytest.mark.anyio
async def test_real_sse_stream_over_tcp_assembles(server: _Server, clock: FakeClock) -> None:
    server.behaviours += [stream_slowly(TWO_TOOLS_STREAM)]
    async with _model(_url(server), clock) as model:
        items = [item async for item in model.stream(ASK)]
    final = items[-1]
    assert isinstance(final, ModelResponse)
    assert [c.arguments for c in final.tool_calls] == [
        {"city": "Paris", "unit": "c"},
        {"city": "Oslo"},
    ]
    seen = server.seen[0]
    assert seen.path == "/v1/messages" and seen.body["stream"] is True
    headers = seen.headers
    assert headers["x-api-key"] == "sk-ant-loopback"
    assert headers["anthropic-version"] == "2023-06-01"


@pytest.mark.anyio
async def test_chunked_stream_cut_mid_way_is_a_retryable_error(
    server: _Server, clock: FakeClock
) -> None:
    server.behaviours += [chunked_then_cut(TEXT_STREAM, keep=4)]
    async with _model(_url(server), clock) as model:
        seen: list[object] = []
        with pytest.raises(ModelError) as info:
            async for item in model.stream(ASK):
                seen.append(item)
    assert info.value.retryable is True
    assert "the server closed the stream after" in str(info.value)
    assert "bytes before message_stop" in str(info.value)
    assert "RemoteProtocolError" not in str(info.value)
    assert not any(isinstance(x, ModelResponse) for x in seen)
    assert len(server.seen) == 1


@pytest.mark.anyio
async def test_read_timeout_is_retried_then_answers(server: _Server, clock: FakeClock) -> None:
    server.behaviours += [stall(1.0), json_answer(message_body([{"type": "text", "text": "late"}]))]
    async with _model(_url(server), clock) as model:
        response = await model.request(
            ASK.model_copy(update={"settings": ModelSettings(timeout=0.3)})
        )
    assert response.parts == [TextPart(text="late")]
    assert len(clock.sleeps) == 1 and len(server.seen) == 2


@pytest.mark.anyio
async def test_refused_connection_gives_up_retryable(clock: FakeClock) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with _model(f"http://127.0.0.1:{port}", clock) as model:
        with pytest.raises(ModelError) as info:
            await model.request(ASK)
    assert info.value.retryable is True
    assert "cannot connect to the server" in str(info.value) and "3 attempts" in str(info.value)
    assert len(clock.sleeps) == 2


def test_one_model_serves_two_event_loops_and_reopens_after_aclose(
    server: _Server, clock: FakeClock
) -> None:
    """Like two ``Agent.run_sync`` calls with the same model instance in one script."""
    server.behaviours += [
        json_answer(message_body([{"type": "text", "text": f"answer {n}"}])) for n in range(3)
    ]
    model = _model(_url(server), clock)

    async def ask() -> str:
        return (await model.request(ASK)).text

    async def ask_close_ask() -> list[str]:
        first = await ask()
        await model.aclose()
        return [first, await ask()]

    assert anyio.run(ask) == "answer 0"
    assert anyio.run(ask_close_ask) == ["answer 1", "answer 2"]
    anyio.run(model.aclose)
