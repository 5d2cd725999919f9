"""BlenderWorker against real bpy: handshake, warm calls, atomic commands, crashes, hangs, cleanup."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from agentsdk_blender import (
    BlenderError,
    BlenderWorker,
    CommandFailed,
    ProtocolMismatchError,
    SceneLostError,
)
from agentsdk_blender.framing import PROTOCOL_VERSION
from agentsdk_blender.protocol import (
    AddModifierArgs,
    CreatePrimitiveArgs,
    DeleteArgs,
    ExecutePythonArgs,
    NoArgs,
    ObjectInfo,
    PingResult,
    ResetResult,
    SceneInfo,
    SceneInfoArgs,
    ScriptOutput,
    SetTransformArgs,
)
from agentsdk_blender.worker import WorkerRestartedError, check_hello

pytestmark = pytest.mark.anyio


async def _scene(worker: BlenderWorker) -> dict[str, ObjectInfo]:
    info = await worker.call("scene_info", SceneInfoArgs(), SceneInfo)
    return {o.name: o for o in info.objects}


async def _fresh_cube(worker: BlenderWorker) -> ObjectInfo:
    await worker.call("reset", NoArgs(), ResetResult)
    args = CreatePrimitiveArgs(kind="cube", name="Crate", location=(1.0, 2.0, 0.5))
    made = await worker.call("create_primitive", args, ObjectInfo)
    assert made.size_read == "size 2 read as edge 2 (dimensions 2 x 2 x 2)"
    return made.model_copy(update={"size_read": None})  # as scene_info lists it


async def test_handshake_and_warm_calls(worker: BlenderWorker) -> None:
    assert worker.hello is not None
    assert worker.hello.protocol_version == PROTOCOL_VERSION
    assert worker.hello.blender_version.startswith("5.")
    first = await worker.call("ping", None, PingResult)
    second = await worker.call("ping", None, PingResult)
    assert first.pid == second.pid == worker.pid
    assert first.background is True


# 1: an add-on before rest_on; 2: one that renames a taken name to Crate.001;
# 3: one whose look_at takes only points and delete only names; 4: one whose size is one number
@pytest.mark.parametrize("other", [PROTOCOL_VERSION + 1, 1, 2, 3, 4])
def test_other_protocol_version_is_refused(other: int) -> None:
    hello = {
        "hello": "agentsdk-blender",
        "protocol_version": other,
        "blender_version": "5.0.1",
        "pid": 1,
        "background": True,
    }
    with pytest.raises(ProtocolMismatchError, match=f"speaks protocol {other},") as caught:
        check_hello(hello, "the Blender worker")
    assert "agentsdk_blender.addon_zip" in str(caught.value)


async def test_unknown_object_is_a_clear_error(worker: BlenderWorker) -> None:
    await _fresh_cube(worker)
    with pytest.raises(CommandFailed, match="no object named Ghost"):
        await worker.call("delete", DeleteArgs(names=["Ghost"]), ObjectInfo)


async def test_failing_delete_leaves_scene_unchanged(worker: BlenderWorker) -> None:
    cube = await _fresh_cube(worker)
    # "Crate" is deleted first, then "Missing" fails: the whole command must be undone.
    with pytest.raises(CommandFailed) as failed:
        await worker.call("delete", DeleteArgs(names=["Crate", "Missing"]), ObjectInfo)
    assert failed.value.failure.rolled_back
    assert "restored" in str(failed.value)
    assert (await _scene(worker))["Crate"] == cube


async def test_failing_boolean_leaves_no_half_made_modifier(worker: BlenderWorker) -> None:
    await _fresh_cube(worker)
    args = AddModifierArgs(name="Crate", kind="boolean", target="Cutter")
    with pytest.raises(CommandFailed, match=r"no object named Cutter .*create_primitive"):
        await worker.call("add_modifier", args, ObjectInfo)
    assert (await _scene(worker))["Crate"].modifiers == []


async def test_script_exception_rolls_back_and_returns_output(worker: BlenderWorker) -> None:
    await _fresh_cube(worker)
    code = "print('removing')\nbpy.data.objects.remove(bpy.data.objects['Crate'])\n1 / 0\n"
    with pytest.raises(CommandFailed) as failed:
        await worker.call("execute_python", ExecutePythonArgs(code=code), ScriptOutput)
    details = failed.value.failure.details
    assert details is not None
    assert details["stdout"] == "removing\n"
    assert details["exception"] == "ZeroDivisionError: division by zero (line 3)"
    assert "Crate" in await _scene(worker)


async def test_endless_loop_stopped_by_cpu_limit_keeps_scene(worker: BlenderWorker) -> None:
    await _fresh_cube(worker)
    pid = worker.pid
    args = ExecutePythonArgs(code="while True:\n    pass\n", cpu_seconds=1)
    with pytest.raises(CommandFailed, match="CpuLimitExceeded"):
        await worker.call("execute_python", args, ScriptOutput)
    assert worker.pid == pid
    assert "Crate" in await _scene(worker)


async def test_memory_limit(worker: BlenderWorker) -> None:
    args = ExecutePythonArgs(code="block = bytearray(8 * 1024**3)\n", memory_bytes=256 * 1024**2)
    with pytest.raises(CommandFailed, match="MemoryError"):
        await worker.call("execute_python", args, ScriptOutput)
    ok = await worker.call("execute_python", ExecutePythonArgs(code="print(2 + 2)"), ScriptOutput)
    assert ok.stdout == "4\n"


async def test_crash_mid_command_restarts_with_the_scene_restored(
    worker: BlenderWorker, group_members: Callable[[int], list[int]]
) -> None:
    cube = await _fresh_cube(worker)
    old_pid = worker.pid
    assert old_pid is not None
    code = "bpy.data.objects.remove(bpy.data.objects['Crate'])\nimport os\nos._exit(3)\n"
    with pytest.raises(WorkerRestartedError, match=r"exit code 3.*restored from the last save"):
        await worker.call("execute_python", ExecutePythonArgs(code=code), ScriptOutput)
    assert worker.pid not in (None, old_pid)
    assert group_members(old_pid) == []
    assert await _scene(worker) == {"Crate": cube}  # as before the command, not half-done


async def test_worker_killed_while_idle_comes_back_with_its_scene(worker: BlenderWorker) -> None:
    cube = await _fresh_cube(worker)
    moved = await worker.call(
        "set_transform", SetTransformArgs(name="Crate", location=(4.0, 0.0, 0.0)), ObjectInfo
    )
    assert moved.location != cube.location
    old_pid = worker.pid
    assert old_pid is not None
    os.killpg(old_pid, signal.SIGKILL)  # e.g. the OOM killer, between two tool calls
    await _wait_dead(worker)
    assert await _scene(worker) == {"Crate": moved}
    assert worker.pid != old_pid
    notice = worker.take_notice()
    assert notice is not None
    assert "exit code -9" in notice and "restored from the last save" in notice
    assert worker.take_notice() is None  # said once


async def test_unrestorable_save_is_a_scene_lost_error(worker: BlenderWorker) -> None:
    await _fresh_cube(worker)
    saved = worker.saved_scene
    assert saved is not None and saved.is_file()
    pid = worker.pid
    assert pid is not None
    os.killpg(pid, signal.SIGKILL)
    await _wait_dead(worker)
    saved.write_bytes(b"not a blend file")  # the save was damaged (disk trouble, a bad copy)
    with pytest.raises(SceneLostError, match=r"could not be restored.*now empty"):
        await _scene(worker)
    assert await _scene(worker) == {}  # never silently on a stale or empty scene
    assert worker.take_notice() is None


async def _wait_dead(worker: BlenderWorker) -> None:
    process = worker._process
    assert process is not None
    await process.wait(timeout=10)


@pytest.mark.slow
async def test_hang_times_out_and_restarts(
    worker: BlenderWorker, group_members: Callable[[int], list[int]]
) -> None:
    cube = await _fresh_cube(worker)
    old_pid = worker.pid
    assert old_pid is not None
    code = "import time\ntime.sleep(600)\n"
    with pytest.raises(WorkerRestartedError, match=r"did not finish within 2 s.*restored"):
        await worker.call("execute_python", ExecutePythonArgs(code=code), ScriptOutput, timeout=2)
    assert group_members(old_pid) == []
    assert (await worker.call("ping", None, PingResult)).pid == worker.pid != old_pid
    assert await _scene(worker) == {"Crate": cube}


@pytest.mark.slow
async def test_cancel_and_close_leave_no_process(group_members: Callable[[int], list[int]]) -> None:
    worker = BlenderWorker()
    await worker.start()
    first_pid = worker.pid
    assert first_pid is not None
    code = "import time\ntime.sleep(600)\n"
    with anyio.move_on_after(1):
        await worker.call("execute_python", ExecutePythonArgs(code=code), ScriptOutput)
    assert group_members(first_pid) == []
    second = await worker.call("ping", None, PingResult)
    assert second.pid != first_pid
    await worker.close()
    await worker.close()  # idempotent
    assert group_members(second.pid) == []
    assert worker.pid is None


async def test_missing_blender_binary_is_a_clear_error(tmp_path: Path) -> None:
    worker = BlenderWorker(blender_binary=str(tmp_path / "no-such-blender"))
    with pytest.raises(BlenderError, match=r"cannot start Blender .*no-such-blender"):
        await worker.start()
    assert worker.pid is None
    assert worker.saved_scene is None  # no folder left behind for a worker that never ran
