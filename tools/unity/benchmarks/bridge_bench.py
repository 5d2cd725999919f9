"""Measures the Unity bridge client against the real bridge core under mono.

    uv run python tools/unity/benchmarks/bridge_bench.py

Prints a table and writes tools/unity/benchmarks/results/bridge_bench.json. The server is the
engine-independent C# core compiled with mcs and run by mono (the tests' console host), so these
numbers are for the protocol and the client, not for Unity's main thread or its domain reloads.
"""

from __future__ import annotations

import json
import math
import random
import statistics
import struct
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "tools"))

from agentsdk_unity import UnityBridge, check_csharp  # noqa: E402
from agentsdk_unity.stub_editor import StubEditor, cached_build  # noqa: E402
from unity.monohost import MonoHost, build_host  # noqa: E402

RESULTS = Path(__file__).parent / "results" / "bridge_bench.json"


async def timed(fn: Callable[[], Awaitable[object]], repeat: int) -> list[float]:
    """Wall time of each call in milliseconds."""
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        await fn()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


async def measure(host: MonoHost) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []

    def add(name: str, samples: list[float], note: str = "") -> None:
        rows.append(
            {
                "measure": name,
                "median_ms": round(statistics.median(samples), 2),
                "p90_ms": round(sorted(samples)[int(len(samples) * 0.9) - 1], 2)
                if len(samples) > 1
                else None,
                "n": len(samples),
                "note": note,
            }
        )

    async def connect_once() -> None:
        async with UnityBridge(host.settings()) as bridge:
            assert bridge.welcome is not None

    add("connect + handshake", await timed(connect_once, 20))
    async with UnityBridge(host.settings()) as bridge:
        add("echo round trip (small)", await timed(lambda: bridge.request("echo", {"x": 1}), 300))
        blob_1m = "x" * 1_000_000
        add(
            "echo 1 MB both ways",
            await timed(lambda: bridge.request("echo", {"blob": blob_1m}), 10),
        )
        add("receive 8 MB", await timed(lambda: bridge.request("large", {"bytes": 8_000_000}), 5))

        async def one_echo() -> None:
            await bridge.request("echo", {"x": 1})

        async def burst() -> None:
            async with anyio.create_task_group() as group:
                for _ in range(64):
                    group.start_soon(one_echo)

        samples = await timed(burst, 10)
        add(
            "64 concurrent echos",
            samples,
            f"{64 / (statistics.median(samples) / 1000):.0f} requests/s",
        )

        rng = random.Random(7)
        doubles = []
        while len(doubles) < 5000:
            (value,) = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))
            if math.isfinite(value):
                doubles.append(value)
        add(
            "echo 5000 random doubles",
            await timed(lambda: bridge.request("echo", {"values": doubles}), 5),
            "exact parse + shortest round-trip format in C#",
        )

        async def reload_cycle() -> None:
            await bridge.request("host.reload_after", {"value": 1, "seconds": 0.5})

        add(
            "response lost in a 0.5 s reload",
            await timed(reload_cycle, 3),
            "fetched from the disk journal",
        )
    source = "using UnityEngine;\npublic class S : MonoBehaviour { void Update() { } }\n"
    add("check_csharp, C# 7 script", await timed(lambda: check_csharp(source), 5), "mcs + grammar")
    newer = source.replace("void Update() { }", "int F(int x) => x switch { 1 => 2, _ => 3 };")
    add("check_csharp, C# 8 script", await timed(lambda: check_csharp(newer), 5), "mcs + grammar")

    async def editor_cycle() -> None:
        with tempfile.TemporaryDirectory() as project:
            editor = StubEditor(Path(project) / "P")
            await editor.start()
            await editor.stop()

    await anyio.to_thread.run_sync(cached_build)
    add(
        "stub editor start + stop", await timed(editor_cycle, 5), "one reset of the suite's toolkit"
    )
    return rows


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        exe = build_host(Path(tmp))
        host = MonoHost(exe, Path(tmp) / "bridge")
        try:
            rows = anyio.run(measure, host)
        finally:
            host.stop()
    print(f"{'measure':36} {'median ms':>10} {'p90 ms':>8} {'n':>4}  note")
    for row in rows:
        p90 = "" if row["p90_ms"] is None else f"{row['p90_ms']:.2f}"
        print(
            f"{row['measure']:36} {row['median_ms']:>10.2f} {p90:>8} {row['n']:>4}  {row['note']}"
        )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"rows": rows, "machine": "2 cores, mono 6.8"}, indent=2) + "\n")
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
