"""Lifecycle and faults of our MCP client against real server processes: a run
cancelled mid-call, a server killed mid-call, one that never answers initialize,
one that writes garbage to stdout, 100 agents on one connection, and many
open/close cycles. Each ends with a clear error or success, no hung task, no
"cancel scope in a different task" error, and no server process left (by pid).

``AGENTSDK_MCP_CYCLES=1000`` runs the long open/close test (default 30).
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from agentsdk.mcp import MCPConnectionError, MCPToolkit
from agentsdk.sandbox import pid_alive
from agentsdk.testing import FunctionModel, ScriptedModel

from agentsdk import Agent, ToolCallPart

from .helpers import SERVERS, StderrLines, cmdline, descendants, open_fds, servers_running

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leftovers")]

DYNAMIC = str(SERVERS / "dynamic.py")


def _dynamic(log: StderrLines | None = None, **options: object) -> MCPToolkit:
    stderr = log.writer if log else None
    return MCPToolkit.stdio(sys.executable, [DYNAMIC], resources=False, stderr=stderr, **options)  # type: ignore[arg-type]


@pytest.fixture
def log() -> Iterator[StderrLines]:
    """The dynamic server's stderr, line by line."""
    lines = StderrLines()
    yield lines
    lines.close()


async def test_cancelling_a_run_mid_call_cancels_the_call_on_the_server(
    tmp_path: Path, log: StderrLines
) -> None:
    toolkit = _dynamic(log)
    async with toolkit:  # the connection outlives the run: the server must see the cancel
        [pid_tool] = [t for t in toolkit.tools() if t.name == "pid"]
        server_pid = int((await pid_tool.call({})).text)
        agent = Agent(
            ScriptedModel([ToolCallPart(name="slow", arguments={"seconds": 600}), "never"]),
            tools=[toolkit],
            artifacts_dir=tmp_path / "runs",
        )
        async with anyio.create_task_group() as tg:
            tg.start_soon(agent.run, "Wait.")
            await log.wait_for("started")
            tg.cancel_scope.cancel()
        await log.wait_for("cancelled")  # the server's handler was cancelled
        # and the same connection still serves calls
        assert int((await pid_tool.call({})).text) == server_pid
        assert "finished" not in log.lines
    assert not pid_alive(server_pid)


async def test_cancelling_a_run_that_owns_the_toolkit_stops_the_server(
    tmp_path: Path, log: StderrLines
) -> None:
    toolkit = _dynamic(log)
    agent = Agent(
        ScriptedModel([ToolCallPart(name="slow", arguments={"seconds": 600}), "never"]),
        tools=[toolkit],
        artifacts_dir=tmp_path / "runs",
    )
    started = time.perf_counter()
    with anyio.move_on_after(60) as scope:
        async with anyio.create_task_group() as tg:
            tg.start_soon(agent.run, "Wait.")
            await log.wait_for("started")
            servers = servers_running(DYNAMIC)
            assert len(servers) == 1
            tg.cancel_scope.cancel()
    assert not scope.cancelled_caught
    assert time.perf_counter() - started < 30
    assert all(not pid_alive(p) for p in servers)


async def test_killing_the_server_mid_call_is_a_tool_error_and_it_restarts(
    tmp_path: Path, log: StderrLines
) -> None:
    toolkit = _dynamic(log)

    async def kill_when_started() -> None:
        await log.wait_for("started")
        [victim] = servers_running(DYNAMIC)
        os.kill(victim, signal.SIGKILL)

    model = ScriptedModel(
        [
            ToolCallPart(name="slow", arguments={"seconds": 600}),
            ToolCallPart(name="echo", arguments={"message": "back again"}),
            "It crashed, then came back.",
        ]
    )
    agent = Agent(model, tools=[toolkit], artifacts_dir=tmp_path / "runs")
    async with anyio.create_task_group() as tg:
        tg.start_soon(kill_when_started)
        with anyio.fail_after(120):
            result = await agent.run("Wait, then echo.")
    crashed, echoed = [r for m in result.messages for r in m.tool_results]
    assert crashed.is_error and "closed the connection during the call to 'slow'" in crashed.text
    assert "started again on the next call" in crashed.text
    assert not echoed.is_error and echoed.text == "back again"
    assert result.output == "It crashed, then came back."


async def test_a_server_that_dies_on_a_call_without_restart(tmp_path: Path) -> None:
    toolkit = _dynamic(restart=False)
    async with toolkit:
        tools = {t.name: t for t in toolkit.tools()}
        died = await tools["die"].call({})
        assert died.is_error and "closed the connection" in died.text
        after = await tools["echo"].call({"message": "hi"})
        assert after.is_error and "has gone away" in after.text


async def test_a_server_that_never_answers_initialize(tmp_path: Path) -> None:
    toolkit = MCPToolkit.stdio(sys.executable, [str(SERVERS / "silent.py")], connect_timeout=3)
    started = time.perf_counter()
    with pytest.raises(
        MCPConnectionError, match="did not answer the initialize handshake within 3 s"
    ):
        async with toolkit:
            pass
    assert time.perf_counter() - started < 20
    assert servers_running("silent.py") == set()
    # through an agent: the same clear error, before the model is asked anything
    model = ScriptedModel(["unused"])
    with pytest.raises(MCPConnectionError, match="silent"):
        await Agent(model, tools=[toolkit], artifacts_dir=tmp_path).run("Hi")
    assert model.requests == []


async def test_a_server_that_writes_garbage_to_stdout(tmp_path: Path) -> None:
    only_garbage = MCPToolkit.stdio(
        sys.executable, [str(SERVERS / "garbage.py")], connect_timeout=3
    )
    with pytest.raises(MCPConnectionError) as caught:
        async with only_garbage:
            pass
    message = str(caught.value)
    assert "not JSON-RPC" in message and "Starting awesome server" in message
    assert "must log to stderr" in message

    # garbage first, then a real server: the junk is skipped and the tools work
    recovering = MCPToolkit.stdio(sys.executable, [str(SERVERS / "garbage.py"), "then-serve"])
    async with recovering:
        [echo] = [t for t in recovering.tools() if t.name == "echo"]
        assert (await echo.call({"message": "still here"})).text == "still here"
    assert servers_running("garbage.py") == set()


async def test_a_command_that_does_not_exist(tmp_path: Path) -> None:
    toolkit = MCPToolkit.stdio(str(tmp_path / "no-such-server"), connect_timeout=5)
    with pytest.raises(
        MCPConnectionError, match="could not connect to MCP server 'no-such-server'"
    ):
        await toolkit.start()
    await toolkit.close()


async def test_a_hundred_agents_share_one_connection(tmp_path: Path) -> None:
    toolkit = _dynamic()

    def script(i: int) -> FunctionModel:
        def answer(request: object) -> object:
            messages = request.messages  # type: ignore[attr-defined]
            if messages[-1].role == "tool":
                return f"agent {i}: {messages[-1].parts[0].text}"
            return [
                ToolCallPart(name="echo", arguments={"message": f"hello {i}"}),
                ToolCallPart(name="pid", arguments={}),
            ]

        return FunctionModel(answer)

    async with toolkit:
        [server] = servers_running(DYNAMIC)
        outputs: dict[int, str] = {}
        results: dict[int, list[str]] = {}

        async def one(i: int) -> None:
            agent = Agent(script(i), tools=[toolkit], artifacts_dir=tmp_path / "runs")
            result = await agent.run(f"Agent {i}")
            outputs[i] = result.output
            results[i] = [r.text for m in result.messages for r in m.tool_results]

        with anyio.fail_after(180):
            async with anyio.create_task_group() as tg:
                for i in range(100):
                    tg.start_soon(one, i)
        assert servers_running(DYNAMIC) == {server}  # one server for all of them
    assert len(outputs) == 100
    for i in range(100):
        assert results[i] == [f"hello {i}", str(server)]
        assert outputs[i] == f"agent {i}: hello {i}"
    assert not pid_alive(server)


CYCLES = int(os.environ.get("AGENTSDK_MCP_CYCLES", "30"))


@pytest.mark.timeout(120 + CYCLES * 10)  # a long opt-in run is not a hang
async def test_open_close_cycles_leave_nothing_behind(everything: list[str]) -> None:
    """Open, list, (sometimes) call, close: a real server-everything process each time."""
    cycles = CYCLES
    marker = everything[1]
    gc.collect()
    fds_before, tasks_before = open_fds(), len(asyncio.all_tasks())
    started = time.perf_counter()
    seen_pids: list[int] = []
    for i in range(cycles):
        toolkit = MCPToolkit.stdio(everything[0], everything[1:], label=f"everything-{i}")
        async with toolkit:
            if i % 100 == 99:  # progress of a long run, for its log
                print(f"{i + 1} cycles, {time.perf_counter() - started:.0f} s", flush=True)
            if i % 10 == 0:
                [server] = servers_running(marker)
                seen_pids.append(server)
                [echo] = [t for t in toolkit.tools() if t.name == "echo"]
                assert (await echo.call({"message": f"cycle {i}"})).text == f"Echo: cycle {i}"
    elapsed = time.perf_counter() - started
    gc.collect()
    assert servers_running(marker) == set()
    # each sampled cycle had its own server, now gone (a pid may have been reused since by
    # an unrelated process, over a long run: then it is not running our server)
    assert len(seen_pids) == (cycles + 9) // 10
    assert all(not pid_alive(p) or marker not in cmdline(p) for p in seen_pids)
    assert open_fds() <= fds_before + 2  # no pipe or temp file left open
    assert len(asyncio.all_tasks()) <= tasks_before
    print(
        f"\n{cycles} open/close cycles in {elapsed:.1f} s ({elapsed / cycles * 1000:.0f} ms each)"
    )


def test_a_killed_agent_process_leaves_no_server(everything: list[str]) -> None:
    """SIGKILL the process that holds the connection: the server sees its stdin close and exits."""
    import subprocess

    script = (
        "import anyio, sys\n"
        "from agentsdk.mcp import MCPToolkit\n"
        "async def main():\n"
        "    async with MCPToolkit.stdio(sys.argv[1], sys.argv[2:]):\n"
        "        print('ready', flush=True)\n"
        "        await anyio.sleep_forever()\n"
        "anyio.run(main)\n"
    )
    agent = subprocess.Popen(
        [sys.executable, "-c", script, *everything], stdout=subprocess.PIPE, text=True
    )
    try:
        assert agent.stdout is not None and agent.stdout.readline().strip() == "ready"
        servers = {p for p in descendants(agent.pid) if everything[1] in cmdline(p)}
        assert len(servers) == 1
        agent.kill()
        agent.wait(30)
        deadline = time.monotonic() + 30
        while any(pid_alive(p) for p in servers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(pid_alive(p) for p in servers), "the server outlived its agent"
    finally:
        agent.kill()
        agent.wait(30)
