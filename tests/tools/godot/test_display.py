"""Windowed runs leave nothing in the temp directory: no Xvfb lock or socket, no xvfb-run folder,
no frame folder, also when the run is killed at its timeout (real Godot 3 + Xvfb)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from agentsdk_godot import Constructor, GameSession, GodotEngine, GodotProject, HarnessJob


def x_files(display: int) -> list[str]:
    """Xvfb's lock and socket of one display (their folders are compiled in, not $TMPDIR)."""
    paths = (f"/tmp/.X{display}-lock", f"/tmp/.X11-unix/X{display}")
    return [p for p in paths if os.path.exists(p)]


def red_box_scene(project: GodotProject) -> None:
    scene = project.new_scene("Shot", "Spatial")
    mesh = scene.add_sub_resource("CubeMesh", {})
    scene.add_node("Box", "MeshInstance").properties["mesh"] = mesh
    cam = scene.add_node("Cam", "Camera")
    cam.properties["transform"] = Constructor("Transform", (1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 3))
    project.write_scene("res://shot.tscn", scene)


@pytest.fixture
def private_engine(tmp_path: Path):  # type: ignore[no-untyped-def]
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    engine = GodotEngine(temp_dir=scratch)
    yield engine, scratch
    engine.close()


def leftovers(engine: GodotEngine, scratch: Path) -> list[str]:
    """What is in the scratch folder besides the engine's own user data (kept while it lives)."""
    return sorted(p.name for p in scratch.iterdir() if p != engine.user_data_dir)


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize("killed", [False, True], ids=["finishes", "killed-at-timeout"])
async def test_windowed_runs_leave_no_files(
    private_engine: tuple[GodotEngine, Path], project: GodotProject, killed: bool
) -> None:
    engine, scratch = private_engine
    red_box_scene(project)
    if killed:  # the engine hangs in _ready: the whole group is SIGKILLed at the timeout
        project.write_text(
            "res://hang.gd", "extends Spatial\n\nfunc _ready():\n\twhile true:\n\t\tpass\n"
        )
        scene = project.read_scene("res://shot.tscn")
        scene.attach_script(".", "res://hang.gd")
        project.write_scene("res://shot.tscn", scene)
    run = await engine.run_harness(
        project.path,
        HarnessJob(scene="res://shot.tscn", frames=2, capture_frames=[2]),
        window=True,
        width=64,
        height=64,
        timeout=8 if killed else 60,
    )
    assert run.timed_out is killed, run.stderr[-2000:]
    assert bool(run.images) is not killed  # the frame comes back as PNG bytes
    assert leftovers(engine, scratch) == []
    assert run.display is not None and x_files(run.display) == []


@pytest.mark.slow
@pytest.mark.anyio
async def test_windowed_live_game_leaves_no_files(
    private_engine: tuple[GodotEngine, Path], project: GodotProject
) -> None:
    engine, scratch = private_engine
    red_box_scene(project)
    project.main_scene = "res://shot.tscn"
    async with GameSession(project, engine, window=True, width=64, height=64) as game:
        png = await game.screenshot()
        assert png.startswith(b"\x89PNG")
        display = game.display_number
        assert display is not None and x_files(display) != []
    assert x_files(display) == []
    assert leftovers(engine, scratch) == []


def x11_setup(display: int, cookie: bytes | None) -> int:
    """Open an X11 connection; the first byte of the server's answer: 1 = accepted, 0 = refused."""
    import socket
    import struct

    name = b"MIT-MAGIC-COOKIE-1" if cookie else b""
    data = cookie or b""

    def pad(b: bytes) -> bytes:
        return b + b"\0" * (-len(b) % 4)

    request = struct.pack("<cxHHHHxx", b"l", 11, 0, len(name), len(data)) + pad(name) + pad(data)
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(10)
        sock.connect(f"/tmp/.X11-unix/X{display}")
        sock.sendall(request)
        return sock.recv(1)[0]


@pytest.mark.anyio
async def test_display_takes_only_its_cookie_and_cleans_up_after_sigkill(tmp_path: Path) -> None:
    import signal

    from agentsdk_godot.display import VirtualDisplay

    display = VirtualDisplay(64, 64, temp_dir=tmp_path)
    await display.start()
    number, folder = display.number, Path(display.env["XAUTHORITY"]).parent
    assert number is not None and display._proc is not None
    cookie = Path(display.env["XAUTHORITY"]).read_bytes()[-16:]
    assert x11_setup(number, cookie) == 1
    assert x11_setup(number, None) == 0  # a client without the cookie is refused
    os.kill(display._proc.pid, signal.SIGKILL)  # dies without removing its lock and socket
    display._proc.popen.wait()
    assert x_files(number) != []  # what a SIGKILLed server leaves
    await display.stop()
    assert x_files(number) == [] and not folder.exists()
