"""The built-in local models side by side: speed, a tool-call turn, memory, and the tiers.

1. Streams the same prompts to each built-in model in alternation (temperature 0, up to
   ``--max-tokens``): engine start, time to first token, decode tokens/s (medians).
2. A tool-call turn on each tool-capable model (the README quickstart's ``add``, tools
   constrained): seconds per turn, median of ``--runs``.
3. Memory: resident set of each engine's server process, with the 0.5B and 1.5B engines
   serving at the same time (one process per model), and one concurrent turn on each;
   the 0.5B server with 1, 2 and 4 parallel slots (``LocalEngine(parallel=N)``).
4. ``local:tiered`` on the quickstart: per-turn model, tier and seconds.

Prints tables and writes benchmarks/results/models.json.

    uv run --no-sync python benchmarks/models.py [--runs 3] [--max-tokens 128]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any

import anyio
from agentsdk.events import ModelRequestStarted, RunFinished
from agentsdk_openai import LocalEngine, connect
from agentsdk_openai.local import stop_all_engines

from agentsdk import (
    Agent,
    Message,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    StreamDelta,
    tool,
)

MODELS = {
    "smollm2-135m": "fast (chat only)",
    "qwen2.5-coder-0.5b": "default",
    "qwen2.5-coder-1.5b": "standard",
}
TOOL_MODELS = ["qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"]
PROMPTS = [
    "Explain in a short paragraph why the sky is blue.",
    "Write a short story opening about a lighthouse keeper.",
    "List five uses of a paperclip, one sentence each.",
]
QUESTION = "What is 1234.5 + 4321?"
INSTRUCTIONS = "Use the add tool for arithmetic, then answer in one sentence."
RESULTS = Path(__file__).parent / "results" / "models.json"


@tool
def add(a: float, b: float) -> float:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


def rss_mb(pid: int | None) -> float | None:
    """Resident memory of a process in MB (Linux /proc), None if it is gone."""
    if pid is None:
        return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


async def _stream_once(model_string: str, prompt: str, max_tokens: int) -> dict[str, float]:
    model = connect(model_string)
    settings = ModelSettings(temperature=0, max_tokens=max_tokens, allow_truncated=True)
    request = ModelRequest(messages=[Message.user(prompt)], settings=settings)
    started = time.perf_counter()
    first: float | None = None
    final: ModelResponse | None = None
    async for item in model.stream(request):
        if isinstance(item, StreamDelta) and item.text and first is None:
            first = time.perf_counter()
        elif isinstance(item, ModelResponse):
            final = item
    ended = time.perf_counter()
    await model.aclose()
    assert final is not None and first is not None
    tokens = final.usage.output_tokens
    decode = ended - first
    return {
        "ttft_s": first - started,
        "total_s": ended - started,
        "output_tokens": tokens,
        "tokens_per_s": (tokens - 1) / decode if decode > 0 and tokens > 1 else 0.0,
    }


async def _tool_turn(model_name: str) -> dict[str, Any]:
    """One tool-call turn (the quickstart's first turn), timed."""
    model = connect(f"local:{model_name}")
    request = ModelRequest(
        messages=[Message.system(INSTRUCTIONS), Message.user(QUESTION)],
        tools=[add.spec()],
        settings=ModelSettings(temperature=0, max_tokens=96),
    )
    started = time.perf_counter()
    response = await model.request(request)
    seconds = time.perf_counter() - started
    await model.aclose()
    return {
        "seconds": round(seconds, 2),
        "calls": [(c.name, c.arguments) for c in response.tool_calls],
        "output_tokens": response.usage.output_tokens,
    }


async def speed(runs: int, max_tokens: int) -> dict[str, Any]:
    startup: dict[str, float] = {}
    for model in MODELS:
        started = time.perf_counter()
        await LocalEngine.shared(model).start()
        startup[model] = time.perf_counter() - started
        await _stream_once(f"local:{model}", "Say hi.", 8)  # warm-up: first request pays for caches
    samples: dict[str, list[dict[str, float]]] = {model: [] for model in MODELS}
    for run in range(runs):
        prompt = PROMPTS[run % len(PROMPTS)]
        for model in MODELS:  # alternate so load changes hit every model alike
            samples[model].append(await _stream_once(f"local:{model}", prompt, max_tokens))
    turns: dict[str, list[dict[str, Any]]] = {m: [] for m in TOOL_MODELS}
    for _ in range(runs):
        for model in TOOL_MODELS:
            turns[model].append(await _tool_turn(model))
    return {
        model: {
            "model": f"local:{model}",
            "role": MODELS[model],
            "engine_start_s": round(startup[model], 2),
            "ttft_median_s": round(statistics.median(s["ttft_s"] for s in samples[model]), 3),
            "tokens_per_s_median": round(
                statistics.median(s["tokens_per_s"] for s in samples[model]), 1
            ),
            "tool_turn_median_s": (
                round(statistics.median(t["seconds"] for t in turns[model]), 2)
                if model in turns
                else None
            ),
            "rss_mb": rss_mb(LocalEngine.shared(model).pid),
            "runs": samples[model],
            "tool_turns": turns.get(model, []),
        }
        for model in MODELS
    }


async def both_served() -> dict[str, Any]:
    """The 0.5B and 1.5B engines at once: memory of each and a concurrent turn on each."""
    engines = {m: LocalEngine.shared(m) for m in TOOL_MODELS}
    for engine in engines.values():
        await engine.start()
    results: dict[str, dict[str, Any]] = {}

    async def one(model: str) -> None:
        results[model] = await _tool_turn(model)

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for model in TOOL_MODELS:
            group.start_soon(one, model)
    return {
        "wall_s": round(time.perf_counter() - started, 2),
        "rss_mb": {m: rss_mb(e.pid) for m, e in engines.items()},
        "turns": results,
    }


async def slots_memory(counts: tuple[int, ...] = (1, 2, 4)) -> dict[str, float | None]:
    """Server RSS of the 0.5B engine with 1, 2 and 4 parallel slots (each a full context)."""
    found: dict[str, float | None] = {}
    for count in counts:
        async with LocalEngine("qwen2.5-coder-0.5b", parallel=count) as engine:
            found[str(count)] = rss_mb(engine.pid)
    return found


async def tiered() -> dict[str, Any]:
    """local:tiered on the quickstart: which tier and model served each turn, how long."""
    agent = Agent(
        "local:tiered",
        instructions=INSTRUCTIONS,
        tools=[add],
        settings=ModelSettings(temperature=0, max_tokens=96),
        max_turns=4,
    )
    turns: list[dict[str, Any]] = []
    started = time.perf_counter()
    output = None
    async for event in agent.stream(QUESTION):
        now = time.perf_counter()
        if turns:
            turns[-1]["seconds"] = round(now - turns[-1]["_t"], 2)
        if isinstance(event, ModelRequestStarted):
            turns.append({"turn": event.turn, "tier": event.tier, "model": event.model, "_t": now})
        if isinstance(event, RunFinished):
            output = event.result.output
    await agent.aclose()
    for turn in turns:
        turn.pop("_t")
    return {"turns": turns, "output": output, "total_s": round(time.perf_counter() - started, 2)}


async def main(runs: int, max_tokens: int) -> dict[str, Any]:
    return {
        "benchmark": "models",
        "settings": {"runs": runs, "max_tokens": max_tokens, "temperature": 0, "stream": True},
        "models": await speed(runs, max_tokens),
        "both_served": await both_served(),
        "slots_rss_mb": await slots_memory(),
        "tiered": await tiered(),
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "load_average_1m_at_end": round(os.getloadavg()[0], 2),
        },
    }


def _table(result: dict[str, Any]) -> str:
    rows = [
        "| model | role | engine start (s) | time to first token (s) | tokens/s | tool-call turn (s) | server RSS (MB) |",
        "|---|---|---|---|---|---|---|",
    ]
    for data in result["models"].values():
        rows.append(
            f"| {data['model']} | {data['role']} | {data['engine_start_s']} | {data['ttft_median_s']} "
            f"| {data['tokens_per_s_median']} | {data['tool_turn_median_s'] or '-'} | {data['rss_mb']} |"
        )
    both = result["both_served"]
    rows.append(
        f"\nBoth Qwen engines at once: RSS {both['rss_mb']} MB; one concurrent tool turn each "
        f"in {both['wall_s']} s: {json.dumps(both['turns'])}"
    )
    rows.append(f"0.5B server RSS by parallel slots (MB): {result['slots_rss_mb']}")
    tiered_run = result["tiered"]
    rows.append(
        f"local:tiered on the quickstart ({tiered_run['total_s']} s): {tiered_run['turns']}"
    )
    return "\n".join(rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=128)
    args = parser.parse_args()
    try:
        result = anyio.run(main, args.runs, args.max_tokens)
    finally:
        stop_all_engines()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(_table(result))
    print(
        f"\n{result['machine']['cpus']} CPUs, 1-min load average at the end: "
        f"{result['machine']['load_average_1m_at_end']}"
    )
    print(f"wrote {RESULTS}")
