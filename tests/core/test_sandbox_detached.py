"""agentsdk.sandbox: processes that leave their process group (setsid, daemons) die with the run."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from agentsdk.sandbox import pid_alive, run_process, start_process

# `setsid` gives the sleeper a session and group of its own; the shell exits as soon as the
# sleeper runs (its name is "sleep" once setsid has exec'd it), so the sleeper is re-parented
# to init: neither the group kill nor the parent links reach it.
DAEMON = (
    "setsid sleep 300 > /dev/null 2>&1 < /dev/null & p=$!; "
    'while [ "$(cat /proc/$p/comm 2>/dev/null)" != sleep ]; do sleep 0.01; done; echo $p'
)


def wait_dead(pid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while pid_alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.anyio
async def test_run_process_kills_a_detached_daemon_and_returns_at_once() -> None:
    result = await run_process(["sh", "-c", DAEMON], timeout=30)
    assert result.ok and not result.timed_out and result.duration < 20
    assert wait_dead(int(result.stdout))


def test_managed_process_kill_reaches_a_child_in_its_own_session() -> None:
    # the child of the managed process calls setsid itself, as Godot's OS.execute does
    proc = start_process(["sh", "-c", DAEMON.replace("echo $p", "echo $p; sleep 300")])
    assert proc.popen.stdout is not None
    daemon = int(proc.popen.stdout.readline())
    assert pid_alive(daemon)
    proc.kill()
    assert wait_dead(daemon)


_AGENT = """
import sys, time
from agentsdk.sandbox import start_process
process = start_process(["sh", "-c", sys.argv[1] + "; sleep 300"])
print(process.popen.stdout.readline().decode().strip(), flush=True)
time.sleep(300)
"""


def test_a_detached_daemon_dies_with_a_killed_agent_process() -> None:
    agent = subprocess.Popen([sys.executable, "-c", _AGENT, DAEMON], stdout=subprocess.PIPE)
    try:
        assert agent.stdout is not None
        daemon = int(agent.stdout.readline())
        assert pid_alive(daemon)
        agent.kill()  # nothing in the agent runs after this: the warden has to find it
        agent.wait(timeout=20)
        assert wait_dead(daemon), f"daemon {daemon} outlived the SIGKILLed agent"
    finally:
        agent.kill()
        agent.wait()
