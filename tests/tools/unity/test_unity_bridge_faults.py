"""Faults found by fuzzing the bridge (issue #19), against the real bridge core under mono.

Each test reproduces one failure first seen from outside: a request that never got an answer,
a journal that lost a result, idle sockets that locked the real client out, doubles that came
back changed in the last bit.
"""

from __future__ import annotations

import json
import math
import random
import socket
import struct
from pathlib import Path

import anyio
import pytest
from agentsdk_unity import UnityBridge
from agentsdk_unity.errors import (
    BridgeTooManyConnectionsError,
    BridgeUnavailableError,
    UnityBridgeError,
)

from .monohost import MonoHost, process_gone
from .test_unity_bridge import raw_connect, send_request

pytestmark = pytest.mark.anyio


def no_tmp_files(folder: Path) -> list[Path]:
    """Temporary journal files left behind (an atomic write that failed half way)."""
    return sorted(folder.rglob("*.tmp"))


async def test_unpaired_surrogate_in_a_request_gets_a_clear_error(mono_host: MonoHost) -> None:
    sock, _ = raw_connect(mono_host)
    sock.settimeout(20)
    # json.dumps writes the lone high surrogate as the escape \ud83d: valid JSON text, half a character.
    reply = send_request(
        sock, {"id": "sur-1", "command": "echo", "args": {"name": "robot \ud83d", "ok": "fine"}}
    )
    assert reply["id"] == "sur-1" and reply["ok"] is False
    error = reply["error"]
    assert isinstance(error, dict) and error["code"] == "invalid_args"
    assert "args.name" in error["message"] and "surrogate" in error["message"]
    # A lone low surrogate deep inside a list is found too.
    nested = send_request(
        sock, {"id": "sur-2", "command": "echo", "args": {"items": [{"label": "\udc00x"}]}}
    )
    assert nested["error"]["code"] == "invalid_args"  # type: ignore[index]
    assert "args.items[0].label" in nested["error"]["message"]  # type: ignore[index]
    counts = send_request(sock, {"id": "c-1", "command": "host.counts"})
    assert counts["result"] == {}, "the command must not have run"
    sock.close()
    assert no_tmp_files(mono_host.bridge_dir) == []
    async with UnityBridge(mono_host.settings()) as bridge:
        with pytest.raises(UnityBridgeError) as refused:
            await bridge.request("echo", {"t": "\udfff"}, timeout=20)
        assert refused.value.code == "invalid_args"


async def test_a_result_holding_an_unpaired_surrogate_is_answered_and_journaled(
    mono_host: MonoHost,
) -> None:
    """Editor data (a name a script set, a console line cut mid-character) can hold half a pair."""
    units = [0x68, 0xD83D, 0x21, 0xDE00, 0xD83D, 0xDE00]  # "h", lone high, "!", lone low, a real 😀
    expected = "h\ud83d!\ude00😀"
    sock, _ = raw_connect(mono_host)
    sock.settimeout(20)
    reply = send_request(sock, {"id": "lone-1", "command": "text", "args": {"units": units}})
    assert reply == {"id": "lone-1", "ok": True, "result": {"text": expected}}
    stored = mono_host.bridge_dir / "journal" / "lone-1.json"
    assert json.loads(stored.read_text("utf-8"))["result"] == {"text": expected}
    again = send_request(sock, {"id": "lone-1", "command": "text", "args": {"units": [0x41]}})
    assert again == reply, "a repeated id is answered from the journal"
    sock.close()
    assert no_tmp_files(mono_host.bridge_dir) == []
    async with UnityBridge(mono_host.settings()) as bridge:
        assert await bridge.request("text", {"units": units}) == {"text": expected}


async def test_unsendable_json_is_refused_before_it_leaves(mono_host: MonoHost) -> None:
    """NaN is not JSON: it used to go out as 'NaN', get an id-less error and hang to the timeout."""
    async with UnityBridge(mono_host.settings()) as bridge:
        with pytest.raises(UnityBridgeError) as nan:
            await bridge.request("echo", {"position": [0.0, math.nan, 1.0]}, timeout=30)
        assert nan.value.code == "invalid_args" and "NaN" in nan.value.message
        with pytest.raises(UnityBridgeError) as inf:
            await bridge.request("echo", {"x": -math.inf}, timeout=30)
        assert inf.value.code == "invalid_args"
        assert await bridge.request("echo", {"still": "in step"}) == {"still": "in step"}


async def test_a_frame_the_bridge_cannot_parse_is_answered_under_its_id(
    mono_host: MonoHost,
) -> None:
    """Nesting past the bridge's depth limit: the error names the request, so nobody waits for it."""
    deep: object = "leaf"
    for _ in range(100):
        deep = [deep]
    async with UnityBridge(mono_host.settings()) as bridge:
        with pytest.raises(UnityBridgeError) as refused:
            await bridge.request("echo", {"deep": deep}, timeout=30)  # type: ignore[dict-item]
        # An answer, not the "timeout" this request used to end in.
        assert refused.value.code == "malformed_frame"
        assert "nested deeper than 64" in refused.value.message
        assert await bridge.request("echo", {"after": 1}) == {"after": 1}


def random_doubles(count: int, seed: int) -> list[float]:
    """Doubles from random bit patterns (every exponent, subnormals included) plus awkward values."""
    rng = random.Random(seed)
    values: list[float] = []
    while len(values) < count:
        (value,) = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))
        if math.isfinite(value):
            values.append(value)
    values += [rng.uniform(-1e3, 1e3) for _ in range(count // 4)]
    values += [0.1, 0.2, 0.3, 1 / 3, -0.0, 0.0, 1.0, -2.0, 5e-324, 2.2250738585072014e-308]
    values += [1.7976931348623157e308, 2.2250738585072009e-308, 9007199254740993.0, 1e23, 1e22]
    values += [-1.0254143839013e-146, 4.35, 123456789.12345679, 2.5e-324, 8.98846567431158e307]
    return values


def bits(value: float) -> int:
    """The IEEE 754 bit pattern as a signed 64-bit integer (what C#'s DoubleToInt64Bits returns)."""
    return int(struct.unpack("<q", struct.pack("<d", value))[0])


async def test_many_random_doubles_round_trip_exactly(mono_host: MonoHost) -> None:
    values = random_doubles(20_000, seed=19)
    async with UnityBridge(mono_host.settings()) as bridge:
        for start in range(0, len(values), 5_000):
            chunk = values[start : start + 5_000]
            echoed = await bridge.request("echo", {"values": chunk})
            assert isinstance(echoed, dict)
            back = echoed["values"]
            assert isinstance(back, list) and len(back) == len(chunk)
            changed = [(v, b) for v, b in zip(chunk, back, strict=True) if bits(v) != bits(b)]  # type: ignore[arg-type]
            assert changed == [], f"{len(changed)} doubles changed, e.g. {changed[:3]}"
            assert all(type(b) is float for b in back), "a double must come back as a double"
            # What the bridge itself parsed, as bit patterns: the parse is right, not two errors cancelling.
            parsed = await bridge.request("host.bits", {"values": chunk})
            assert parsed == {"bits": [bits(v) for v in chunk]}


async def test_integers_stay_integers(mono_host: MonoHost) -> None:
    async with UnityBridge(mono_host.settings()) as bridge:
        numbers = [0, -1, 7, 2**53 + 1, -(2**63), 2**63 - 1]
        assert await bridge.request("echo", {"n": numbers}) == {"n": numbers}


async def test_idle_unauthenticated_connections_do_not_lock_out_the_client(
    host_exe: Path, tmp_path: Path
) -> None:
    # A long handshake timeout, so the idle sockets are still there when the real client comes.
    host = MonoHost(host_exe, tmp_path / "bridge", "--handshake-timeout-ms", "60000")
    idle: list[socket.socket] = []
    try:
        for _ in range(64):
            idle.append(socket.create_connection(("127.0.0.1", host.port), timeout=10))
        await anyio.sleep(0.5)  # let the bridge accept them all
        async with UnityBridge(host.settings(connect_timeout=20)) as bridge:
            assert await bridge.request("echo", {"through": "the crowd"}) == {
                "through": "the crowd"
            }
    finally:
        for sock in idle:
            sock.close()
        host.stop()
        assert process_gone(host.pid)


async def test_too_many_connections_is_its_own_error(host_exe: Path, tmp_path: Path) -> None:
    host = MonoHost(host_exe, tmp_path / "bridge", "--max-connections", "2")
    try:
        async with UnityBridge(host.settings()) as first, UnityBridge(host.settings()) as second:
            assert await first.request("echo", {"n": 1}) == {"n": 1}
            assert await second.request("echo", {"n": 2}) == {"n": 2}
            with pytest.raises(BridgeTooManyConnectionsError) as full:
                await UnityBridge(host.settings()).connect()
            assert not isinstance(full.value, BridgeUnavailableError)
            assert full.value.code == "too_many_connections"
            assert "2 clients" in full.value.message
        # Both closed: the slot frees up (the bridge notices a closed socket when it reads EOF).
        for _ in range(100):
            try:
                async with UnityBridge(host.settings()) as third:
                    assert await third.request("echo", {"n": 3}) == {"n": 3}
                break
            except BridgeTooManyConnectionsError:
                await anyio.sleep(0.05)
        else:
            pytest.fail("the bridge never freed the closed connections' slots")
    finally:
        host.stop()
        assert process_gone(host.pid)


async def test_a_journal_that_cannot_be_written_still_answers(
    host_exe: Path, tmp_path: Path
) -> None:
    bridge_dir = tmp_path / "bridge"
    bridge_dir.mkdir()
    (bridge_dir / "journal").write_text("a file where the journal folder should be")
    host = MonoHost(host_exe, bridge_dir)
    try:
        sock, _ = raw_connect(host)
        sock.settimeout(20)
        first = send_request(sock, {"id": "j-1", "command": "echo", "args": {"v": 1}})
        again = send_request(sock, {"id": "j-1", "command": "echo", "args": {"v": 2}})
        assert first == again == {"id": "j-1", "ok": True, "result": {"v": 1}}
        sock.close()
    finally:
        host.stop()
        assert process_gone(host.pid)
    assert no_tmp_files(bridge_dir) == []


async def test_stale_temporary_journal_files_are_removed_at_start(
    host_exe: Path, tmp_path: Path
) -> None:
    journal = tmp_path / "bridge" / "journal"
    journal.mkdir(parents=True)
    (journal / "old.json").write_text('{"id":"old","ok":true,"result":1}')
    (journal / "cut.json.0123abcd.tmp").write_text('{"id":"cut","ok":tr')  # a write a crash cut off
    host = MonoHost(host_exe, tmp_path / "bridge")
    try:
        assert no_tmp_files(journal) == []
        sock, _ = raw_connect(host)
        sock.settimeout(20)
        lookup = send_request(
            sock, {"id": "l-1", "command": "bridge.result", "args": {"request_id": "old"}}
        )
        assert lookup["result"] == {
            "request_id": "old",
            "state": "done",
            "response": {"id": "old", "ok": True, "result": 1},
        }
        sock.close()
    finally:
        host.stop()
        assert process_gone(host.pid)


async def test_toolkit_results_carry_whole_characters_only(mono_host: MonoHost) -> None:
    """Half a surrogate pair from the editor becomes U+FFFD, so the tool result can be sent on as UTF-8."""
    from agentsdk_unity import UnityToolkit
    from pydantic import BaseModel

    class Text(BaseModel):
        text: str

    async with UnityToolkit(settings=mono_host.settings(), groups="all") as unity:
        got = await unity._call(Text, "text", {"units": [0x41, 0xD83D, 0x42, 0xD83D, 0xDE00]})
    assert got.text == "A\ufffdB😀"
    assert got.model_dump_json() == '{"text":"A\ufffdB😀"}'


async def test_out_of_range_integers_are_refused_not_wrapped(stub_editor: MonoHost) -> None:
    """2^32 + 64 used to wrap to 64 in the editor's int casts: a 64-pixel picture, reported as asked."""
    from agentsdk_unity import UnityToolkit

    async with UnityBridge(stub_editor.settings()) as bridge:
        cases = [
            ({"width": 2**32 + 64}, "'width' must be between 1 and 4096 (got 4294967360)"),
            ({"height": 0}, "'height' must be between 1 and 4096 (got 0)"),
            ({"width": 1e300}, "'width' must be an integer"),
        ]
        for args, message in cases:
            with pytest.raises(UnityBridgeError) as refused:
                await bridge.request("camera.screenshot", args)  # type: ignore[arg-type]
            assert refused.value.code == "invalid_args" and message in refused.value.message
        with pytest.raises(UnityBridgeError) as limit:
            await bridge.request("gameobject.find", {"query": "Main Camera", "limit": 2**32 + 1})
        assert limit.value.code == "invalid_args"
        found = await bridge.request("gameobject.find", {"query": "Main Camera", "limit": 5})
        assert isinstance(found, dict) and len(found["matches"]) == 1  # type: ignore[arg-type]
    # The tools refuse such values before they leave: the model gets a validation error to fix.
    async with UnityToolkit(settings=stub_editor.settings(), groups="all") as unity:
        tools = {t.name: t for t in unity.tools()}
        wide = await tools["screenshot"].call({"width": 5000}, ctx=None)
        assert wide.is_error and "4096" in wide.text
        nan = await tools["set_transform"].call(
            {"path": "Main Camera", "position": [math.nan, 0, 0]}, ctx=None
        )
        assert nan.is_error and "finite" in nan.text.lower()
