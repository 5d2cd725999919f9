"""The runtime bridge on a real running Godot 3 game."""

from __future__ import annotations

import json
import socket
import struct
import time

import anyio
import pytest
from agentsdk.sandbox import pid_alive
from agentsdk_godot import (
    PROTOCOL_VERSION,
    BridgeError,
    Constructor,
    GameSession,
    GodotEngine,
    GodotProject,
)

MOVER = """\
extends MeshInstance

export var speed = 2.0

func _process(delta):
\tif Input.is_action_pressed("ui_right"):
\t\ttranslation.x += speed * delta
"""


def game_project(project: GodotProject) -> None:
    scene = project.new_scene("Main", "Spatial")
    scene.add_node("Box", "MeshInstance").properties["mesh"] = scene.add_sub_resource(
        "CubeMesh", {}
    )
    cam = scene.add_node("Cam", "Camera")
    cam.properties["transform"] = Constructor("Transform", (1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 5))
    project.write_text("res://mover.gd", MOVER)
    scene.attach_script("Box", "res://mover.gd")
    project.write_scene("res://main.tscn", scene)
    project.main_scene = "res://main.tscn"


def raw_hello(port: int, token: str, protocol: int = PROTOCOL_VERSION) -> dict[str, object]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        body = json.dumps({"op": "hello", "token": token, "protocol": protocol}).encode()
        sock.sendall(struct.pack(">I", len(body)) + body)
        size = struct.unpack(">I", sock.recv(4))[0]
        reply: dict[str, object] = json.loads(sock.recv(size))
        sock.settimeout(5)
        # after a refusal the game hangs up
        reply["closed"] = sock.recv(1) == b""
        return reply


@pytest.mark.slow
@pytest.mark.anyio
async def test_bridge_serves_a_running_game(engine: GodotEngine, project: GodotProject) -> None:
    game_project(project)
    settings_before = (project.path / "project.godot").read_bytes()
    game = GameSession(project, engine, window=False)
    async with game:
        # the autoload was only there while the game started
        assert (project.path / "project.godot").read_bytes() == settings_before
        assert not (project.path / "addons").exists()
        assert game.handshake is not None and game.handshake.protocol == PROTOCOL_VERSION

        refused = await anyio.to_thread.run_sync(raw_hello, game.port, "wrong-token")
        assert refused["ok"] is False and refused["error"] == "bad token" and refused["closed"]
        future = await anyio.to_thread.run_sync(raw_hello, game.port, game.token, 99)
        assert future["ok"] is False and "protocol 99 not supported" in str(future["error"])

        tree = await game.tree()
        assert (tree.name, [c.name for c in tree.children]) == ("Main", ["Box", "Cam"])
        box = tree.find("Box")
        assert (
            box is not None and box.script == "res://mover.gd" and box.properties["speed"] == "2.0"
        )

        assert await game.set("Box", "translation", "Vector3( 0, 1, 0 )") == Constructor(
            "Vector3", (0, 1, 0)
        )
        await game.input("ui_right", True)
        await anyio.sleep(0.6)
        await game.input("ui_right", False)
        moved = await game.get("Box", "translation")
        assert isinstance(moved, Constructor) and moved.args[1:] == (1, 0)
        assert 0.4 < float(moved.args[0]) < 3.0  # speed 2 for ~0.6 s

        assert await game.call("Box", "get_name") == '"Box"'
        pid = game.pid
        assert pid is not None and pid_alive(pid)
    assert not pid_alive(pid)
    assert (project.path / "project.godot").read_bytes() == settings_before


@pytest.mark.anyio
async def test_failed_start_leaves_no_game_and_a_clean_project(
    engine: GodotEngine, project: GodotProject
) -> None:
    game_project(project)
    settings_before = (project.path / "project.godot").read_bytes()
    game = GameSession(project, engine, window=False, start_timeout=0.01)
    with pytest.raises(BridgeError, match="did not start its bridge"):
        await game.start()
    assert not game.alive
    assert (project.path / "project.godot").read_bytes() == settings_before
    assert not (project.path / "addons").exists()


def rss_kb(pid: int) -> int:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


def dropped_after(sock: socket.socket, payload: bytes, chunk: int = 1 << 16) -> float:
    """Send `payload` (stopping when the game hangs up); seconds until the game hung up."""
    started = time.monotonic()
    sock.settimeout(20)
    try:
        for start in range(0, len(payload), chunk):
            sock.sendall(payload[start : start + chunk])
        while sock.recv(65536):  # an error frame may come before the close
            pass
    except (BrokenPipeError, ConnectionResetError):
        pass
    return time.monotonic() - started


@pytest.mark.slow
@pytest.mark.anyio
async def test_bridge_drops_clients_that_do_not_say_hello(
    engine: GodotEngine, project: GodotProject
) -> None:
    game_project(project)
    async with GameSession(project, engine, window=False, hello_timeout=1.5) as game:
        assert game.pid is not None
        await game.request("ping")
        before = rss_kb(game.pid)

        def attacks() -> dict[str, float]:
            seconds: dict[str, float] = {}
            with socket.create_connection(("127.0.0.1", game.port), timeout=10) as http:
                request = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                seconds["http"] = dropped_after(http, request)
            with socket.create_connection(("127.0.0.1", game.port), timeout=10) as huge:
                # a length header of ~2 GB, then 64 MB of body
                flood = struct.pack(">I", 0x7FFFFFF0) + b"x" * (64 << 20)
                seconds["huge"] = dropped_after(huge, flood)
            with socket.create_connection(("127.0.0.1", game.port), timeout=10) as trickle:
                # under the size cap, but never finishing the hello: dropped at the timeout
                seconds["silent"] = dropped_after(trickle, struct.pack(">I", 100) + b"{")
            return seconds

        seconds = await anyio.to_thread.run_sync(attacks)
        grown_mb = (rss_kb(game.pid) - before) / 1024
        assert seconds["http"] < 5 and seconds["huge"] < 5, seconds
        assert 1.0 < seconds["silent"] < 8, seconds
        assert grown_mb < 8, f"the game grew by {grown_mb:.1f} MB"
        assert await game.request("ping") == "pong"  # the real client is still served


CHATTY = """\
extends Node

func _process(_delta):
\tfor i in range(200):
\t\tprint("spam spam spam spam spam spam spam spam spam spam spam spam spam spam spam ", i)
"""


@pytest.mark.anyio
async def test_a_chatty_game_does_not_grow_the_agent(
    engine: GodotEngine, project: GodotProject
) -> None:
    project.write_text("res://chatty.gd", CHATTY)
    scene = project.new_scene("Main", "Node")
    scene.attach_script(".", "res://chatty.gd")
    project.write_scene("res://main.tscn", scene)
    project.main_scene = "res://main.tscn"
    async with GameSession(project, engine, window=False) as game:
        deadline = time.monotonic() + 60
        while "earlier characters dropped" not in game.output():  # more than the cap arrived
            assert time.monotonic() < deadline, len(game.output())
            await anyio.sleep(0.2)
        assert len(game.output()) < 2_100_000
        assert await game.request("ping") == "pong"
