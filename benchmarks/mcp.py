"""One small MCP tool call, side by side: in-process, through our MCP server over stdio and
streamable HTTP, and the same server called by the official SDK's client (the floor), by
agentsdk's ``MCPToolkit``, by openai-agents' ``MCPServerStdio``/``MCPServerStreamableHttp``
and by pydantic-ai's ``MCPToolset``.

Run from the repository root::

    uv run python benchmarks/mcp.py            # --quick for a tiny run

It reuses ``.venv-bench`` (built by ``benchmarks/overhead.py`` from
``benchmarks/requirements-peers.txt``) and re-runs itself inside it. Each client runs in its
All clients run in one process per transport, each connected to its own server process (HTTP:
one shared server), and call in turn, one call at a time, so every client's samples see the
same machine load. The server is ``agentsdk.mcp.create_server`` offering ``add(a, b)``. Per
call it records the wall time of the round trip and the client's CPU time
(``time.process_time`` across the call: the servers are other processes). The *added* cost of
a client is the median, over paired samples, of its CPU per call minus that of the official
SDK's ``ClientSession.call_tool`` made on the same connection right after it. Writes
``benchmarks/results/mcp.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# This file is named mcp.py: its folder must not shadow the `mcp` package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
RESULTS = HERE / "results" / "mcp.json"
CLIENTS = ["sdk", "agentsdk", "agentsdk-legacy", "openai-agents", "pydantic-ai"]


# --- the server ---------------------------------------------------------------------------


def serve(transport: str, port: int) -> None:
    """Our MCP server with one small tool, over stdio or HTTP."""
    import anyio
    from agentsdk.mcp import serve_http, serve_stdio

    from agentsdk import tool

    @tool
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    if transport == "stdio":
        anyio.run(lambda: serve_stdio([add], name="bench"))
    else:
        anyio.run(lambda: serve_http([add], name="bench", port=port))


def _server_command(transport: str, port: int = 0) -> list[str]:
    return [
        sys.executable,
        str(Path(__file__).resolve()),
        "--serve",
        transport,
        "--port",
        str(port),
    ]


# --- the clients: all in one process, called in turn --------------------------------------

Call = Callable[[int], Awaitable[None]]


def _raw(session: Any) -> Call:
    """The official SDK's ``ClientSession.call_tool`` on a framework's own connection."""

    async def call_raw(i: int) -> None:
        result = await session.call_tool("add", {"a": i, "b": 2})
        _check(result.content[0].text, i)

    return call_raw


def _check(value: Any, i: int) -> None:
    if str(i + 2) not in str(value):
        raise AssertionError(f"add({i}, 2) gave {value!r}")


@asynccontextmanager
async def _client(
    kind: str, transport: str, url: str
) -> AsyncIterator[tuple[Call, Call | None, str | None]]:
    """A connected client of one kind: its call(i) -> add(i, 2) the way that framework's
    agent makes a tool call; the same call as the official SDK's ``ClientSession.call_tool``
    on the same connection (the floor the framework adds to); the protocol version."""
    stdio = _server_command("stdio")
    if kind == "inprocess":
        from agentsdk import tool

        @tool
        async def add(a: int, b: int) -> int:
            """Add two integers."""
            return a + b

        async def call_inprocess(i: int) -> None:
            _check((await add.call({"a": i, "b": 2})).text, i)

        yield call_inprocess, None, None

    elif kind.startswith("sdk"):
        from mcp import Client, StdioServerParameters

        target: Any = (
            StdioServerParameters(command=stdio[0], args=stdio[1:]) if transport == "stdio" else url
        )
        async with Client(target, mode="legacy" if kind == "sdk-legacy" else "auto") as client:
            await client.list_tools()

            async def call_sdk(i: int) -> None:
                result = await client.call_tool("add", {"a": i, "b": 2})
                _check(result.content[0].text, i)  # type: ignore[union-attr]

            yield call_sdk, _raw(client.session), client.protocol_version

    elif kind.startswith("agentsdk"):
        from agentsdk.mcp import MCPToolkit

        protocol = "legacy" if kind == "agentsdk-legacy" else "auto"
        toolkit = (
            MCPToolkit.stdio(stdio[0], stdio[1:], protocol=protocol)
            if transport == "stdio"
            else MCPToolkit.http(url, protocol=protocol)
        )
        async with toolkit:
            [add_tool] = toolkit.tools()

            async def call_agentsdk(i: int) -> None:
                # what an agentsdk run does: Tool.call (schema check, call, result parts)
                _check((await add_tool.call({"a": i, "b": 2})).text, i)

            assert toolkit._conn is not None and toolkit._conn.client is not None
            client = toolkit._conn.client
            yield call_agentsdk, _raw(client.session), client.protocol_version

    elif kind == "openai-agents":
        from agents import RunContextWrapper
        from agents.mcp import MCPServerStdio, MCPServerStreamableHttp, MCPUtil

        server: Any = (
            MCPServerStdio({"command": stdio[0], "args": stdio[1:]}, cache_tools_list=True)
            if transport == "stdio"
            else MCPServerStreamableHttp({"url": url}, cache_tools_list=True)
        )
        async with server:
            [listed] = await server.list_tools()
            context = RunContextWrapper(context=None)

            async def call_openai(i: int) -> None:
                # what an openai-agents run does for an MCP tool call
                out = await MCPUtil.invoke_mcp_tool(
                    server, listed, context, json.dumps({"a": i, "b": 2})
                )
                _check(out, i)

            session = server.session
            yield call_openai, _raw(session), getattr(session, "protocol_version", None)

    elif kind == "pydantic-ai":
        from fastmcp.client import Client as FastMCPClient
        from fastmcp.client.transports import StdioTransport, StreamableHttpTransport
        from pydantic_ai import RunContext
        from pydantic_ai.mcp import MCPToolset
        from pydantic_ai.models.test import TestModel
        from pydantic_ai.usage import RunUsage

        transport_obj: Any = (
            StdioTransport(stdio[0], stdio[1:])
            if transport == "stdio"
            else StreamableHttpTransport(url)
        )
        toolset = MCPToolset(FastMCPClient(transport_obj))
        async with toolset:
            ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())
            add_def = (await toolset.get_tools(ctx))["add"]

            async def call_pydantic(i: int) -> None:
                # what a pydantic-ai run does: validate the arguments, call through the toolset
                args = add_def.args_validator.validate_python({"a": i, "b": 2})
                _check(await toolset.call_tool("add", args, ctx, add_def), i)

            session = toolset.client.session
            yield call_pydantic, _raw(session), getattr(session, "protocol_version", None)
    else:
        raise SystemExit(f"unknown client {kind!r}")


async def measure_transport(
    transport: str, url: str, kinds: list[str], calls: int, warmup: int
) -> dict[str, Any]:
    """Every client connected at once (each to its own server over stdio); the calls go
    round-robin, one at a time, the framework's path and the raw SDK call on its connection
    alternating, so all samples see the same machine load. A call's client CPU is
    ``time.process_time`` across it (the servers are other processes)."""
    async with AsyncExitStack() as stack:
        callers: dict[str, Call] = {}
        protocols: dict[str, str | None] = {}
        for kind in kinds:
            call, raw, protocols[kind] = await stack.enter_async_context(
                _client(kind, transport, url)
            )
            callers[kind] = call
            if raw is not None:
                callers[f"{kind}:raw"] = raw
        for i in range(warmup):
            for call in callers.values():
                await call(i)
        walls: dict[str, list[float]] = {k: [] for k in callers}
        cpus: dict[str, list[float]] = {k: [] for k in callers}
        for i in range(calls):
            for key, call in callers.items():
                c0, t0 = time.process_time(), time.perf_counter()
                await call(i)
                t1, c1 = time.perf_counter(), time.process_time()
                walls[key].append(t1 - t0)
                cpus[key].append(c1 - c0)
    out: dict[str, Any] = {}
    for kind in kinds:
        w = sorted(walls[kind])
        row: dict[str, Any] = {
            "protocol": protocols[kind],
            "wall_us_median": statistics.median(w) * 1e6,
            "wall_us_p90": w[int(len(w) * 0.9)] * 1e6,
            "cpu_us_median": statistics.median(cpus[kind]) * 1e6,
        }
        if f"{kind}:raw" in cpus:
            raw = cpus[f"{kind}:raw"]
            row["raw_cpu_us_median"] = statistics.median(raw) * 1e6
            # paired: each framework call against the raw call just after it, same connection
            row["added_cpu_us"] = statistics.median(
                (a - b) * 1e6 for a, b in zip(cpus[kind], raw, strict=True)
            )
        out[kind] = row
    return out


# --- the parent: one child per transport, then a table ------------------------------------


def _child(transport: str, url: str, calls: int, warmup: int, clients: list[str]) -> dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--measure", transport]
    cmd += ["--url", url, "--calls", str(calls), "--warmup", str(warmup), "--clients", *clients]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=3000)
    if done.returncode != 0:
        raise RuntimeError(f"{transport} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start_http() -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    proc = subprocess.Popen(
        _server_command("http", port), stderr=subprocess.PIPE, start_new_session=True
    )
    assert proc.stderr is not None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = proc.stderr.readline().decode()
        if "serving on " in line:
            return proc, line.rsplit("serving on ", 1)[1].strip()
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise RuntimeError("the HTTP server did not start")


def main_parent(args: argparse.Namespace) -> None:
    calls, warmup = (100, 10) if args.quick else (args.calls, 100)
    http, url = _start_http()
    try:
        rows: dict[str, dict[str, Any]] = {}
        for transport in ("stdio", "http"):
            started = time.perf_counter()
            measured = _child(transport, url, calls, warmup, args.clients)
            print(
                f"{transport}: {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True
            )
            for kind, row in measured.items():
                rows[kind if kind == "inprocess" else f"{kind}/{transport}"] = row
    finally:
        os.killpg(http.pid, 15)
        http.wait(30)

    goals = {}
    peers = [p for p in ("openai-agents", "pydantic-ai") if p in args.clients]
    ours_rows = [v for v in ("agentsdk", "agentsdk-legacy") if v in args.clients]
    for transport in ("stdio", "http") if peers and ours_rows else ():
        ours = max(rows[f"{v}/{transport}"]["added_cpu_us"] for v in ours_rows)
        peer = min(rows[f"{p}/{transport}"]["added_cpu_us"] for p in peers)
        goals[transport] = {
            "ours_added_us": ours,
            "faster_peer_added_us": peer,
            "met": ours <= peer / 3,
        }

    print(
        "\n| client | transport | protocol | round trip median (µs) | p90 (µs) "
        "| client CPU/call (µs) | the SDK's call on the same connection (µs) | added CPU (µs) |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for key, row in rows.items():
        kind, _, transport = key.partition("/")
        added = f"{row['added_cpu_us']:+.0f}" if "added_cpu_us" in row else "—"
        raw = f"{row['raw_cpu_us_median']:.0f}" if "raw_cpu_us_median" in row else "—"
        print(
            f"| {kind} | {transport or 'in-process'} | {row['protocol'] or '—'} | {row['wall_us_median']:.0f} "
            f"| {row['wall_us_p90']:.0f} | {row['cpu_us_median']:.0f} | {raw} | {added} |"
        )
    for transport, goal in goals.items():
        print(
            f"goal over {transport}: ours adds {goal['ours_added_us']:.0f} µs, the faster peer "
            f"{goal['faster_peer_added_us']:.0f} µs -> {'met' if goal['met'] else 'NOT met'} (<= 1/3)"
        )
    if not args.quick and args.clients == CLIENTS:
        RESULTS.write_text(
            json.dumps(
                {
                    "calls_per_client": calls,
                    "machine": f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end",
                    "rows": rows,
                    "goals": goals,
                },
                indent=2,
            )
            + "\n"
        )
        print(f"wrote {RESULTS.relative_to(ROOT)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--serve", choices=["stdio", "http"], help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--measure", choices=["stdio", "http"], help=argparse.SUPPRESS)
    parser.add_argument("--url", default="", help=argparse.SUPPRESS)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=100, help=argparse.SUPPRESS)
    parser.add_argument("--clients", nargs="+", choices=CLIENTS, default=CLIENTS)
    parser.add_argument("--quick", action="store_true", help="a tiny run (100 calls per client)")
    parser.add_argument("--no-bench-venv", action="store_true", help="run in this interpreter")
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.port)
        return
    if args.measure:
        import anyio

        kinds = ["inprocess", *args.clients] if args.measure == "stdio" else args.clients
        result = anyio.run(
            measure_transport, args.measure, args.url, kinds, args.calls, args.warmup
        )
        print(json.dumps(result))
        return
    if not args.no_bench_venv:
        import importlib.util

        spec = importlib.util.spec_from_file_location("overhead", HERE / "overhead.py")
        assert spec is not None and spec.loader is not None
        overhead = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(overhead)
        if not overhead.in_bench_venv():
            python = overhead.ensure_bench_venv()
            os.execv(str(python), [str(python), str(Path(__file__).resolve()), *sys.argv[1:]])
    main_parent(args)


if __name__ == "__main__":
    main()
