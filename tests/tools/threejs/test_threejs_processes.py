"""No Chromium process survives close, cancel or a crash of the agent (checked by pid)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import anyio
import pytest
from agentsdk.sandbox import pid_alive
from agentsdk_threejs import RendererError, RendererPool, ThreeJSToolkit
from agentsdk_threejs._browser import DEFAULT_LAUNCH_ARGS, command_line, descendant_pids

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def wait_gone(pids: list[int], seconds: float = 5.0) -> list[int]:
    """The pids still alive after waiting up to ``seconds``."""
    deadline = time.monotonic() + seconds
    alive = [pid for pid in pids if pid_alive(pid)]
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = [pid for pid in alive if pid_alive(pid)]
    return alive


def chromium_descendants() -> list[int]:
    return [pid for pid in descendant_pids(os.getpid()) if "chrom" in command_line(pid)]


async def test_close_leaves_no_browser_process() -> None:
    async with RendererPool(pages=2) as pool:
        pids = pool.browser_pids()
        assert len(pids) >= 3  # browser, zygote(s), GPU/renderer processes
        assert all("chrom" in command_line(pid) for pid in pids)
        await pool.render(
            "scene.add(new THREE.Mesh(new THREE.BoxGeometry(), new THREE.MeshNormalMaterial()));"
        )
        pids = pool.browser_pids()
    assert wait_gone(pids, 1.0) == []
    assert chromium_descendants() == []


async def test_toolkit_close_leaves_no_browser_process() -> None:
    toolkit = ThreeJSToolkit(groups=["code"])
    async with toolkit:
        [render] = [t for t in toolkit.tools() if t.name == "render_scene"]
        outcome = await render.call({"code": "scene.add(new THREE.AxesHelper(2));"})
        assert not outcome.is_error, outcome.text
        pids = toolkit.pool.browser_pids()
        assert pids
    assert wait_gone(pids, 1.0) == []
    await toolkit.close()  # idempotent


async def test_cancel_during_a_hung_render_leaves_no_browser_process() -> None:
    pids: list[int] = []
    rendering = anyio.Event()

    async def hung_render() -> None:
        async with RendererPool(pages=1, timeout=60) as pool:
            pids.extend(pool.browser_pids())
            rendering.set()
            await pool.render("while (true) {}")

    async with anyio.create_task_group() as group:
        group.start_soon(hung_render)
        await rendering.wait()
        await anyio.sleep(1)
        group.cancel_scope.cancel()
    assert pids and wait_gone(pids, 1.0) == []
    assert chromium_descendants() == []


AGENT_SCRIPT = """
import asyncio, os, signal
from agentsdk_threejs import RendererPool

async def main():
    pool = RendererPool(pages=2)
    await pool.start()
    await pool.render("scene.add(new THREE.Mesh(new THREE.BoxGeometry(), new THREE.MeshNormalMaterial()));")
    print(" ".join(map(str, pool.browser_pids())), flush=True)
    await asyncio.sleep(60)

asyncio.run(main())
"""


@pytest.mark.parametrize(
    "kill_group", [False, True], ids=["agent-killed", "agent-and-driver-killed"]
)
def test_agent_crash_leaves_no_browser_process(kill_group: bool) -> None:
    agent = subprocess.Popen(
        [sys.executable, "-c", AGENT_SCRIPT],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        pids = [int(pid) for pid in agent.stdout.readline().split()] if agent.stdout else []
        assert pids, "the agent process did not start a browser"
        assert all(pid_alive(pid) for pid in pids)
        if kill_group:  # SIGKILL the agent and Playwright's driver together
            os.killpg(agent.pid, 9)
        else:
            agent.kill()
        agent.wait(5)
        assert wait_gone(pids, 5.0) == []
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()


async def test_missing_webgl_and_refused_software_rendering_are_clear_errors() -> None:
    pool = RendererPool(pages=1, launch_args=[*DEFAULT_LAUNCH_ARGS, "--disable-3d-apis"])
    with pytest.raises(RendererError, match=r"no WebGL here .*Error creating WebGL context"):
        await pool.start()
    assert chromium_descendants() == []
    strict = RendererPool(pages=1, allow_software=False)
    with pytest.raises(RendererError, match=r"software rasteriser .*SwiftShader"):
        await strict.start()
    assert chromium_descendants() == []


async def test_two_pools_in_one_process_only_close_their_own_browser() -> None:
    async with RendererPool(pages=1) as first:
        async with RendererPool(pages=1) as second:
            first_pids, second_pids = first.browser_pids(), second.browser_pids()
            assert first_pids and second_pids and not set(first_pids) & set(second_pids)
        assert wait_gone(second_pids, 1.0) == []
        assert all(pid_alive(pid) for pid in first_pids)
        result = await first.render(
            "scene.add(new THREE.Mesh(new THREE.BoxGeometry(), new THREE.MeshNormalMaterial()));"
        )
        assert result.report.ok and first.browser_restarts == 0
    assert wait_gone(first_pids, 1.0) == []
