"""A model server on 127.0.0.1 that misbehaves at random, the way real servers do.

It speaks OpenAI Chat Completions (``POST /v1/chat/completions``) and the Anthropic
Messages API (``POST /v1/messages``), whole and streamed, over plain asyncio HTTP/1.1
with keep-alive. Every request gets a fault drawn from a weighted table
(``fault_shapes.OPENAI_FAULTS`` / ``ANTHROPIC_FAULTS``): 429 with Retry-After, 5xx, 529,
401, dropped connections, bodies and streams cut short, stalls past the read timeout,
malformed JSON, error events mid-stream, tool calls with bad arguments, empty answers,
content filtering and refusals, token-limit cuts, odd-but-readable shapes and malformed ones.

The draw is seeded per run and request number (``seed``, the run id in the prompt, the
n-th request of that run), so a run meets the same faults whatever the interleaving of
concurrent runs. ``log`` keeps every (run, n, fault); ``GET /v1/faults`` serves it as JSON,
``GET /v1/stats`` the number of model requests and of client connections still open.

As a fixture::

    async with FaultServer(seed=1, stall=3.0) as server:
        model = OpenAIChatModel("m", base_url=server.base_url)

As a program (the benchmark runs it in its own process): ``python fault_server.py --port 0
--seed 1`` prints ``PORT <n>`` and serves until killed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import sys
from collections import defaultdict
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from fault_shapes import (
    ANTHROPIC_FAULTS,
    OPENAI_FAULTS,
    anthropic_events,
    anthropic_message,
    openai_completion,
    openai_events,
    plan,
)

__all__ = ["FaultServer", "Injected"]


@dataclass(frozen=True)
class Injected:
    """One fault the server chose: for which run, at which of its requests, on which API."""

    run: str
    n: int
    fault: str
    api: str
    stream: bool
    calls: bool = False
    """The scripted turn was a tool call (a stream cut late had shown only tool-call deltas)."""


def _head(status: int, fields: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}"]
    lines += [f"{name}: {value}" for name, value in fields.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _json_reply(status: int, body: Any, extra: dict[str, str] | None = None) -> bytes:
    data = json.dumps(body).encode()
    fields = {"Content-Type": "application/json", "Content-Length": str(len(data))}
    return _head(status, {**fields, **(extra or {})}) + data


class FaultServer:
    """The fault-injecting server in the current event loop; use ``async with``.

    Args:
        seed: what the per-request draws are seeded with.
        stall: seconds a ``stall`` fault keeps silent (set it above the client's read timeout).
        weights: replace the fault tables (fault -> weight), e.g. ``{"ok": 1}`` for no faults.
        script: fixed faults by request number, for every run (``{1: "drop"}``: each run's
            first request is dropped); the other requests draw from the table.
        port: 0 picks a free port.
    """

    def __init__(
        self,
        *,
        seed: int = 0,
        stall: float = 3.0,
        weights: dict[str, float] | None = None,
        script: dict[int, str] | None = None,
        port: int = 0,
    ) -> None:
        self.seed = seed
        self.stall = stall
        self.weights = weights
        self.script = script or {}
        self.port_wanted = port
        self.log: list[Injected] = []
        self.requests = 0
        self.open_connections = 0
        self._counts: dict[str, int] = defaultdict(int)
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self._idle = asyncio.Event()
        self._arrived = asyncio.Event()

    @property
    def port(self) -> int:
        assert self._server is not None, "the server is not started"
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL (``.../v1``); Anthropic clients take ``anthropic_url``."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def wait_for_requests(self, count: int, timeout: float) -> bool:
        """True once ``count`` model requests have arrived, False after ``timeout``."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                while self.requests < count:
                    self._arrived.clear()
                    await self._arrived.wait()
        return self.requests >= count

    def faults_of(self, run: str) -> list[str]:
        """The faults run ``run`` met, in order."""
        return [i.fault for i in self.log if i.run == run]

    def met_by(self, run: str) -> list[Injected]:
        """What run ``run`` met, request by request."""
        return [i for i in self.log if i.run == run]

    async def __aenter__(self) -> FaultServer:
        # a real server takes a burst of connections; asyncio's default backlog (100) would
        # drop SYNs and make clients wait out TCP retransmits (1 s, 3 s, 7 s...)
        self._server = await asyncio.start_server(
            self._serve, "127.0.0.1", self.port_wanted, backlog=4096
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._handlers):
            task.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)
        await self._server.wait_closed()

    async def wait_until_all_closed(self, timeout: float) -> bool:
        """True once the clients have closed every connection, False after ``timeout``."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                while self.open_connections:
                    self._idle.clear()
                    await self._idle.wait()
        return self.open_connections == 0

    # -- choosing a fault ------------------------------------------------------------------

    def _draw(self, run: str, api: str) -> tuple[int, str]:
        self._counts[run] += 1
        n = self._counts[run]
        if n in self.script:
            return n, self.script[n]
        table = self.weights or (ANTHROPIC_FAULTS if api == "anthropic" else OPENAI_FAULTS)
        rng = random.Random(f"{self.seed}:{run}:{n}")
        names = sorted(table)
        return n, rng.choices(names, weights=[table[k] for k in names])[0]

    # -- serving ---------------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        self.open_connections += 1
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                if not await self._answer(*request, reader, writer):
                    break
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        except asyncio.CancelledError:
            pass  # the server is stopping; ending quietly keeps asyncio from logging it
        finally:
            self.open_connections -= 1
            self._idle.set()
            self._handlers.discard(task)
            writer.close()

    async def _answer(
        self,
        method: str,
        path: str,
        body: bytes,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        """Answer one request; False closes the connection."""
        if method == "GET" and path.startswith("/v1/faults"):
            writer.write(_json_reply(200, [i.__dict__ for i in self.log]))
            await writer.drain()
            return True
        if method == "GET" and path.startswith("/v1/stats"):
            # this very connection is open too: it is not counted
            stats = {"requests": self.requests, "open_connections": self.open_connections - 1}
            writer.write(_json_reply(200, stats))
            await writer.drain()
            return True
        api = "anthropic" if path.startswith("/v1/messages") else "openai"
        self.requests += 1
        payload = json.loads(body or b"{}")
        turn = plan(payload)
        stream = bool(payload.get("stream"))
        n, fault = self._draw(turn.run, api)
        self.log.append(Injected(turn.run, n, fault, api, stream, calls=turn.answer is None))
        self._arrived.set()
        http = _http_fault(fault, api, stream, turn.a)
        if http == "drop":
            return False
        if http == "stall":
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.stall):
                    await reader.read()  # until the client gives up and closes
            return False
        if http is not None:
            writer.write(http)
            await writer.drain()
            return True
        if not stream:
            answer = (
                openai_completion(turn, fault)
                if api == "openai"
                else anthropic_message(turn, fault)
            )
            data = json.dumps(answer).encode()
            if fault == "bad_json":
                data = data[: len(data) // 3]
            if fault in ("cut_body", "cut_stream_early", "cut_stream_late"):
                fields = {"Content-Type": "application/json", "Content-Length": str(len(data))}
                writer.write(_head(200, fields) + data[: len(data) // 2])
                await writer.drain()
                return False
            writer.write(
                _head(200, {"Content-Type": "application/json", "Content-Length": str(len(data))})
                + data
            )
            await writer.drain()
            return True
        pieces, complete = (
            openai_events(turn, fault) if api == "openai" else anthropic_events(turn, fault)
        )
        fields = {
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-cache",
            "Transfer-Encoding": "chunked",
        }
        writer.write(_head(200, fields))
        for piece in pieces:
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            await writer.drain()
        if not complete:
            return False  # no final chunk: the body was cut short
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True


def _http_fault(fault: str, api: str, stream: bool, a: int) -> bytes | str | None:
    """The whole reply for a fault decided at the HTTP level; ``drop``/``stall`` as words."""
    if fault in ("drop", "stall"):
        return fault
    if not stream and fault in ("error_event_early", "error_event_late"):
        fault = "529" if api == "anthropic" else "500"
    if stream and fault == "cut_body":
        return "drop"
    if api == "anthropic":
        kinds = {
            "429": "rate_limit_error",
            "500": "api_error",
            "529": "overloaded_error",
            "401": "authentication_error",
            "503": "api_error",
        }
        if fault in kinds:
            error = {
                "type": "error",
                "error": {"type": kinds[fault], "message": f"injected {fault}"},
                "request_id": "req_f",
            }
            extra = {"retry-after": str(a % 2)} if fault == "429" else None
            return _json_reply(int(fault), error, extra)
        return None
    if fault in ("429", "500", "502", "503", "401"):
        error = {
            "error": {
                "message": f"injected {fault}",
                "type": "server_error" if fault != "401" else "invalid_api_key",
            }
        }
        extra = {"Retry-After": str(a % 2)} if fault == "429" else None
        return _json_reply(int(fault), error, extra)
    return None


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, str, bytes] | None:
    try:
        block = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if exc.partial.strip():
            raise
        return None
    request_line, *header_lines = block.decode("latin-1").split("\r\n")
    method, path, _version = request_line.split(" ", 2)
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return method, path, body


async def _main() -> None:
    parser = argparse.ArgumentParser(description="a fault-injecting model server on 127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stall", type=float, default=3.0)
    parser.add_argument("--weights", type=json.loads, default=None, help='JSON, e.g. {"ok": 1}')
    args = parser.parse_args()
    async with FaultServer(
        seed=args.seed, stall=args.stall, weights=args.weights, port=args.port
    ) as server:
        print(f"PORT {server.port}", flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_main())
