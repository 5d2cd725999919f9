"""A canned OpenAI-compatible chat-completions server for the overhead benchmark.

It answers instantly and never looks at more of the request than it must:

* the model name carries the script: ``bench-t20`` means "call the tool until the request holds
  20 tool results, then answer with text";
* the turn is the number of ``"role": "tool"`` messages in the request body;
* ``"stream": true`` gets the same answer as server-sent events.

HTTP/1.1 with keep-alive, and HTTP/2 with prior knowledge (h2c) when the ``h2`` package is
installed, both on one port. Run it as a script; it prints ``PORT <n>`` once it listens.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import signal
import sys

_TOOL_MESSAGE = re.compile(rb'"role"\s*:\s*"tool"')
_MODEL_NAME = re.compile(rb'"model"\s*:\s*"bench-t(\d+)"')
_STREAM_ON = re.compile(rb'"stream"\s*:\s*true')
_H2_PREFACE = b"PRI * HTTP/2.0"
_USAGE = {"prompt_tokens": 12, "completion_tokens": 6, "total_tokens": 18}


def _tool_call(turn: int) -> dict[str, object]:
    return {
        "id": f"call_{turn}",
        "type": "function",
        "function": {"name": "add", "arguments": json.dumps({"a": turn, "b": 1})},
    }


def answer_for(body: bytes) -> tuple[bytes, bytes]:
    """Return (content type, response body) for one chat-completions request body."""
    turns_match = _MODEL_NAME.search(body)
    tool_turns = int(turns_match.group(1)) if turns_match else 1
    turn = len(_TOOL_MESSAGE.findall(body))
    message: dict[str, object]
    if turn < tool_turns:
        message = {"role": "assistant", "content": None, "tool_calls": [_tool_call(turn)]}
        finish = "tool_calls"
    else:
        message = {"role": "assistant", "content": f"Done after {turn} additions."}
        finish = "stop"
    base = {"id": f"chatcmpl-{turn}", "created": 1700000000, "model": "bench"}
    if not _STREAM_ON.search(body):
        completion = {
            **base,
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": _USAGE,
        }
        return b"application/json", json.dumps(completion).encode()
    chunk = {**base, "object": "chat.completion.chunk"}
    if "tool_calls" in message:
        call = _tool_call(turn)
        delta: dict[str, object] = {"role": "assistant", "tool_calls": [{"index": 0, **call}]}
    else:
        delta = {"role": "assistant", "content": message["content"]}
    events = [
        {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
        {**chunk, "choices": [], "usage": _USAGE},
    ]
    text = "".join(f"data: {json.dumps(event)}\n\n" for event in events) + "data: [DONE]\n\n"
    return b"text/event-stream", text.encode()


def _http1_response(status: bytes, content_type: bytes, body: bytes) -> bytes:
    return (
        b"HTTP/1.1 " + status + b"\r\ncontent-type: " + content_type
        + b"\r\ncontent-length: " + str(len(body)).encode()
        + b"\r\nconnection: keep-alive\r\n\r\n" + body
    )  # fmt: skip


class ChatCompletionsProtocol(asyncio.Protocol):
    """One client connection: HTTP/1.1 requests, or an HTTP/2 connection after its preface."""

    def __init__(self) -> None:
        self.buffer = b""
        self.transport: asyncio.Transport | None = None
        self.h2: _H2Session | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        assert self.transport is not None
        if self.h2 is not None:
            self.h2.feed(data)
            return
        self.buffer += data
        if self.buffer.startswith(_H2_PREFACE[: len(self.buffer)]) and len(self.buffer) < 14:
            return
        if self.buffer.startswith(_H2_PREFACE):
            self.h2 = _H2Session(self.transport)
            pending, self.buffer = self.buffer, b""
            self.h2.feed(pending)
            return
        while True:
            head_end = self.buffer.find(b"\r\n\r\n")
            if head_end < 0:
                return
            head = self.buffer[:head_end].lower()
            length_at = head.find(b"content-length:")
            length = 0
            if length_at >= 0:
                line_end = head.find(b"\r\n", length_at)
                length = int(head[length_at + 15 : line_end if line_end >= 0 else None])
            if len(self.buffer) < head_end + 4 + length:
                return
            body = self.buffer[head_end + 4 : head_end + 4 + length]
            self.buffer = self.buffer[head_end + 4 + length :]
            if head.startswith(b"post ") and b"/chat/completions" in head.split(b"\r\n", 1)[0]:
                content_type, payload = answer_for(body)
                self.transport.write(_http1_response(b"200 OK", content_type, payload))
            else:
                self.transport.write(_http1_response(b"404 Not Found", b"text/plain", b"no"))


class _H2Session:
    """HTTP/2 with prior knowledge, built on the h2 state machine."""

    def __init__(self, transport: asyncio.Transport) -> None:
        import h2.config
        import h2.connection
        import h2.events
        import h2.settings

        self.events = h2.events
        self.transport = transport
        config = h2.config.H2Configuration(client_side=False, header_encoding="utf-8")
        self.conn = h2.connection.H2Connection(config=config)
        self.conn.initiate_connection()
        self.conn.update_settings({h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: 4096})
        self.bodies: dict[int, bytearray] = {}

    def feed(self, data: bytes) -> None:
        events = self.conn.receive_data(data)
        for event in events:
            if isinstance(event, self.events.RequestReceived):
                self.bodies[event.stream_id] = bytearray()
            elif isinstance(event, self.events.DataReceived):
                self.bodies.setdefault(event.stream_id, bytearray()).extend(event.data)
                self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, self.events.StreamEnded):
                body = bytes(self.bodies.pop(event.stream_id, b""))
                content_type, payload = answer_for(body)
                headers = [
                    (":status", "200"),
                    ("content-type", content_type.decode()),
                    ("content-length", str(len(payload))),
                ]
                self.conn.send_headers(event.stream_id, headers)
                self.conn.send_data(event.stream_id, payload, end_stream=True)
        outgoing = self.conn.data_to_send()
        if outgoing:
            self.transport.write(outgoing)


async def serve(host: str, port: int) -> None:
    """Listen until SIGTERM/SIGINT; print the bound port on stdout."""
    loop = asyncio.get_running_loop()
    server = await loop.create_server(ChatCompletionsProtocol, host, port, backlog=4096)
    bound = server.sockets[0].getsockname()[1]
    sys.stdout.write(f"PORT {bound}\n")
    sys.stdout.flush()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with server:
        await stop.wait()


def main() -> None:
    """Command-line entry: ``python _fake_openai_server.py [--port 0]``."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    asyncio.run(serve(args.host, args.port))


if __name__ == "__main__":
    main()
