"""One small MCP tool call, side by side: in-process, through our MCP server over stdio and
streamable HTTP, and the same server called by the official SDK's client (the floor), by
agentsdk's ``MCPToolkit``, by openai-agents' ``MCPServerStdio``/``MCPServerStreamableHttp``
and by pydantic-ai's ``MCPToolset``.

Run from the repository root::

    uv run python benchmarks/mcp.py            # --quick for a tiny run

It reuses ``.venv-bench`` (built by ``benchmarks/overhead.py`` from
``benchmarks/requirements-peers.txt``) and re-runs itself inside it. Each client runs in its
own child process, in interleaved rounds (so the machine's load hits every row alike); the
server is ``agentsdk.mcp.create_server`` offering ``add(a, b)``. Per call it records the wall
time of the round trip (median) and the client process's CPU time (``time.process_time``:
the server's work is in another process). The *added* cost of a client is its CPU per call
minus the official client's on the same transport and protocol version. Writes
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
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# This file is named mcp.py: its folder must not shadow the `mcp` package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
RESULTS = HERE / "results" / "mcp.json"
CLIENTS = ["sdk", "sdk-legacy", "agentsdk", "agentsdk-legacy", "openai-agents", "pydantic-ai"]


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


# --- the clients (each in its own child process) -----------------------------------------


async def _measure(call: Any, calls: int, warmup: int) -> dict[str, float]:
    for i in range(warmup):
        await call(i)
    walls: list[float] = []
    cpu0 = time.process_time()
    for i in range(calls):
        t0 = time.perf_counter()
        await call(i)
        walls.append(time.perf_counter() - t0)
    cpu = time.process_time() - cpu0
    walls.sort()
    return {
        "wall_us_median": statistics.median(walls) * 1e6,
        "wall_us_p90": walls[int(len(walls) * 0.9)] * 1e6,
        "cpu_us_per_call": cpu / calls * 1e6,
    }


def _check(value: Any, i: int) -> None:
    if str(i + 2) not in str(value):
        raise AssertionError(f"add({i}, 2) gave {value!r}")


async def client_run(
    kind: str, transport: str, url: str, calls: int, warmup: int
) -> dict[str, Any]:
    """Connect with one client, make the calls, return the numbers."""
    stdio = _server_command("stdio")
    if kind == "inprocess":
        from agentsdk import tool

        @tool
        async def add(a: int, b: int) -> int:
            """Add two integers."""
            return a + b

        async def call_inprocess(i: int) -> None:
            _check((await add.call({"a": i, "b": 2})).text, i)

        return await _measure(call_inprocess, calls, warmup)

    if kind.startswith("sdk"):
        from mcp import Client, StdioServerParameters

        target: Any = (
            StdioServerParameters(command=stdio[0], args=stdio[1:]) if transport == "stdio" else url
        )
        mode = "legacy" if kind == "sdk-legacy" else "auto"
        async with Client(target, mode=mode) as client:
            await client.list_tools()

            async def call_sdk(i: int) -> None:
                result = await client.call_tool("add", {"a": i, "b": 2})
                _check(result.content[0].text, i)  # type: ignore[union-attr]

            numbers = await _measure(call_sdk, calls, warmup)
            return {**numbers, "protocol": client.protocol_version}

    if kind.startswith("agentsdk"):
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
                outcome = await add_tool.call({"a": i, "b": 2})
                _check(outcome.text, i)

            numbers = await _measure(call_agentsdk, calls, warmup)
            assert toolkit._conn is not None and toolkit._conn.client is not None
            return {**numbers, "protocol": toolkit._conn.client.protocol_version}

    if kind == "openai-agents":
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

            numbers = await _measure(call_openai, calls, warmup)
            session = server.session
            version = getattr(session, "protocol_version", None) if session is not None else None
            return {**numbers, "protocol": version}

    if kind == "pydantic-ai":
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
            tools = await toolset.get_tools(ctx)
            add_def = tools["add"]

            async def call_pydantic(i: int) -> None:
                # what a pydantic-ai run does: validate the arguments, then call through the toolset
                args = add_def.args_validator.validate_python({"a": i, "b": 2})
                _check(await toolset.call_tool("add", args, ctx, add_def), i)

            numbers = await _measure(call_pydantic, calls, warmup)
            version = getattr(toolset.client.session, "protocol_version", None)
            return {**numbers, "protocol": version}

    raise SystemExit(f"unknown client {kind!r}")


# --- the parent: interleaved rounds, then a table ------------------------------------------


def _child(kind: str, transport: str, url: str, calls: int, warmup: int) -> dict[str, Any]:
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--client",
        kind,
        "--transport",
        transport,
    ]
    cmd += ["--url", url, "--calls", str(calls), "--warmup", str(warmup)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"{kind}/{transport} failed:\n{done.stderr[-3000:]}")
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
    calls, warmup, rounds = (200, 20, 1) if args.quick else (args.calls, 100, args.rounds)
    runs: dict[str, list[dict[str, Any]]] = {}
    http, url = _start_http()
    try:
        for r in range(rounds):
            for transport in ("stdio", "http"):
                for kind in ["inprocess", *CLIENTS] if transport == "stdio" else CLIENTS:
                    key = f"{kind}/{transport}" if kind != "inprocess" else "inprocess"
                    result = _child(kind, transport, url, calls, warmup)
                    runs.setdefault(key, []).append(result)
                    print(f"round {r + 1}/{rounds} {key}: {result}", file=sys.stderr, flush=True)
    finally:
        os.killpg(http.pid, 15)
        http.wait(30)

    rows: dict[str, dict[str, Any]] = {}
    for key, results in runs.items():
        rows[key] = {
            field: statistics.median(r[field] for r in results)
            for field in ("wall_us_median", "wall_us_p90", "cpu_us_per_call")
        }
        rows[key]["protocol"] = results[0].get("protocol")
    for transport in ("stdio", "http"):
        for kind in CLIENTS:
            floor_kind = (
                "sdk-legacy"
                if rows[f"{kind}/{transport}"]["protocol"] != rows[f"sdk/{transport}"]["protocol"]
                else "sdk"
            )
            floor = rows[f"{floor_kind}/{transport}"]["cpu_us_per_call"]
            rows[f"{kind}/{transport}"]["added_cpu_us"] = (
                rows[f"{kind}/{transport}"]["cpu_us_per_call"] - floor
            )
            rows[f"{kind}/{transport}"]["floor"] = f"{floor_kind}/{transport}"
    goals = {}
    for transport in ("stdio", "http"):
        ours = max(
            rows[f"agentsdk/{transport}"]["added_cpu_us"],
            rows[f"agentsdk-legacy/{transport}"]["added_cpu_us"],
        )
        peer = min(
            rows[f"openai-agents/{transport}"]["added_cpu_us"],
            rows[f"pydantic-ai/{transport}"]["added_cpu_us"],
        )
        goals[transport] = {
            "ours_added_us": ours,
            "faster_peer_added_us": peer,
            "met": ours <= peer / 3,
        }

    print(
        "\n| client | transport | protocol | round trip median (µs) | p90 (µs) | client CPU/call (µs) | added CPU vs official client (µs) |"
    )
    print("|---|---|---|---:|---:|---:|---:|")
    for key, row in rows.items():
        kind, _, transport = key.partition("/")
        added = f"{row['added_cpu_us']:.0f}" if "added_cpu_us" in row else "—"
        print(
            f"| {kind} | {transport or 'in-process'} | {row['protocol'] or '—'} | {row['wall_us_median']:.0f} "
            f"| {row['wall_us_p90']:.0f} | {row['cpu_us_per_call']:.0f} | {added} |"
        )
    for transport, goal in goals.items():
        print(
            f"goal over {transport}: ours adds {goal['ours_added_us']:.0f} µs, the faster peer "
            f"{goal['faster_peer_added_us']:.0f} µs -> {'met' if goal['met'] else 'NOT met'} (<= 1/3)"
        )
    if not args.quick:
        RESULTS.write_text(
            json.dumps(
                {
                    "calls_per_run": calls,
                    "rounds": rounds,
                    "machine": f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}",
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
    parser.add_argument("--client", help=argparse.SUPPRESS)
    parser.add_argument("--transport", default="stdio", help=argparse.SUPPRESS)
    parser.add_argument("--url", default="", help=argparse.SUPPRESS)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=100, help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="a tiny run (200 calls, 1 round)")
    parser.add_argument("--no-bench-venv", action="store_true", help="run in this interpreter")
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.port)
        return
    if args.client:
        import anyio

        result = anyio.run(
            client_run, args.client, args.transport, args.url, args.calls, args.warmup
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
