"""Schema-valid tool calls on the embedded engine, constrained vs unconstrained.

A fixed set of prompts per first-party toolkit (the toolkits' real tool schemas, loaded
with ``agentsdk.plugins.load_toolkit(name).tools()``), each sampled with several seeds at
temperature 0.7 and ``tool_choice="auto"``, once with ``LocalChatModel(constrained=True)``
and once with ``constrained=False`` (llama.cpp's own tool-call parsing, plus the
connector's text fallback when that parser gives up). A call counts as schema-valid when
it names an offered tool and its arguments pass ``jsonschema`` validation against that
tool's schema. Prints a table and writes benchmarks/results/tool_calls.json.

    uv run --no-sync python benchmarks/tool_calls.py [--seeds 5] [--prompts 12] [--resume]

The result file is rewritten after every pair of samples, so a stopped run keeps what it
measured; ``--resume`` continues it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

import anyio
import jsonschema
from agentsdk.plugins import load_toolkit
from agentsdk.tools import ToolSpec
from agentsdk_openai import LocalChatModel, LocalEngine
from agentsdk_openai.local import stop_all_engines

from agentsdk import Message, ModelError, ModelRequest, ModelSettings

RESULTS = Path(__file__).parent / "results" / "tool_calls.json"

# Twelve requests per toolkit: ordinary ones, and ones that invite a wrong call (a tool
# that does not exist, values of the wrong type or outside the schema, extra fields).
PROMPTS: dict[str, list[str]] = {
    "finance": [
        "What was MSFT's total return from 2005-01-01 to 2010-12-31?",
        "Show me AAPL's daily prices for 2012.",
        "Compare IBM and MSFT performance over 2008.",
        "Compute the 50-day moving average of GOOG in 2011.",
        "Chart the price of AAPL from 2010 to 2013.",
        "Get Apple's fundamentals from its latest 10-Q.",
        "Write a short research report on IBM for 2000-2013.",
        "What is the maximum drawdown of MSFT between 2000 and 2003?",
        "Use the stock_screener tool to find cheap stocks.",
        "Get the price history of MSFT with interval='every tuesday' and limit=-5.",
        "Compare MSFT with itself using the tickers argument set to 42.",
        "Call performance with start='yesterday' and a bonus field mood='happy'.",
    ],
    "threejs": [
        "Add a red box named crate at the origin.",
        "Add a blue sphere called ball at position 2, 0, 0.",
        "Move the crate up by 3 units.",
        "Remove the object named ball.",
        "Add a warm point light above the scene.",
        "Point the camera at the crate from far away.",
        "Make the camera fit all objects in view.",
        "Render the scene.",
        "Use the explode tool on the crate.",
        "Add an object with geometry 'hypercube' and colour 'ultraviolet'.",
        "Set the camera position to 'north-east' and fov to -20.",
        "Update the crate with scale='huge' and a field wobble=true.",
    ],
    "blender": [
        "Create a cube named Box.",
        "Add a UV sphere of radius 2 named Planet.",
        "Move Box to x=1, y=2, z=3.",
        "Give Planet a shiny gold material.",
        "Add a subdivision surface modifier to Box.",
        "Delete the object called Planet.",
        "Place the camera so it looks at Box.",
        "Add a sun light.",
        "Render the scene to box.png.",
        "Export the scene as a glTF file.",
        "Create a primitive of type 'dodecahedron-ish' with size 'big'.",
        "Call the sculpt tool on Box with strength 11.",
    ],
    "godot": [
        "Create a new 2D scene called Main.",
        "Add a Sprite node named Player to Main.",
        "Set Player's position to (100, 200).",
        "Write a script that makes Player move right.",
        "Attach the script to Player.",
        "Show me the scene tree of Main.",
        "Run the project for two seconds.",
        "Take a screenshot of the running game.",
        "Press the jump key in the running game.",
        "Stop the running game.",
        "Add a node of type 'Dragon' with parent 7.",
        "Use the compile_shader tool on Main.",
    ],
    "unity": [
        "Check this C# script for errors: class A { }",
        "Write a script PlayerController.cs that moves the player.",
        "Read the script PlayerController.cs.",
        "What is the compile status?",
        "Show the console logs.",
        "Create a GameObject named Enemy.",
        "Find all GameObjects named Enemy.",
        "Set Enemy's position to 1, 2, 3.",
        "Add a Rigidbody component to Enemy.",
        "Delete the Enemy GameObject.",
        "Set the field speed on Enemy to 'fast' with extra argument color=red.",
        "Use the bake_lighting tool.",
    ],
}


def _valid(name: str, arguments: dict[str, Any], specs: dict[str, ToolSpec]) -> bool:
    spec = specs.get(name)
    if spec is None:
        return False
    try:
        jsonschema.validate(arguments, spec.parameters)
    except jsonschema.ValidationError:
        return False
    return True


async def _sample(
    model: LocalChatModel, toolkit: str, specs: list[ToolSpec], prompt: str, seed: int
) -> dict[str, Any]:
    request = ModelRequest(
        messages=[Message.system(f"You operate the {toolkit} tools."), Message.user(prompt)],
        tools=specs,
        settings=ModelSettings(temperature=0.7, seed=seed, max_tokens=160, tool_choice="auto"),
    )
    started = time.perf_counter()
    try:
        response = await model.request(request)
    except ModelError as exc:  # counted: what a user would get is an error, not a call
        return {"error": str(exc)[:200], "calls": [], "seconds": time.perf_counter() - started}
    by_name = {s.name: s for s in specs}
    calls = [
        {
            "name": c.name,
            "valid": c.raw_arguments is None and _valid(c.name, c.arguments, by_name),
            "known_name": c.name in by_name,
        }
        for c in response.tool_calls
    ]
    return {
        "calls": calls,
        "text": response.text[:80],
        "seconds": round(time.perf_counter() - started, 2),
    }


def _summary(samples: list[dict[str, Any]], constrained: bool) -> dict[str, Any]:
    mine = [s for s in samples if s["constrained"] is constrained]
    calls = [c for s in mine for c in s["calls"]]
    per_toolkit = {}
    for toolkit in PROMPTS:
        tk_calls = [c for s in mine if s["toolkit"] == toolkit for c in s["calls"]]
        per_toolkit[toolkit] = {"calls": len(tk_calls), "valid": sum(c["valid"] for c in tk_calls)}
    valid = sum(c["valid"] for c in calls)
    return {
        "constrained": constrained,
        "samples": len(mine),
        "errors": sum("error" in s for s in mine),
        "text_answers": sum(not s["calls"] and "error" not in s for s in mine),
        "calls": len(calls),
        "valid_calls": valid,
        "unknown_names": sum(not c["known_name"] for c in calls),
        "valid_rate": round(valid / len(calls), 4) if calls else None,
        "median_seconds": sorted(s["seconds"] for s in mine)[len(mine) // 2] if mine else None,
        "per_toolkit": per_toolkit,
    }


def _report(
    samples: list[dict[str, Any]], settings: dict[str, Any], started: float
) -> dict[str, Any]:
    return {
        "benchmark": "tool_calls",
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "load_average_1m": round(os.getloadavg()[0], 2),
        },
        "settings": settings,
        "wall_seconds": round(time.perf_counter() - started, 1),
        "modes": [_summary(samples, True), _summary(samples, False)],
        "runs": samples,
    }


def _previous(settings: dict[str, Any]) -> list[dict[str, Any]]:
    """The samples of an earlier run with the same settings (for --resume)."""
    try:
        old = json.loads(RESULTS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    varying = ("prompts", "seeds")  # a resumed run may cover more of either
    same = {k: v for k, v in old.get("settings", {}).items() if k not in varying} == {
        k: v for k, v in settings.items() if k not in varying
    }
    return list(old.get("runs", [])) if same else []


async def main(model_name: str, seeds: int, prompts: int, resume: bool) -> dict[str, Any]:
    # Two slots: the constrained and the unconstrained sample of each (prompt, seed) run
    # side by side, so a run stopped early still compares like with like. The partial
    # result is written after every pair.
    engine = LocalEngine(model_name, parallel=2)
    settings = {
        "model": f"local:{model_name}",
        "temperature": 0.7,
        "seeds": seeds,
        "prompts": sum(len(p[:prompts]) for p in PROMPTS.values()),
        "tool_choice": "auto",
        "max_tokens": 160,
        "parallel_slots": 2,
    }
    started = time.perf_counter()
    samples = _previous(settings) if resume else []
    done = {(s["toolkit"], s["prompt"], s["seed"]) for s in samples if s["constrained"]} & {
        (s["toolkit"], s["prompt"], s["seed"]) for s in samples if not s["constrained"]
    }
    samples = [s for s in samples if (s["toolkit"], s["prompt"], s["seed"]) in done]
    try:
        await engine.start()
        models = {c: LocalChatModel(engine, constrained=c) for c in (True, False)}
        for toolkit, texts in PROMPTS.items():  # grouped: the slots reuse each tool prefix
            specs = [t.spec() for t in load_toolkit(toolkit).tools()]
            for prompt in texts[:prompts]:
                for seed in range(1, seeds + 1):
                    if (toolkit, prompt, seed) in done:
                        continue

                    async def one(
                        constrained: bool, job: tuple[str, list[ToolSpec], str, int]
                    ) -> None:
                        toolkit, specs, prompt, seed = job
                        sample = await _sample(models[constrained], toolkit, specs, prompt, seed)
                        samples.append(
                            {"toolkit": toolkit, "prompt": prompt, "seed": seed,
                             "constrained": constrained, **sample}
                        )  # fmt: skip

                    job = (toolkit, specs, prompt, seed)
                    async with anyio.create_task_group() as group:
                        group.start_soon(one, True, job)
                        group.start_soon(one, False, job)
                    _write(_report(samples, settings, started))
            print(f"  {toolkit}: {len(samples)} samples so far", flush=True)
        for model in models.values():
            await model.aclose()
    finally:
        await engine.stop()
    return _report(samples, settings, started)


def _write(result: dict[str, Any]) -> None:
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


def _table(result: dict[str, Any]) -> str:
    rows = [
        "| constrained | samples | calls | schema-valid | valid rate | unknown tool names | text answers | errors |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for mode in result["modes"]:
        rate = f"{mode['valid_rate']:.1%}" if mode["valid_rate"] is not None else "-"
        rows.append(
            f"| {'on' if mode['constrained'] else 'off'} | {mode['samples']} | {mode['calls']} | "
            f"{mode['valid_calls']} | {rate} | {mode['unknown_names']} | {mode['text_answers']} | {mode['errors']} |"
        )
    return "\n".join(rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--prompts", type=int, default=12, help="prompts per toolkit (max 12)")
    parser.add_argument(
        "--resume", action="store_true", help="keep the samples of an interrupted run"
    )
    args = parser.parse_args()
    try:
        result = anyio.run(main, args.model, args.seeds, args.prompts, args.resume)
    finally:
        stop_all_engines()
    _write(result)
    print(_table(result))
    print(f"wall time {result['wall_seconds']} s; wrote {RESULTS}")
