"""Prompts a new user might try, in no suite: what ``Agent("local:default", tools=[kit])``
does with them, with the toolkit's instructions in its prompt (the default since session 16)
and without (``toolkit_instructions=False``, what such an agent sent before).

Nine sets, each written before it was first run: ``s16``
(eight prompts, session 16), ``s17`` (nine more, written in session 17 before any change
of that session was run), ``s18`` (nine more, written in session 18 before any run on
them, after that session's changes were made but not measured on new prompts), ``s19``
(nine more, written in session 19 the same way), ``s20`` (nine more, written in session
20 before any run or change), ``s21`` (nine more, written in session 21 the same way),
``s22`` (nine more, written in session 22 after its changes were made, before any run),
``s23`` (nine more, written in session 23 before any change or run), ``s24`` (nine more,
written in session 24 the same way) and ``s25`` (nine more, written in session 25 the same way). s19 and s20 were each held out for one run of new code only:
later changes of their sessions used what those runs showed (the tasks README says which). Nothing checks the outcome
automatically: each row keeps
the calls, the answer and the last tool result (the scene as the tools describe it), and
the judgement is written in the tasks README. Writes --out (default
benchmarks/results/new_user_prompts.json), and with --traces one trace per run (JSONL) and
the local model's log beside it (``.log``: which calls were mended or asked again, and why).

    uv run --no-sync python benchmarks/new_user_prompts.py [--set s16|...|s25] [--only on|off]
        [--kit threejs|blender|godot] [--out FILE] [--traces DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import platform
import time
from pathlib import Path
from typing import Any

from agentsdk import Agent

RESULTS = Path(__file__).parent / "results" / "new_user_prompts.json"

SETS: dict[str, list[tuple[str, str]]] = {}
SETS["s16"] = [
    ("threejs", "Add a red sphere named sun of radius 1 at (0, 3, 0) and a green box named plate, 6 wide, 0.2 tall and 6 deep, resting on the ground."),
    ("threejs", "Place three yellow cubes named a, b and c in a row along x at x = -2, 0 and 2, all resting on the ground."),
    ("threejs", "Make a grey floor plane named floor, 10 by 10, and a purple cone named spire, radius 0.5 and 3 tall, standing on it, lit by a directional light."),
    ("threejs", "Add an orange torus named donut at (0, 1, 0) and make sure the camera sees all of it."),
    ("blender", "Add a blue cube named Box, 2 m on each side, resting on the ground, and a sun light named Sun above it pointing at it."),
    ("blender", "Create a cylinder named Pillar, 0.5 m in radius and 3 m tall, standing on the ground, then render the camera view."),
    ("godot", "Create the main scene with a red cube named Crate standing on the ground and a camera that sees it."),
    ("godot", "Make a main scene whose root is a Control, with a Label named Title that shows the text Welcome."),
]  # fmt: skip
SETS["s17"] = [
    ("threejs", "Put a white box named table, 4 wide, 1 tall and 2 deep, on the ground, and a red sphere named apple of radius 0.3 on top of the table."),
    ("threejs", "Create a blue cylinder named tower, radius 1 and height 5, standing on the ground at (3, 0, 3), and a yellow point light named lamp at (0, 6, 0)."),
    ("threejs", "Add two cubes named left and right, a green one at x = -3 and a pink one at x = 3, both on the ground, then frame both in the camera."),
    ("blender", "Make a red sphere named Ball of radius 1 resting on the ground and a camera named Cam at (6, -6, 4) that looks at it."),
    ("blender", "Add a cube named Crate on the ground, then a cube named Lid of the same size stacked on top of it, and render the result."),
    ("blender", "Create a green plane named Grass 20 m across and a white cone named Tent standing on it."),
    ("godot", "Make a main scene with a blue sphere named Planet at the origin and a camera named Eye that looks at it."),
    ("godot", "Create a main scene whose root is a Node2D, with a Sprite named Player at (100, 200)."),
    ("godot", "Build a main scene with a yellow box named Block resting on the ground and an omni light named Bulb above it."),
]  # fmt: skip
SETS["s18"] = [
    ("threejs", "Add a brown box named desk, 2 wide, 0.8 tall and 1 deep, on the ground, put a white sphere named globe of radius 0.25 on the desk, and export the scene to desk.glb."),
    ("threejs", "Make four red cylinders named p1, p2, p3 and p4 at (2, 0, 0), (0, 0, 2), (-2, 0, 0) and (0, 0, -2), each standing on the ground, then render the view."),
    ("threejs", "Light the scene with a warm point light named bulb at (0, 4, 0) and add a grey plane named floor, 8 by 8, under it."),
    ("blender", "Add a yellow cone named Spike, 2 m tall, standing on the ground, and save a render of it."),
    ("blender", "Create three cubes named A, B and C in a row along the X axis, 3 m apart, all resting on the ground, then export them as row.glb."),
    ("blender", "Place an area light named Fill at (-3, 3, 5) aimed at the origin and a camera named Shot at (7, -7, 5) looking at the origin, then render the camera view."),
    ("godot", "Create a main scene with a green box named Ground, 10 by 0.5 by 10, and a red sphere named Ball resting on it, then take a screenshot."),
    ("godot", "Make a main scene with a Label named Score showing 0 and a Button named Restart below it."),
    ("godot", "Build a main scene with a blue cube named Player and attach a script to it that moves it up by 1 every second."),
]  # fmt: skip


SETS["s19"] = [
    ("threejs", "Build a snowman: three white spheres named base, middle and head, of radius 1, 0.7 and 0.45, stacked on top of each other on the ground."),
    ("threejs", "Add a green cone named tree, radius 1 and 3 tall, on the ground, a brown cylinder named trunk under it, and a directional light named sun."),
    ("threejs", "Put a blue torus named ring at (0, 2, 0), a yellow point light named glow at (2, 4, 2), and show me a render of it."),
    ("blender", "Make a table: a brown cube named Top, 2 m by 1 m by 0.1 m, at a height of 1 m, and four thin cylinders named Leg1, Leg2, Leg3 and Leg4 under its corners."),
    ("blender", "Add a red sphere named Apple of radius 0.5 resting on the ground and a camera named View at (4, -4, 3) looking at it, then render the camera view."),
    ("blender", "Create a white plane named Floor, 10 m across, a green cube named Box on it, and export everything to scene.glb."),
    ("godot", "Create a main scene with a Camera named Eye at (0, 2, 6), a DirectionalLight named Sun, and a red sphere named Ball at the origin."),
    ("godot", "Make a main scene whose root is a Control, with a Button named Start and a Label named Info that says Ready."),
    ("godot", "Build a main scene with a grey box named Floor, 8 by 0.2 by 8, and a yellow cube named Coin resting on it."),
]  # fmt: skip


SETS["s20"] = [
    ("threejs", "Add a black cylinder named post, radius 0.1 and 2 tall, standing on the ground, and a white sphere named lamp of radius 0.3 on top of it."),
    ("threejs", "Create a red box named car, 2 long, 1 tall and 1 wide, on the ground at (-3, 0, 0), a blue box named truck, 3 long, 1.5 tall and 1.5 wide, on the ground at (3, 0, 0), and frame both."),
    ("threejs", "Add a yellow sphere named sun of radius 2 at (0, 8, -10) and a point light named sunlight at the same place."),
    ("blender", "Add a grey cube named Wall, 4 m wide, 0.2 m thick and 2 m tall, standing on the ground, and a red sphere named Ball of radius 0.3 on the ground in front of it."),
    ("blender", "Create a cylinder named Can, radius 0.3 m and 1 m tall, on the ground, and a point light named Bulb 2 m above it, then render the camera view."),
    ("blender", "Make a torus named Ring at (0, 0, 1) and a camera named Cam at (0, -5, 1) looking at it, then export the scene to ring.glb."),
    ("godot", "Create a main scene with a green box named Field, 20 by 0.1 by 20, and a white sphere named Ball of radius 0.5 resting on it, and a camera named Cam looking at the ball."),
    ("godot", "Make a main scene whose root is a Node2D, with a Sprite named Hero at (50, 50) and a Timer named Clock."),
    ("godot", "Build a main scene with an orange cube named Box at (0, 1, 0), an omni light named Lamp at (2, 3, 2), then take a screenshot."),
]  # fmt: skip
SETS["s21"] = [
    ("threejs", "Make a green sphere named head of radius 0.5 sitting on a blue box named body, 1 wide, 1.5 tall and 0.6 deep, which stands on the ground."),
    ("threejs", "Add three spheres named red, green and blue, each of radius 0.4, colored to match their names, at x = -2, 0 and 2 on the ground, and render the view."),
    ("threejs", "Create a white plane named stage, 6 by 4, and a spot light named spot at (0, 5, 2) pointing at the middle of the stage."),
    ("blender", "Add a brown cylinder named Trunk, radius 0.2 m and 2 m tall, on the ground, and a green ico sphere named Crown of radius 1 m on top of it, then render it."),
    ("blender", "Make two cubes named Left and Right, 1 m each, 4 m apart along X, both on the ground, and export both to pair.glb."),
    ("blender", "Put a camera named Top at (0, 0, 10) looking straight down at the origin and a red cone named Marker on the ground at the origin."),
    ("godot", "Create a main scene with a grey box named Table, 2 by 1 by 1, standing on the ground, and a green sphere named Apple of radius 0.2 on top of it."),
    ("godot", "Make a main scene with a Camera named View at (0, 3, 8) and a red cube named Target at the origin, then take a screenshot."),
    ("godot", "Build a main scene whose root is a Control with a Button named Start that says Play."),
]  # fmt: skip
SETS["s22"] = [
    ("threejs", "Put a green cylinder named pillar, 3 tall, on the ground and a white sphere named orb resting on top of it."),
    ("threejs", "Make three blue boxes named a, b and c in a row along x, 2 apart, all on the ground, and frame all three."),
    ("threejs", "Add a yellow cone named spike at the origin and a spot light named beam at (0, 5, 0) pointing at it."),
    ("blender", "Create a grey plane named Floor, 10 m wide, and a green cylinder named Post standing on it, then render the scene."),
    ("blender", "Add a purple torus named Ring at (0, 0, 2) and a camera named Shot at (0, -8, 2) aimed at the ring."),
    ("blender", "Add an orange ico sphere named Bead of radius 0.5 at (0, 0, 3) and a point light named Glow 1 m above it."),
    ("godot", "Create a main scene with a green plane named Field, 20 by 20, and a white capsule named Hero standing on it."),
    ("godot", "Make a main scene with a DirectionalLight named Sun, a Camera named Eye at (0, 4, 10), and an orange cylinder named Tower, 3 tall, on the ground."),
    ("godot", "Build a main scene with a Node2D root, a Sprite named Ship at (200, 150) and a Label named Score at (10, 10) that says 0."),
]  # fmt: skip

SETS["s23"] = [
    ("threejs", "Add a red box named crate, 1 by 1 by 1, on the ground at (2, 0, 0) and a blue sphere named ball of radius 0.5 on the ground at (-2, 0, 0), then show me a render."),
    ("threejs", "Create a yellow cylinder named lamp, radius 0.3 and 1 tall, on the ground, with a point light named glow just above it."),
    ("threejs", "Add a white plane named floor, 10 by 10, an orange cone named marker standing on it, and frame the marker in the camera."),
    ("blender", "Add a blue cube named Box, 2 m on each side, on the ground, and a sun light named Sun, then render the scene."),
    ("blender", "Create a red uv sphere named Ball of radius 0.5 m resting on a grey cube named Pedestal, 1 m on each side, on the ground."),
    ("blender", "Put a camera named Cam at (6, -6, 4) looking at the origin and a green cone named Tree on the ground at the origin, and export the scene to tree.glb."),
    ("godot", "Create a main scene with a red sphere named Ball of radius 1 at (0, 1, 0) and an omni light named Lamp at (0, 4, 0)."),
    ("godot", "Make a main scene with a blue box named Wall, 4 by 2 by 0.2, standing on the ground, and a Camera named Eye at (0, 1, 6) looking at the wall."),
    ("godot", "Build a main scene whose root is a Control, with a Label named Title that says Hello and a Button named Go below it."),
]  # fmt: skip

SETS["s24"] = [
    ("threejs", "Make a brown box named desk, 2 wide, 0.8 tall and 1 deep, on the ground, and a white sphere named globe of radius 0.2 sitting on the desk."),
    ("threejs", "Add a green cone named tree, 2 tall, on the ground, and a small yellow sphere named star on its tip."),
    ("threejs", "Add a purple torus named ring at (0, 2, 0) and a white directional light named key, then render the scene."),
    ("blender", "Add a cube named Base, 2 m wide, on the ground, and a cylinder named Column, 0.3 m in radius and 2 m tall, standing on top of the base."),
    ("blender", "Add a monkey named Suzanne at the origin, make it gold, and render it."),
    ("blender", "Add three spheres named A, B and C of radius 0.5, 2 m apart along x, all on the ground."),
    ("godot", "Create a main scene with a grey box named Floor, 10 by 0.2 by 10, and a red sphere named Ball of radius 0.5 resting on it."),
    ("godot", "Make a main scene with a yellow cube named Target at the origin, a Camera named Cam at (0, 3, 8) looking at it, and a spot light named Spot at (0, 5, 0) pointing down at it."),
    ("godot", "Build a main scene whose root is a Control with a Button named Play that says Play and a Label named Hint under it."),
]  # fmt: skip


SETS["s25"] = [
    ("threejs", "Add a red cube named box, 1 on each side, on the ground, and turn it 45 degrees around y."),
    ("threejs", "Make a blue sphere named moon of radius 0.5 at (3, 2, 0), then change its colour to silver."),
    ("threejs", "Create a green box named hedge, 5 long, 1 tall and 0.5 deep, on the ground, and a point light named lamp 2 above it."),
    ("blender", "Add a torus named Ring at (0, 0, 1), make it red, and render it."),
    ("blender", "Create a cube named Step, 1 m on each side, on the ground, then make it twice as wide along x."),
    ("blender", "Add an orange cylinder named Can, 0.4 m in radius and 1.2 m tall, standing on the ground, and an area light named Soft above it."),
    ("godot", "Create a main scene with a green plane named Ground, 20 by 20, and a blue cube named Player standing on it at the origin."),
    ("godot", "Make a main scene with a red cylinder named Pole, 3 tall, standing on the ground, and a directional light named Sun."),
    ("godot", "Build a main scene whose root is a Node2D with a Label named Score at (20, 20) that says 0."),
]  # fmt: skip


async def one(i: int, kit: str, prompt: str, on: bool, traces: Path | None) -> dict[str, Any]:
    trace = traces / f"p{i}_{'on' if on else 'off'}.jsonl" if traces else None
    agent = Agent("local:default", tools=[kit], max_turns=10, toolkit_instructions=on, trace=trace)
    log = logging.getLogger("agentsdk_openai.local")
    handler = logging.FileHandler(trace.with_suffix(".log")) if trace else logging.NullHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    started = time.perf_counter()
    try:
        result = await agent.run(prompt)
        output, calls, status = str(result.output), result.tool_calls, result.status
        results = [r.text for m in result.messages for r in m.tool_results]
    except Exception as exc:  # a run that ran out of turns is a result here
        output, status = f"{type(exc).__name__}: {exc}", "error"
        partial = getattr(exc, "result", None)  # MaxTurnsExceeded and LoopDetected carry it
        calls = partial.tool_calls if partial is not None else []
        results = [r.text for m in partial.messages for r in m.tool_results] if partial else []
    finally:
        await agent.aclose()
        log.removeHandler(handler)
        handler.close()
    return {
        "prompt_id": i,
        "toolkit": kit,
        "prompt": prompt,
        "toolkit_instructions": on,
        "status": status,
        "seconds": round(time.perf_counter() - started, 1),
        "calls": calls,
        "answer": output,
        "last_result": results[-1][:2000] if results else None,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", choices=sorted(SETS), default="s16", help="which prompts")
    parser.add_argument("--only", choices=["on", "off"], help="one mode only")
    parser.add_argument("--kit", help="only the prompts for this toolkit (threejs, blender, godot)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="the JSON to write")
    parser.add_argument("--traces", type=Path, help="a folder for one JSONL trace per run")
    args = parser.parse_args()
    modes = [args.only == "on"] if args.only else [True, False]
    if args.traces:
        args.traces.mkdir(parents=True, exist_ok=True)
    rows = []
    for i, (kit, prompt) in enumerate(SETS[args.set], 1):
        if args.kit and kit != args.kit:
            continue
        for on in modes:
            row = await one(i, kit, prompt, on, args.traces)
            rows.append(row)
            print(
                i, "on " if on else "off", row["status"], row["seconds"], row["calls"], flush=True
            )
    args.out.write_text(
        json.dumps(
            {
                "benchmark": "new_user_prompts",
                "set": args.set,
                "machine": platform.platform(),
                "runs": rows,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
