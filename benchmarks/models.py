"""Fast vs standard local tier: time to first token and decode speed, side by side.

Starts the embedded llama.cpp engine for each built-in model (SmolLM2-135M = fast,
Qwen2.5-Coder-0.5B = standard), sends the same streamed prompts to both in alternation
at temperature 0, and reports the medians. Prints a table and writes
benchmarks/results/models.json.

    uv run python benchmarks/models.py [--runs 3] [--max-tokens 128]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

import anyio
from agentsdk_openai import LocalEngine, connect
from agentsdk_openai.local import stop_all_engines

from agentsdk import Message, ModelRequest, ModelResponse, ModelSettings, StreamDelta

TIERS = {"fast": "smollm2-135m", "standard": "qwen2.5-coder-0.5b"}
PROMPTS = [
    "Explain in a short paragraph why the sky is blue.",
    "Write a short story opening about a lighthouse keeper.",
    "List five uses of a paperclip, one sentence each.",
]
RESULTS = Path(__file__).parent / "results" / "models.json"


async def _one_run(model_string: str, prompt: str, max_tokens: int) -> dict[str, float]:
    model = connect(model_string)
    settings = ModelSettings(temperature=0, max_tokens=max_tokens)
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


async def main(runs: int, max_tokens: int) -> dict[str, object]:
    startup: dict[str, float] = {}
    for tier, model in TIERS.items():
        started = time.perf_counter()
        await LocalEngine.shared(model).start()
        startup[tier] = time.perf_counter() - started
        await _one_run(f"local:{model}", "Say hi.", 8)  # warm-up: first request pays for caches
    samples: dict[str, list[dict[str, float]]] = {tier: [] for tier in TIERS}
    for run in range(runs):
        prompt = PROMPTS[run % len(PROMPTS)]
        for tier, model in TIERS.items():  # alternate so load changes hit both tiers alike
            samples[tier].append(await _one_run(f"local:{model}", prompt, max_tokens))
    summary = {
        tier: {
            "model": f"local:{TIERS[tier]}",
            "engine_start_s": round(startup[tier], 2),
            "ttft_median_s": round(statistics.median(s["ttft_s"] for s in samples[tier]), 3),
            "tokens_per_s_median": round(
                statistics.median(s["tokens_per_s"] for s in samples[tier]), 1
            ),
            "output_tokens_median": statistics.median(s["output_tokens"] for s in samples[tier]),
            "runs": samples[tier],
        }
        for tier in TIERS
    }
    return {
        "benchmark": "models",
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "load_average_1m_at_end": round(os.getloadavg()[0], 2),
        },
        "settings": {"runs": runs, "max_tokens": max_tokens, "temperature": 0, "stream": True},
        "tiers": summary,
    }


def _table(result: dict[str, object]) -> str:
    tiers = result["tiers"]
    assert isinstance(tiers, dict)
    rows = [
        "| tier | model | engine start (s) | time to first token (s) | tokens/s |",
        "|---|---|---|---|---|",
    ]
    for tier, data in tiers.items():
        rows.append(
            f"| {tier} | {data['model']} | {data['engine_start_s']} | {data['ttft_median_s']} | {data['tokens_per_s_median']} |"
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
    machine = result["machine"]
    print(
        f"\n{machine['cpus']} CPUs, 1-min load average at the end: {machine['load_average_1m_at_end']}"
    )  # type: ignore[index]
    print(f"wrote {RESULTS}")
