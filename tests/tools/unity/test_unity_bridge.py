"""The Python client against the real bridge core, compiled with mcs and served by mono."""

from __future__ import annotations

import json
import socket
import struct
import time

import anyio
import pytest
from agentsdk_unity import BridgeSettings, UnityBridge
from agentsdk_unity.errors import BridgeAuthError, BridgeUnavailableError, UnityBridgeError

from .monohost import MonoHost, process_gone

pytestmark = pytest.mark.anyio


def raw_connect(
    host: MonoHost, token: str | None = None
) -> tuple[socket.socket, dict[str, object]]:
    """A plain socket that has done the hello line; returns the handshake answer too."""
    sock = socket.create_connection(("127.0.0.1", host.port), timeout=10)
    hello = {
        "protocol": 1,
        "token": token if token is not None else host.token(),
        "client": "raw-test",
    }
    sock.sendall(json.dumps(hello).encode() + b"\n")
    line = b""
    while not line.endswith(b"\n"):
        chunk = sock.recv(1)
        if not chunk:
            break
        line += chunk
    return sock, json.loads(line) if line else {}


def raw_frame(sock: socket.socket) -> dict[str, object]:
    """Reads one length-prefixed frame."""

    def exactly(n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                raise EOFError("closed")
            data += chunk
        return data

    (size,) = struct.unpack(">Q", exactly(8))
    return json.loads(exactly(size))


async def test_handshake_reports_protocol_and_capabilities(mono_host: MonoHost) -> None:
    async with UnityBridge(mono_host.settings()) as bridge:
        welcome = bridge.welcome
        assert welcome is not None
        assert welcome.protocol == 1
        assert welcome.state == "ready"
        assert {"journal", "echo", "slow", "large"} <= set(welcome.capabilities)
        assert await bridge.request("echo", {"text": "héllo ✓", "n": 3}) == {
            "text": "héllo ✓",
            "n": 3,
        }


async def test_listens_on_loopback_only(mono_host: MonoHost) -> None:
    with open("/proc/net/tcp") as table:
        rows = [line.split() for line in table.read().splitlines()[1:]]
    listening = [
        r[1] for r in rows if r[3] == "0A" and int(r[1].split(":")[1], 16) == mono_host.port
    ]
    assert listening == [f"0100007F:{mono_host.port:04X}"]


async def test_wrong_token_is_refused_and_server_keeps_serving(mono_host: MonoHost) -> None:
    wrong = mono_host.settings(token="0" * 64)
    with pytest.raises(BridgeAuthError) as refused:
        await UnityBridge(wrong).connect()
    assert refused.value.code == "auth_failed"
    sock, answer = raw_connect(mono_host, token="nope")
    assert answer["type"] == "error"
    assert answer["error"]["code"] == "auth_failed"  # type: ignore[index]
    assert sock.recv(1) == b""  # closed by the server
    sock.close()
    async with UnityBridge(mono_host.settings()) as bridge:
        assert await bridge.request("echo", {"still": "up"}) == {"still": "up"}


async def test_large_frames_both_ways(mono_host: MonoHost) -> None:
    blob = "x" * 6_000_000 + "é✓"
    async with UnityBridge(mono_host.settings()) as bridge:
        echoed = await bridge.request("echo", {"blob": blob})
        assert echoed == {"blob": blob}
        big = await bridge.request("large", {"bytes": 8_000_000})
        assert isinstance(big, dict)
        data = big["data"]
        assert isinstance(data, str) and len(data) == 8_000_000 and data[:3] == "abc"


async def test_malformed_frames_are_rejected_without_killing_the_server(
    mono_host: MonoHost,
) -> None:
    sock, answer = raw_connect(mono_host)
    assert answer["type"] == "welcome"
    for bad in (b"{not json", b"\xff\xfe\x00", b"[1, 2, 3]", b'{"a": ' * 200 + b"1" + b"}" * 200):
        sock.sendall(struct.pack(">Q", len(bad)) + bad)
        reply = raw_frame(sock)
        assert reply["ok"] is False and reply["id"] is None
        assert reply["error"]["code"] == "malformed_frame"  # type: ignore[index]
    # A request without an id is a bad request; the same connection still works afterwards.
    body = json.dumps({"command": "echo"}).encode()
    sock.sendall(struct.pack(">Q", len(body)) + body)
    assert raw_frame(sock)["error"]["code"] == "bad_request"  # type: ignore[index]
    body = json.dumps({"id": "r1", "command": "echo", "args": {"k": 1}}).encode()
    sock.sendall(struct.pack(">Q", len(body)) + body)
    assert raw_frame(sock) == {"id": "r1", "ok": True, "result": {"k": 1}}
    sock.close()


async def test_oversized_frame_closes_only_that_connection(host_exe, tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = MonoHost(host_exe, tmp_path / "bridge", "--max-frame-bytes", "1000000")
    try:
        sock, _ = raw_connect(host)
        sock.sendall(struct.pack(">Q", 2**40))  # announce 1 TiB
        reply = raw_frame(sock)
        assert reply["error"]["code"] == "frame_too_large"  # type: ignore[index]
        assert "1000000" in reply["error"]["message"]  # type: ignore[index]
        assert sock.recv(1) == b""
        sock.close()
        async with UnityBridge(host.settings()) as bridge:
            assert bridge.welcome is not None and bridge.welcome.max_frame_bytes == 1_000_000
            with pytest.raises(UnityBridgeError) as too_big:
                await bridge.request("echo", {"blob": "y" * 2_000_000})
            assert too_big.value.code == "frame_too_large"
            assert await bridge.request("echo", {"small": True}) == {"small": True}
    finally:
        host.stop()
        assert process_gone(host.pid)


async def test_concurrent_requests_share_one_connection(mono_host: MonoHost) -> None:
    results: dict[int, object] = {}
    async with UnityBridge(mono_host.settings()) as bridge:
        started = time.monotonic()

        async def one(i: int) -> None:
            command = "slow" if i % 2 else "echo"
            results[i] = await bridge.request(
                command, {"seconds": 0.5, "tag": f"t{i}"} if i % 2 else {"i": i}
            )

        async with anyio.create_task_group() as group:
            for i in range(12):
                group.start_soon(one, i)
        elapsed = time.monotonic() - started
    assert all(results[i] == {"slept": 0.5, "tag": f"t{i}"} for i in range(1, 12, 2))
    assert all(results[i] == {"i": i} for i in range(0, 12, 2))
    assert elapsed < 3.0, "six 0.5 s commands should overlap, not queue"


async def test_typed_errors_reach_the_caller(mono_host: MonoHost) -> None:
    async with UnityBridge(mono_host.settings()) as bridge:
        with pytest.raises(UnityBridgeError) as failed:
            await bridge.request("fail", {"code": "not_found", "message": "no GameObject 'Ghost'"})
        assert (failed.value.code, failed.value.message) == ("not_found", "no GameObject 'Ghost'")
        with pytest.raises(UnityBridgeError) as unknown:
            await bridge.request("no.such.command")
        assert unknown.value.code == "unknown_command"
        with pytest.raises(UnityBridgeError) as crash:
            await bridge.request("crash")
        assert crash.value.code == "internal_error" and "handler bug" in crash.value.message
        with pytest.raises(UnityBridgeError) as bad_args:
            await bridge.request("large", {"bytes": "many"})
        assert bad_args.value.code == "invalid_args"


async def test_request_timeout_is_a_clear_error(mono_host: MonoHost) -> None:
    async with UnityBridge(mono_host.settings()) as bridge:
        with pytest.raises(UnityBridgeError) as late:
            await bridge.request("slow", {"seconds": 2}, timeout=0.3)
        assert late.value.code == "timeout"
        # The connection is still in step after a timed-out wait.
        assert await bridge.request("echo", {"after": "timeout"}) == {"after": "timeout"}


async def test_retries_while_the_editor_is_compiling(mono_host: MonoHost) -> None:
    async with UnityBridge(mono_host.settings()) as bridge:
        # Timed from before 'host.busy' is sent: its 1 s busy window starts after that on the
        # host, so the echo cannot get through sooner however long this process is descheduled.
        started = time.monotonic()
        await bridge.request("host.busy", {"seconds": 1.0})
        status = mono_host.settings().read_status()
        assert status is not None and status.state == "compiling"
        assert await bridge.request("echo", {"after": "compile"}) == {"after": "compile"}
        assert time.monotonic() - started >= 0.9
        counts = await bridge.request("host.counts")
        assert isinstance(counts, dict) and counts.get("echo") == 1  # refused while busy, ran once


async def test_disconnect_mid_command_is_recovered_from_the_journal(mono_host: MonoHost) -> None:
    """A TCP proxy drops the connection while 'slow' runs; the client reconnects and asks the journal."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    proxy_port = listener.extra(anyio.abc.SocketAttribute.local_port)
    cut = anyio.Event()
    connections = 0

    async def pipe(src: anyio.abc.ByteStream, dst: anyio.abc.ByteStream) -> None:
        try:
            async for chunk in src:
                await dst.send(chunk)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass

    async def handle(client: anyio.abc.SocketStream) -> None:
        nonlocal connections
        connections += 1
        first = connections == 1
        async with client, await anyio.connect_tcp("127.0.0.1", mono_host.port) as upstream:
            async with anyio.create_task_group() as group:
                group.start_soon(pipe, client, upstream)
                group.start_soon(pipe, upstream, client)
                if first:
                    await cut.wait()
                    group.cancel_scope.cancel()

    settings = mono_host.settings(port=proxy_port, token=mono_host.token())
    async with anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, handle)
        async with UnityBridge(settings) as bridge, UnityBridge(mono_host.settings()) as side:

            async def cut_once_running() -> None:
                # Cut when the host has started the command (not after a fixed sleep), so the
                # drop always lands mid-command and the retry attaches to the running command.
                while True:
                    counts = await side.request("host.counts")
                    if isinstance(counts, dict) and counts.get("slow"):
                        break
                    await anyio.sleep(0.02)
                cut.set()

            tg.start_soon(cut_once_running)
            result = await bridge.request("slow", {"seconds": 1.2, "tag": "journal"})
            counts = await bridge.request("host.counts")
        tg.cancel_scope.cancel()
    assert result == {"slept": 1.2, "tag": "journal"}
    assert connections >= 2, "the client must have reconnected"
    assert isinstance(counts, dict) and counts["slow"] == 1, (
        "the command ran once; the answer came from the journal"
    )


async def test_response_lost_in_a_reload_comes_back_from_the_disk_journal(
    mono_host: MonoHost,
) -> None:
    async with UnityBridge(mono_host.settings()) as bridge:
        first_session = bridge.welcome.session if bridge.welcome else ""
        result = await bridge.request(
            "host.reload_after", {"value": {"answer": 42}, "seconds": 1.0}
        )
        assert result == {"value": {"answer": 42}}
        assert bridge.welcome is not None and bridge.welcome.session != first_session
        counts = await bridge.request("host.counts")
    assert isinstance(counts, dict) and counts["host.reload_after"] == 1
    journal = list((mono_host.bridge_dir / "journal").glob("*.json"))
    assert journal, "finished responses are journaled on disk"


async def test_bridge_back_right_after_a_refused_reconnect_is_not_taken_for_gone(
    mono_host: MonoHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client descheduled between a refused connect and its status read sees 'ready', not 'reloading'.

    The restarted bridge writes 'ready' only once it listens again, so 'ready' after a refusal means
    "try again now", not "no editor". Deterministic form of a race seen on a loaded 2-core machine.
    """
    handshake = UnityBridge._handshake
    stalls = 0

    async def stalled_handshake(self: UnityBridge, port: int, token: str) -> object:
        nonlocal stalls
        try:
            return await handshake(self, port, token)
        except OSError:
            stalls += 1
            for _ in range(1000):  # stalled until the restarted bridge has written 'ready'
                status = mono_host.settings().read_status()
                if status is not None and status.state == "ready":
                    break
                await anyio.sleep(0.01)
            raise

    monkeypatch.setattr(UnityBridge, "_handshake", stalled_handshake)
    async with UnityBridge(mono_host.settings()) as bridge:
        result = await bridge.request(
            "host.reload_after", {"value": {"answer": 7}, "seconds": 0.5}, timeout=30
        )
        counts = await bridge.request("host.counts")
    assert result == {"value": {"answer": 7}}
    assert stalls >= 1, "the reconnect must have been refused at least once"
    assert isinstance(counts, dict) and counts["host.reload_after"] == 1


async def test_a_self_connected_socket_counts_as_refused(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """Retrying a loopback port nobody listens on can connect to itself (TCP simultaneous open)."""
    attempts = 0

    async def self_connect(host: str, port: int) -> anyio.abc.SocketStream:
        nonlocal attempts
        attempts += 1
        sock = socket.socket()
        sock.bind((host, port))
        sock.connect((host, port))  # Linux: a socket connected to its own address
        sock.setblocking(False)
        return await anyio.abc.SocketStream.from_socket(sock)

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free_port = probe.getsockname()[1]
    monkeypatch.setattr(anyio, "connect_tcp", self_connect)
    settings = BridgeSettings(port=free_port, token="t" * 64, bridge_dir=tmp_path)
    with pytest.raises(BridgeUnavailableError) as refused:
        await UnityBridge(settings).connect()
    assert attempts == 1
    assert "Connection refused" in str(refused.value)


async def test_clear_error_when_nothing_listens(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free_port = probe.getsockname()[1]
    settings = BridgeSettings(port=free_port, token="t" * 64, bridge_dir=tmp_path)
    started = time.monotonic()
    with pytest.raises(BridgeUnavailableError) as missing:
        await UnityBridge(settings).request("echo")
    assert f"No Unity editor is listening on 127.0.0.1:{free_port}" in str(missing.value)
    assert time.monotonic() - started < 2.0
    with pytest.raises(BridgeUnavailableError) as unconfigured:
        await UnityBridge(BridgeSettings(bridge_dir=tmp_path / "empty")).connect()
    assert "AGENTSDK_UNITY_PORT" in str(unconfigured.value)


async def test_stopped_host_leaves_status_stopped(mono_host: MonoHost) -> None:
    mono_host.stop()
    status = mono_host.settings().read_status()
    assert status is not None and status.state == "stopped"
    with pytest.raises(BridgeUnavailableError) as gone:
        await UnityBridge(mono_host.settings()).connect()
    assert "last status was 'stopped'" in str(gone.value)


def send_request(sock: socket.socket, body: dict[str, object]) -> dict[str, object]:
    """One raw request frame and its response."""
    data = json.dumps(body).encode()
    sock.sendall(struct.pack(">Q", len(data)) + data)
    return raw_frame(sock)


async def test_a_request_id_runs_at_most_once(mono_host: MonoHost) -> None:
    sock, _ = raw_connect(mono_host)
    first = send_request(sock, {"id": "dup-1", "command": "echo", "args": {"n": 1}})
    again = send_request(sock, {"id": "dup-1", "command": "echo", "args": {"n": 2}})
    assert first == again == {"id": "dup-1", "ok": True, "result": {"n": 1}}
    lookup = send_request(
        sock, {"id": "look-1", "command": "bridge.result", "args": {"request_id": "dup-1"}}
    )
    assert lookup["result"] == {"request_id": "dup-1", "state": "done", "response": first}
    unknown = send_request(
        sock, {"id": "look-2", "command": "bridge.result", "args": {"request_id": "never"}}
    )
    assert unknown["result"] == {"request_id": "never", "state": "unknown"}
    bad_id = send_request(sock, {"id": "../../etc/passwd", "command": "echo"})
    assert bad_id["id"] is None and bad_id["error"]["code"] == "bad_request"  # type: ignore[index]
    counts = send_request(sock, {"id": "c-1", "command": "host.counts"})
    assert counts["result"] == {"echo": 1}
    sock.close()


async def test_bad_hello_lines_are_refused(host_exe, tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = MonoHost(host_exe, tmp_path / "bridge", "--handshake-timeout-ms", "1500")
    try:
        with socket.create_connection(("127.0.0.1", host.port), timeout=10) as silent:
            started = time.monotonic()
            assert silent.recv(1) == b""  # a client that never says hello is dropped
            assert time.monotonic() - started < 4.5  # the default would be 5 s
        with socket.create_connection(("127.0.0.1", host.port), timeout=10) as chatty:
            chatty.sendall(b"x" * 5000 + b"\n")
            answer = json.loads(chatty.makefile("rb").readline())
            assert answer["error"]["code"] == "bad_handshake"
        with socket.create_connection(("127.0.0.1", host.port), timeout=10) as old:
            old.sendall(json.dumps({"protocol": 0, "token": host.token()}).encode() + b"\n")
            answer = json.loads(old.makefile("rb").readline())
            assert answer["error"]["code"] == "protocol_mismatch"
        async with UnityBridge(host.settings()) as bridge:
            assert await bridge.request("echo", {"ok": 1}) == {"ok": 1}
    finally:
        host.stop()
        assert process_gone(host.pid)
