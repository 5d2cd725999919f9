"""Tables and the machine description for the overhead benchmark."""

from __future__ import annotations

import os
import platform
from importlib import metadata
from typing import Any

PACKAGES = [
    "agentsdk",
    "agentsdk-openai",
    "openai-agents",
    "pydantic-ai-slim",
    "openai",
    "httpx",
    "httpx2",
    "httpx-aiohttp",
    "aiohttp",
    "pydantic",
    "anyio",
]


def machine() -> dict[str, Any]:
    """What this run ran on: CPU, cores, memory, OS, Python, load and package versions."""
    cpu = "unknown"
    with open("/proc/cpuinfo") as cpuinfo:
        for line in cpuinfo:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as meminfo:
        mem_kb = int(meminfo.readline().split()[1])
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": round(mem_kb / 2**20, 1),
        "os": platform.platform(),
        "python": platform.python_version(),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "packages": versions,
    }


def _cell(value: Any, digits: int = 1) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def markdown_table(header: list[str], rows: list[list[Any]]) -> str:
    """A GitHub-flavoured markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def inprocess_table(results: dict[str, dict[str, Any]]) -> str:
    """Framework overhead with each framework's own fake model."""
    base = (results.get("agentsdk") or {}).get("cpu_us_per_turn")
    rows = []
    for name, r in results.items():
        if "error" in r:
            rows.append([name, r["error"][:60], None, None, None, None, None])
            continue
        ratio = round(r["cpu_us_per_turn"] / base, 2) if base else None
        rows.append([
            name, r["cpu_us_per_turn"], ratio, r["turn_first_us"], r["turn_last_us"],
            r["last_over_first"], r["peak_rss_mb"],
        ])  # fmt: skip
    header = [
        "in-process", "CPU µs/turn", "× agentsdk", "early turn µs",
        "turn 40 µs", "turn 40 / early", "peak RSS MB",
    ]  # fmt: skip
    return markdown_table(header, rows)


def _concurrency_keys(results: dict[str, dict[str, Any]]) -> list[str]:
    keys: list[str] = []
    for r in results.values():
        keys += [
            k for k in r if k.startswith("c") and k[1:].isdigit() and k != "c1" and k not in keys
        ]
    return sorted(keys, key=lambda k: int(k[1:]))


def http_table(results: dict[str, dict[str, Any]], title: str) -> str:
    """Per-turn time at c=1 and throughput at each concurrency over the fake server."""
    keys = _concurrency_keys(results)
    header = [title, "ms/turn c=1", "stream ms/turn", "client CPU ms/turn"]
    for key in keys:
        at = key.replace("c", "c=")
        header += [f"runs/s {at}", f"calls/s {at}", f"calls per CPU-s {at}"]
    header += ["errors", "peak RSS MB", "KB per concurrent run"]
    rows = []
    for name, r in results.items():
        if "error" in r:
            rows.append([name, r["error"][:60]] + [None] * (len(header) - 2))
            continue
        c1, stream = r.get("c1", {}), r.get("c1_stream", {})
        row: list[Any] = [name, c1.get("ms_per_turn"), stream.get("ms_per_turn")]
        row.append(c1.get("cpu_ms_per_turn"))
        errors = 0
        for key in keys:
            phase = r.get(key, {})
            row += [phase.get("runs_per_s"), phase.get("calls_per_s"), phase.get("calls_per_cpu_s")]
            errors += phase.get("errors", 0)
        row += [errors, r.get("peak_rss_mb"), r.get("kb_per_concurrent_run")]
        rows.append(row)
    return markdown_table(header, rows)


def machine_line(info: dict[str, Any]) -> str:
    """One sentence describing the machine and the load on it."""
    load = ", ".join(str(x) for x in info["load_average_at_start"])
    end = ", ".join(str(x) for x in info.get("load_average_at_end", []))
    return (
        f"{info['cpu']}, {info['cores']} cores, {info['memory_gb']} GB, {info['os']}, "
        f"Python {info['python']}; load average (1, 5, 15 min) at start {load}"
        + (f", at end {end}." if end else ".")
    )
