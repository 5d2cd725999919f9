"""The live-Blender bridge: the add-on's own code (from the installable zip) runs inside a
bpy process and is driven over 127.0.0.1 with a token."""

from __future__ import annotations

import io
import json
import os
import socket
import stat
import struct
import sys
import zipfile
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from agentsdk.sandbox import ManagedProcess, start_process
from agentsdk_blender import BlenderBridge, BlenderToolkit, BridgeAuthError, CommandFailed
from agentsdk_blender.addon_zip import ADDON_PACKAGE, build_addon_zip
from agentsdk_blender.framing import PROTOCOL_VERSION, encode_frame, read_frame
from agentsdk_blender.protocol import (
    CreatePrimitiveArgs,
    DeleteArgs,
    DeleteResult,
    ObjectInfo,
    SceneInfo,
    SceneInfoArgs,
)
from PIL import Image as PILImage

pytestmark = pytest.mark.anyio
TOKEN = "test-token-7f3a"

DIRECT = """
import sys
sys.path.insert(0, sys.argv[1])
import bpy
bpy.ops.wm.read_factory_settings(use_empty=True)
import {package} as addon
server = addon.BridgeServer(sys.argv[2], port=0)
print("BRIDGE_PORT", server.port, flush=True)
server.serve_forever()
"""

# register() as Blender calls it when the add-on is enabled; the loop stands in for
# Blender's timer scheduler, which only runs with a window manager.
REGISTERED = """
import sys, time
sys.path.insert(0, sys.argv[1])
import bpy
bpy.ops.wm.read_factory_settings(use_empty=True)
import {package} as addon
addon.register()
print("BRIDGE_PORT", addon._server.port, flush=True)
while True:
    addon._server.run_pending()
    time.sleep(0.02)
"""


@dataclass
class RunningBridge:
    process: ManagedProcess
    port: int
    connection_file: Path


async def _start(script: str, tmp: Path, env: dict[str, str]) -> RunningBridge:
    addon_dir = tmp / "addon"
    with zipfile.ZipFile(build_addon_zip(tmp / "bridge.zip")) as archive:
        archive.extractall(addon_dir)
    code = script.format(package=ADDON_PACKAGE)
    process = start_process(
        [sys.executable, "-c", code, str(addon_dir), TOKEN],
        env={"XDG_CACHE_HOME": str(tmp / "cache"), "XDG_RUNTIME_DIR": str(tmp), **env},
        stderr=None,
    )

    def wait_for_port() -> int:
        assert process.popen.stdout is not None
        for raw in iter(process.popen.stdout.readline, b""):
            if raw.startswith(b"BRIDGE_PORT"):
                return int(raw.split()[1])
        raise AssertionError("the bridge process exited before listening")

    with anyio.fail_after(120):
        port = await anyio.to_thread.run_sync(wait_for_port, abandon_on_cancel=True)
    return RunningBridge(process, port, tmp / "agentsdk-blender" / "bridge.json")


@pytest.fixture(scope="module")
async def direct(
    anyio_backend: str, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[RunningBridge]:
    """The add-on serving directly on the main thread, as in ``blender -b``."""
    running = await _start(DIRECT, tmp_path_factory.mktemp("direct"), {})
    yield running
    running.process.kill()


async def _scene(port: int) -> list[ObjectInfo]:
    async with BlenderBridge(port=port, token=TOKEN) as bridge:
        return (await bridge.call("scene_info", SceneInfoArgs(), SceneInfo)).objects


def _raw_exchange(port: int, payloads: list[bytes]) -> list[dict[str, object] | None]:
    """Send raw bytes, then collect frames until the server hangs up (or goes quiet)."""
    replies: list[dict[str, object] | None] = []
    with socket.create_connection(("127.0.0.1", port), timeout=15) as conn:
        for payload in payloads:
            conn.sendall(payload)
        conn.shutdown(socket.SHUT_WR)
        reader = conn.makefile("rb")
        while (frame := read_frame(reader.read)) is not None:
            replies.append(frame)
    return replies


@pytest.mark.slow
async def test_toolkit_drives_live_blender_and_renders(direct: RunningBridge) -> None:
    async with BlenderToolkit(BlenderBridge(port=direct.port, token=TOKEN)) as kit:
        tools = {t.name: t for t in kit.tools()}
        made = await tools["create_primitive"].call(
            {"kind": "cube", "name": "Live", "location": [0, 0, 0]}
        )
        assert not made.is_error, made.text
        await tools["set_material"].call({"name": "Live", "base_color": [0.1, 0.2, 0.9, 1.0]})
        rendered = await tools["render"].call({"views": ["front"], "resolution": [80, 60]})
        assert not rendered.is_error, rendered.text
        picture = PILImage.open(io.BytesIO(rendered.images[0].data)).convert("RGB")
        r, g, b = picture.getpixel((40, 30))  # type: ignore[misc]
        assert b > 2 * r and b > g, (r, g, b)
    assert [o.name for o in await _scene(direct.port)] == ["Live"]


async def test_wrong_token_is_refused_without_touching_the_scene(direct: RunningBridge) -> None:
    before = await _scene(direct.port)
    with pytest.raises(BridgeAuthError, match="wrong or missing token"):
        async with BlenderBridge(port=direct.port, token="not-the-token") as bridge:
            await bridge.call("delete", DeleteArgs(names=["Live"]), ObjectInfo)
    # a command sent without authenticating first is never run
    request = encode_frame({"id": 1, "command": "reset", "args": {}})
    replies = _raw_exchange(direct.port, [request])
    assert replies == [
        {
            "ok": False,
            "error": {
                "type": "AuthError",
                "message": "wrong or missing token",
                "rolled_back": False,
                "details": None,
            },
        }
    ]
    assert await _scene(direct.port) == before


@pytest.mark.parametrize(
    ("after_auth", "error_type"),
    [
        (struct.pack(">I", 0xFFFFFFF0), "FrameError"),  # absurd length
        (struct.pack(">I", 9) + b"{not json", "FrameError"),
        (
            encode_frame({"id": 3, "command": "reset", "args": {}})[:4]
            + b"[1, 2, 3]   "
            + b"x" * 100,
            "FrameError",
        ),
        (encode_frame({"id": 4, "args": {}}), "InvalidRequest"),  # no command
    ],
)
async def test_malformed_frames_are_refused_without_touching_the_scene(
    direct: RunningBridge, after_auth: bytes, error_type: str
) -> None:
    before = await _scene(direct.port)
    auth = encode_frame({"token": TOKEN, "protocol_version": PROTOCOL_VERSION})
    replies = await anyio.to_thread.run_sync(_raw_exchange, direct.port, [auth, after_auth])
    assert replies[0] is not None and replies[0]["hello"] == "agentsdk-blender"
    assert replies[1] is not None and replies[1]["ok"] is False
    assert replies[1]["error"]["type"] == error_type  # type: ignore[index]
    assert await _scene(direct.port) == before


async def test_failed_command_over_bridge_is_rolled_back(direct: RunningBridge) -> None:
    before = await _scene(direct.port)
    async with BlenderBridge(port=direct.port, token=TOKEN) as bridge:
        with pytest.raises(CommandFailed, match=r"no object named Missing .*restored"):
            await bridge.call("delete", DeleteArgs(names=[before[0].name, "Missing"]), ObjectInfo)
    assert await _scene(direct.port) == before


async def test_the_addon_reads_list_sizes_and_refuses_one_unchecked(direct: RunningBridge) -> None:
    """The add-on has no pydantic of its own: its engine reads (and refuses) sizes itself."""
    before = await _scene(direct.port)
    async with BlenderBridge(port=direct.port, token=TOKEN) as bridge:
        made = await bridge.call(
            "create_primitive",
            CreatePrimitiveArgs(kind="cylinder", name="Pillar", size=[0.5, 3]),
            ObjectInfo,
        )
        assert made.dimensions == pytest.approx((1, 1, 3), abs=1e-5)
        assert made.size_read == "size [0.5, 3] read as radius 0.5, height 3 (dimensions 1 x 1 x 3)"
        unchecked = CreatePrimitiveArgs.model_construct(kind="cube", name="Slab", size=[2.0, 1.0])
        with pytest.raises(CommandFailed, match=r"a cube's size is 1 number \(its edge\) or 3"):
            await bridge.call("create_primitive", unchecked, ObjectInfo)
        await bridge.call("delete", DeleteArgs(names=["Pillar"]), DeleteResult)
    assert await _scene(direct.port) == before


@pytest.mark.slow
async def test_registered_addon_runs_commands_from_the_main_thread_queue(
    tmp_path: Path, group_members: Callable[[int], list[int]]
) -> None:
    running = await _start(
        REGISTERED, tmp_path, {"AGENTSDK_BLENDER_TOKEN": TOKEN, "AGENTSDK_BLENDER_PORT": "0"}
    )
    try:
        details = json.loads(running.connection_file.read_text())
        assert details == {"host": "127.0.0.1", "port": running.port, "token": TOKEN}
        assert stat.S_IMODE(os.stat(running.connection_file).st_mode) == 0o600
        bridge = BlenderBridge.from_connection_file(running.connection_file)
        assert TOKEN not in repr(bridge)
        async with bridge:
            made = await bridge.call(
                "create_primitive", CreatePrimitiveArgs(kind="torus", name="Ring"), ObjectInfo
            )
            assert made.name == "Ring" and made.triangles > 100
    finally:
        running.process.kill()
    assert group_members(running.process.pid) == []
