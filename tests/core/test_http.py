"""``agentsdk.http`` against real sockets on 127.0.0.1: a small scripted HTTP/1.1 server
answers, streams, cuts bodies short, hangs up and stays silent; a second one plays an HTTP
proxy. The httpx backend runs over ``httpx.MockTransport``. Both connectors sit on this
layer; their own tests (tests/connectors) drive it through whole agent runs."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import ssl
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from agentsdk.http import CannotSend, HttpClient, Reply, TransportFailure, tls_context

# pytest runs with --import-mode=importlib; the helper's name is unique to this folder
sys.path.insert(0, str(Path(__file__).parent))
from http_server import (
    JSON,
    Server,
    answer,
    chunked,
    cut,
    first_then_silent,
    hang_up,
    silent,
    unused_port,
)

# -- answers ------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_whole_answer_and_what_went_over_the_wire() -> None:
    async with Server(answer(200, b'{"ok": true}', X_Request_Id="r1", **JSON)) as server:
        client = HttpClient(5.0)
        reply = await client.post(server.url(), b'{"q": 1}', {**JSON, "X-Team": "a"})
        await client.aclose()
    assert reply.ok and reply.status == 200 and json.loads(reply.body) == {"ok": True}
    assert reply.headers["x-request-id"] == "r1" == reply.headers["X-REQUEST-ID"]
    assert reply.received == len(reply.body) == 12 and reply.text == '{"ok": true}'
    (seen,) = server.seen
    assert (seen.method, seen.target, seen.body) == ("POST", "/v1/x", b'{"q": 1}')
    assert seen.headers["x-team"] == "a" and seen.headers["content-type"] == JSON["Content-Type"]
    with pytest.raises(RuntimeError, match="read whole"):
        reply.lines()


@pytest.mark.anyio
async def test_an_error_status_is_read_whole_even_when_a_stream_was_asked_for() -> None:
    async with Server(answer(429, b'{"error": "slow down"}', Retry_After="2")) as server:
        client = HttpClient(5.0)
        reply = await client.post(server.url(), b"{}", JSON, stream=True)
        await client.aclose()
    assert not reply.ok and reply.status == 429 and reply.headers["retry-after"] == "2"
    assert json.loads(reply.body) == {"error": "slow down"}


@pytest.mark.anyio
async def test_a_stream_comes_as_lines_however_the_bytes_are_split() -> None:
    long_line = b"data: " + b"x" * 300_000
    pieces = [
        b"data: one\r\n",
        b"\r\nda",
        b"ta: t",
        b"wo\n\n",
        long_line[:1000],
        long_line[1000:] + b"\n",
        b"tail",
    ]
    async with Server(chunked(pieces)) as server:
        client = HttpClient(5.0)
        reply = await client.post(server.url(), b"{}", JSON, stream=True)
        lines = [line async for line in reply.lines()]
        received = reply.received
        await reply.aclose()
        await reply.aclose()  # idempotent
        await client.aclose()
    assert lines == ["data: one", "", "data: two", "", long_line.decode(), "tail"]
    assert received == sum(len(p) for p in pieces)


@pytest.mark.anyio
async def test_pooled_connections_are_reused_but_not_after_a_stream_left_half_read() -> None:
    events = [b"data: a\n\n", b"data: b\n\n"]
    behaviours = [answer(200, b"{}"), chunked(events), first_then_silent, answer(200, b"{}")]
    async with Server(*behaviours) as server:
        client = HttpClient(60.0)
        await client.post(server.url(), b"{}", JSON)
        reply = await client.post(server.url(), b"{}", JSON, stream=True)
        assert [line async for line in reply.lines()] == ["data: a", "", "data: b", ""]
        await reply.aclose()  # read to its end: the connection goes back to the pool
        assert server.connections == 1
        reply = await client.post(server.url(), b"{}", JSON, stream=True)
        assert await anext(aiter(reply.lines())) == "data: a"
        await reply.aclose()  # stopped half-way: this connection is dropped, not pooled
        assert await server.all_closed()
        await client.post(server.url(), b"{}", JSON)
        await client.aclose()
    assert server.connections == 2 and len(server.seen) == 4


# -- failures -----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_refused_connection_says_where() -> None:
    port = unused_port()
    client = HttpClient(5.0)
    with pytest.raises(TransportFailure) as failure:
        await client.post(f"http://127.0.0.1:{port}/v1/x", b"{}", JSON)
    await client.aclose()
    assert str(failure.value).startswith(f"cannot connect to the server at 127.0.0.1:{port} (")
    assert not failure.value.dropped and not failure.value.timed_out


@pytest.mark.anyio
async def test_a_hang_up_before_any_answer_is_a_dropped_connection() -> None:
    async with Server(hang_up) as server:
        client = HttpClient(5.0)
        with pytest.raises(TransportFailure) as failure:
            await client.post(server.url(), b"{}", JSON)
        await client.aclose()
    assert str(failure.value) == "the server closed the connection without answering"
    assert failure.value.dropped and not failure.value.timed_out


@pytest.mark.anyio
async def test_a_body_cut_short_says_how_much_came() -> None:
    body = b'{"text": "' + b"y" * 90 + b'"}'
    async with Server(cut(body, 50)) as server:
        client = HttpClient(5.0)
        with pytest.raises(TransportFailure) as failure:
            await client.post(server.url(), b"{}", JSON)
        await client.aclose()
    expected = f"the server closed the connection after 50 of {len(body)} bytes of the body"
    assert str(failure.value) == expected and not failure.value.dropped


@pytest.mark.anyio
async def test_a_stream_cut_short_fails_in_its_lines() -> None:
    async with Server(chunked([b"data: a\n\n", b"data: b\n\n"], complete=False)) as server:
        client = HttpClient(5.0)
        reply = await client.post(server.url(), b"{}", JSON, stream=True)
        got: list[str] = []
        with pytest.raises(TransportFailure, match="before the body was complete"):
            async for line in reply.lines():
                got.append(line)
        await reply.aclose()
        await client.aclose()
    assert got == ["data: a", "", "data: b", ""]


@pytest.mark.anyio
async def test_a_silent_server_times_out_per_read_and_the_connection_is_dropped() -> None:
    async with Server(silent) as server:
        client = HttpClient(60.0)
        with anyio.fail_after(20):
            with pytest.raises(TransportFailure) as failure:
                await client.post(server.url(), b"{}", JSON, timeout=0.3)
        assert await server.all_closed()  # a late answer must not land in a pooled connection
        await client.aclose()
    assert str(failure.value) == "no answer from the server within 0.3 s (the read timeout)"
    assert failure.value.timed_out


@pytest.mark.anyio
async def test_a_stream_that_goes_silent_times_out_in_its_lines() -> None:
    async with Server(first_then_silent) as server:
        client = HttpClient(0.3)
        reply = await client.post(server.url(), b"{}", JSON, stream=True)
        with anyio.fail_after(20), pytest.raises(TransportFailure) as failure:
            async for _ in reply.lines():
                pass
        await reply.aclose()
        await client.aclose()
    assert str(failure.value) == "no data from the server for 0.3 s (the read timeout)"
    assert failure.value.timed_out


@pytest.mark.anyio
@pytest.mark.parametrize("url", ["ftp://127.0.0.1/x", "http://", "http://[::1/x"])
async def test_a_url_that_cannot_be_requested_is_cannot_send(url: str) -> None:
    client = HttpClient(5.0)
    with pytest.raises(CannotSend):
        await client.post(url, b"{}", JSON)
    await client.aclose()


@pytest.mark.anyio
async def test_a_header_with_a_newline_is_cannot_send_and_nothing_is_sent() -> None:
    async with Server(answer(200, b"{}")) as server:
        client = HttpClient(5.0)
        with pytest.raises(CannotSend):
            await client.post(server.url(), b"{}", {"X-Team": "a\r\nX-Injected: 1"})
        await client.aclose()
    assert server.seen == []


# -- event loops --------------------------------------------------------------------------


def test_each_event_loop_gets_its_own_pool_and_closes_it_when_it_ends() -> None:
    # The server runs in its own thread and loop, so it outlives each asyncio.run and sees
    # whether the client's pooled connection was closed when that loop ended.
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    def there(coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, loop).result(10)

    server = Server(answer(200, b'{"n": 1}'))
    there(server.__aenter__())
    client = HttpClient(5.0)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(3):
                reply = asyncio.run(client.post(server.url(), b"{}", JSON))
                assert reply.ok and there(server.all_closed(5.0))
            asyncio.run(client.aclose())  # the pool of a finished loop: let go, no error
            gc.collect()
        assert server.connections == 3
        assert not [w for w in caught if "nclosed" in str(w.message)], caught
    finally:
        there(server.__aexit__())
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()


@pytest.mark.anyio
async def test_aclose_closes_the_pool_and_the_client_stays_usable() -> None:
    async with Server(answer(200, b"{}")) as server:
        client = HttpClient(5.0)
        await client.post(server.url(), b"{}", JSON)
        assert server.open == 1
        await client.aclose()
        assert await server.all_closed()
        await client.post(server.url(), b"{}", JSON)
        await client.aclose()
        await client.aclose()
    assert server.connections == 2


# -- proxies and TLS ----------------------------------------------------------------------


@pytest.fixture
def no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    for name in list(os.environ):
        if name.lower() in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
            monkeypatch.delenv(name)
    yield monkeypatch


@pytest.mark.anyio
async def test_http_proxy_from_the_environment_but_never_for_loopback(
    no_proxy_env: pytest.MonkeyPatch,
) -> None:
    async with (
        Server(answer(200, b'{"via": "proxy"}')) as proxy,
        Server(answer(200, b"{}")) as direct,
    ):
        no_proxy_env.setenv("HTTP_PROXY", proxy.url(""))
        client = HttpClient(5.0)
        reply = await client.post("http://models.example.invalid/v1/x", b"{}", JSON)
        await client.post(direct.url(), b"{}", JSON)  # loopback: straight to the server
        await client.aclose()
    assert json.loads(reply.body) == {"via": "proxy"}
    (seen,) = proxy.seen
    assert seen.target == "http://models.example.invalid/v1/x"  # absolute form: a proxy request
    assert seen.headers["host"] == "models.example.invalid"
    assert [s.target for s in direct.seen] == ["/v1/x"]


@pytest.mark.anyio
async def test_no_proxy_keeps_a_host_off_the_proxy(no_proxy_env: pytest.MonkeyPatch) -> None:
    async with Server(answer(200, b"{}")) as proxy:
        no_proxy_env.setenv("HTTP_PROXY", proxy.url(""))
        no_proxy_env.setenv("NO_PROXY", "example.invalid")
        client = HttpClient(5.0)
        with anyio.fail_after(30), pytest.raises(TransportFailure, match="cannot connect"):
            await client.post("http://models.example.invalid/v1/x", b"{}", JSON)
        await client.aclose()
    assert proxy.seen == []


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


@pytest.mark.anyio
async def test_https_trusts_ssl_cert_file_and_names_it_when_a_certificate_is_unknown(
    certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = certificate
    serving = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    serving.load_cert_chain(cert, key)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    async with Server(answer(200, b'{"secure": true}'), tls=serving) as server:
        monkeypatch.delenv("SSL_CERT_FILE", raising=False)
        tls_context.cache_clear()  # certifi's bundle does not know a self-signed certificate
        client = HttpClient(5.0)
        with pytest.raises(CannotSend, match=r"not trusted.*SSL_CERT_FILE"):
            await client.post(server.url(), b"{}", JSON)
        await client.aclose()
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
        tls_context.cache_clear()
        client = HttpClient(5.0)
        reply = await client.post(server.url(), b"{}", JSON)
        await client.aclose()
    tls_context.cache_clear()
    assert json.loads(reply.body) == {"secure": True} and len(server.seen) == 1


# -- the httpx backend (transport=) -------------------------------------------------------


@pytest.mark.anyio
async def test_an_httpx_transport_gives_the_same_reply_shape() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/stream":
            return httpx.Response(200, content=b"data: a\r\n\r\ndata: b\n")
        return httpx.Response(503, json={"error": "busy"}, headers={"Retry-After": "1"})

    client = HttpClient(5.0, transport=httpx.MockTransport(handler))
    whole = await client.post("http://m.test/whole", b"{}", JSON, stream=True)
    streamed = await client.post("http://m.test/stream", b"{}", JSON, stream=True)
    lines = [line async for line in streamed.lines()]
    await streamed.aclose()
    await client.aclose()
    assert (whole.status, whole.headers["retry-after"], json.loads(whole.body)) == (
        503,
        "1",
        {"error": "busy"},
    )
    assert lines == ["data: a", "", "data: b"] and isinstance(streamed, Reply)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("raised", "message", "dropped", "timed_out"),
    [
        (httpx.ConnectError("refused"), "cannot connect to the server (refused)", False, False),
        (httpx.ConnectTimeout("slow"), "could not connect within 10 s", False, True),
        (
            httpx.ReadTimeout("slow"),
            "no answer from the server within 2 s (the read timeout)",
            False,
            True,
        ),
        (
            httpx.RemoteProtocolError("gone"),
            "the server closed the connection without answering",
            True,
            False,
        ),
    ],
    ids=["refused", "connect-timeout", "read-timeout", "dropped"],
)
async def test_httpx_failures_become_the_same_transport_failures(
    raised: Exception, message: str, dropped: bool, timed_out: bool
) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise raised

    client = HttpClient(2.0, transport=httpx.MockTransport(handler))
    with pytest.raises(TransportFailure) as failure:
        await client.post("http://m.test/x", b"{}", JSON)
    await client.aclose()
    assert str(failure.value) == message
    assert (failure.value.dropped, failure.value.timed_out) == (dropped, timed_out)


# -- the core installs without aiohttp ----------------------------------------------------


def test_the_core_imports_and_runs_an_httpx_transport_without_aiohttp() -> None:
    script = """
import asyncio, sys
sys.modules["aiohttp"] = None  # as if not installed
import httpx
import agentsdk, agentsdk.http
from agentsdk.http import HttpClient

async def main():
    mock = HttpClient(1.0, transport=httpx.MockTransport(lambda r: httpx.Response(204)))
    print("mock", (await mock.post("http://m.test/", b"", {})).status)
    try:
        await HttpClient(1.0).post("http://127.0.0.1:9/", b"", {})
    except ImportError as exc:
        print("default:", exc)

asyncio.run(main())
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    mock, default = done.stdout.strip().splitlines()
    assert mock == "mock 204"
    assert "aiohttp, which is not installed" in default and "agentsdk[http]" in default


def test_importing_the_module_does_not_import_aiohttp() -> None:
    script = "import sys, agentsdk.http; print(sorted(m for m in ('aiohttp', 'httpx') if m in sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
