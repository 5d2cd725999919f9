"""agentsdk.sandbox with real child processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import anyio
import pytest
from agentsdk.sandbox import Limits, kill_process_group, run_process, start_process

pytestmark = pytest.mark.anyio


def gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] == "Z"
    except FileNotFoundError:
        return True


async def test_output_exit_code_and_working_directory(tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = await run_process(["bash", "-c", "pwd; echo oops >&2; exit 3"], cwd=tmp_path)
    assert result.returncode == 3 and not result.ok
    assert result.stdout.strip() == str(tmp_path) and result.stderr == "oops\n"


async def test_timeout_kills_the_whole_group() -> None:
    result = await run_process(["bash", "-c", "sleep 300 & echo $!; wait"], timeout=0.5)
    assert result.timed_out and result.returncode is None
    grandchild = int(result.stdout.strip())
    await anyio.sleep(0.1)
    assert gone(grandchild) and gone(result.pid)


async def test_cpu_and_memory_limits() -> None:
    spin = await run_process(
        ["python3", "-c", "while True: pass"], limits=Limits(cpu_seconds=1), timeout=20
    )
    assert spin.returncode == -signal.SIGKILL and spin.duration < 10
    hog = await run_process(
        ["python3", "-c", "x = bytearray(800 * 1024 * 1024)"],
        limits=Limits(memory_bytes=300 * 1024 * 1024),
        timeout=20,
    )
    assert hog.returncode != 0 and "MemoryError" in hog.stderr


async def test_scrubbed_environment() -> None:
    os.environ["AGENTSDK_TEST_SECRET_TOKEN"] = "s3cr3t-value"
    try:
        kept = await run_process(["env"])
        scrubbed = await run_process(["env"], inherit_env=False, env={"ONLY": "this"})
    finally:
        del os.environ["AGENTSDK_TEST_SECRET_TOKEN"]
    assert "s3cr3t-value" in kept.stdout
    assert "s3cr3t-value" not in scrubbed.stdout and "ONLY=this" in scrubbed.stdout


async def test_output_is_capped() -> None:
    result = await run_process(
        ["bash", "-c", "head -c 50000 /dev/zero | tr '\\0' a"], max_output=1000
    )
    assert len(result.stdout) == 1000 and result.stdout_truncated


async def test_missing_binary_is_a_clear_failure() -> None:
    result = await run_process(["definitely-not-installed-xyz"])
    assert result.returncode == 127 and "definitely-not-installed-xyz" in result.stderr


async def test_cancel_kills_the_child(tmp_path) -> None:  # type: ignore[no-untyped-def]
    marker = tmp_path / "child.pid"
    async with anyio.create_task_group() as group:
        group.start_soon(
            run_process,
            ["bash", "-c", f"echo $$ > {marker}.tmp; mv {marker}.tmp {marker}; exec sleep 300"],
        )
        with anyio.fail_after(20):
            while not marker.exists():  # noqa: ASYNC110 (a file from another process)
                await anyio.sleep(0.02)
        child = int(marker.read_text())  # the same pid after exec
        assert not gone(child)
        group.cancel_scope.cancel()
    assert gone(child)  # killed and reaped before the cancellation propagated


def test_managed_process_kill_is_idempotent_and_reaps() -> None:
    proc = start_process(["bash", "-c", "sleep 300 & sleep 300"])
    time.sleep(0.2)
    assert proc.alive
    proc.kill()
    proc.kill()
    assert not proc.alive and gone(proc.pid)
    kill_process_group(proc.pid)  # quiet when already gone


_AGENT = """
import subprocess, sys, time
import anyio
from agentsdk.sandbox import run_process, start_process

# A child that leaves a grandchild in its process group: a shell's background job.
SCRIPT = "sleep 300 & echo $! > {pidfile}; wait"
if sys.argv[1] == "start_process":
    process = start_process(["sh", "-c", SCRIPT.format(pidfile=sys.argv[2])])
    print(process.pid, flush=True)
else:
    async def main() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(run_process, ["sh", "-c", SCRIPT.format(pidfile=sys.argv[2])])
            await anyio.sleep(300)
    print("run_process", flush=True)
    anyio.run(main)
if sys.argv[3] == "exit":
    sys.stdin.readline()  # the test has seen the grandchild alive: exit now, normally
    sys.exit(0)
time.sleep(300)
"""


@pytest.mark.parametrize(
    ("how", "death"),
    [("start_process", "sigkill"), ("run_process", "sigkill"), ("start_process", "exit")],
)
def test_grandchildren_die_with_the_agent_process(tmp_path, how: str, death: str) -> None:  # type: ignore[no-untyped-def]
    # PR_SET_PDEATHSIG reaches the child only; the warden has to get the grandchild.
    marker = tmp_path / "grandchild.pid"
    agent = subprocess.Popen(
        [sys.executable, "-c", _AGENT, how, str(marker), death],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert agent.stdout is not None and agent.stdout.readline()
        deadline = time.monotonic() + 20
        while not (marker.exists() and marker.read_text().strip()):
            assert time.monotonic() < deadline, "the grandchild never started"
            time.sleep(0.05)
        grandchild = int(marker.read_text())
        assert not gone(grandchild)
        if death == "sigkill":
            agent.kill()  # nothing in the agent process runs after this
        else:  # the agent waited for this line, so it cannot exit before the check above
            assert agent.stdin is not None
            agent.stdin.write(b"exit\n")
            agent.stdin.flush()
        agent.wait(timeout=20)
        deadline = time.monotonic() + 10
        while not gone(grandchild):
            assert time.monotonic() < deadline, (
                f"grandchild {grandchild} outlived the agent process ({death})"
            )
            time.sleep(0.05)
    finally:
        agent.kill()
        agent.wait()


def test_pid_alive_tells_running_exited_and_zombie_apart() -> None:
    from agentsdk.sandbox import pid_alive

    assert pid_alive(os.getpid())
    child = subprocess.Popen(["true"])
    deadline = time.monotonic() + 10
    while pid_alive(child.pid):  # exited but not reaped yet: a zombie counts as exited
        assert time.monotonic() < deadline, "an exited child still counts as alive"
        time.sleep(0.02)
    assert os.path.exists(f"/proc/{child.pid}")  # still a zombie, not gone
    child.wait()
    assert not pid_alive(child.pid)


def test_a_detached_child_outlives_the_agent_process_and_still_dies_on_kill(tmp_path) -> None:  # type: ignore[no-untyped-def]
    agent = subprocess.run(
        [
            sys.executable,
            "-c",
            "from agentsdk.sandbox import start_process\n"
            "p = start_process(['sleep', '300'], detached=True)\n"
            "q = start_process(['sleep', '300'])\n"
            "print(p.pid, q.pid)\n",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    detached, attached = (int(word) for word in agent.stdout.split())
    deadline = time.monotonic() + 10
    while not gone(attached):  # the warden kills what was not detached
        assert time.monotonic() < deadline, "an ordinary child outlived the agent"
        time.sleep(0.05)
    time.sleep(1.5)  # the warden has had its look (it polls once a second)
    assert not gone(detached), "the detached child died with the agent"
    kill_process_group(detached)
    deadline = time.monotonic() + 10
    while not gone(detached):
        assert time.monotonic() < deadline, "kill_process_group missed the detached child"
        time.sleep(0.05)
