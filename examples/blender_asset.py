"""An agent models a game-ready crate in Blender, frames it, validates it and exports a GLB.

Runs offline by default: a scripted artist (``FunctionModel``) drives the real
``BlenderToolkit`` (a bpy worker process) and decides from the text the tools return alone,
never from pixels, so a model that cannot see could follow the same path. Every render comes
with a visibility report; the first camera is too close and the report says the crate is cut
off, so the artist calls ``fit_view`` and renders again. The first crate is over-smoothed: the
validator reports 9,408 triangles against a budget of 1,000, so the artist deletes it, rebuilds
it with a light bevel, checks the report again and exports a GLB that passes (1 m cube, origin
at the bottom centre, watertight). Pass ``--model`` to let a real model plan instead, e.g.
``--model openai:gpt-4.1`` (one that accepts images also sees the renders).

    uv run python examples/blender_asset.py --out /tmp/blender-demo
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from agentsdk.loopguard import LoopGuard
from agentsdk.testing import FunctionModel
from agentsdk_blender import BlenderToolkit

from agentsdk import Agent, ImagePart, ModelRequest, ToolCallPart, ToolResultPart

TASK = (
    "Model a wooden crate for a game: 1 m cube, standing on the ground with its origin at the "
    "bottom centre, at most 1000 triangles, watertight. Render it so it is fully in frame, "
    "validate it, export crate.glb."
)
INSTRUCTIONS = (
    "You are a 3D artist using the Blender tools. Build with primitives and modifiers, read "
    "the report that comes with every render (and look at the image if you can), fix the "
    "framing it complains about, validate the export against the spec and fix what the report "
    "says. Finish with a short plain-text answer."
)
SPEC = {
    "max_triangles": 1000,
    "expected_dimensions_m": [1.0, 1.0, 1.0],
    "require_watertight": True,
    "origin": "bottom_center",
}
WOOD = [0.55, 0.33, 0.14, 1.0]
WOOD_NAMES = ("brown", "orange", "dark orange")


def build_steps(bevel_segments: int, smooth: bool, first: bool) -> list[ToolCallPart]:
    """The tool calls that model and light one crate (and, the first time, a camera)."""
    where = [0, 0, 0.5] if first else [0, 0, 0]  # the rebuild is lifted into place after
    steps = [
        ToolCallPart(
            name="create_primitive",
            arguments={"kind": "cube", "name": "Crate", "size": 1.0, "location": where},
        ),
        ToolCallPart(
            name="add_modifier",
            arguments={
                "name": "Crate",
                "kind": "bevel",
                "width": 0.04,
                "segments": bevel_segments,
                "apply": True,
            },
        ),
    ]
    if smooth:
        steps.append(
            ToolCallPart(
                name="add_modifier", arguments={"name": "Crate", "kind": "subdivision", "levels": 2}
            )
        )
    if not first:
        steps.append(
            ToolCallPart(name="set_transform", arguments={"name": "Crate", "location": [0, 0, 0.5]})
        )
    steps.append(
        ToolCallPart(
            name="set_material", arguments={"name": "Crate", "base_color": WOOD, "roughness": 0.8}
        )
    )
    if first:  # a hasty first camera: far too close, the report will say so
        steps += [
            ToolCallPart(
                name="place_camera",
                arguments={"location": [0.9, -0.9, 0.9], "look_at": [0.3, 0, 0.5]},
            ),
            ToolCallPart(
                name="place_light",
                arguments={
                    "location": [3, -2, 5],
                    "kind": "sun",
                    "energy": 4.0,
                    "look_at": [0, 0, 0],
                },
            ),
        ]
    return steps


def crate_line(report_text: str) -> dict[str, Any]:
    """What the render report says about the crate, read from its text line."""
    line = next((ln for ln in report_text.splitlines() if ln.startswith("Crate:")), "")
    coverage = re.search(r"Crate: ([\d.]+)%", line)
    return {
        "visible": bool(line) and "not visible" not in line,
        "coverage": float(coverage.group(1)) if coverage else 0.0,
        "cut_off": "cut off" in line,
        "wood": any(f", {name}" in line for name in WOOD_NAMES),
    }


def artist(request: ModelRequest) -> ToolCallPart | str:
    """The offline stand-in for a model: build, read the reports, fix, validate, rebuild."""
    results: list[ToolResultPart] = [r for m in request.messages for r in m.tool_results]
    attempt = sum(1 for r in results if r.name == "validate_asset")
    last = results[-1] if results else None
    if last is not None and last.is_error:
        return f"A tool failed, stopping: {last.text}"
    if last is not None and last.name == "render":
        seen = crate_line(last.text)
        if not seen["visible"] or seen["cut_off"] or seen["coverage"] < 15:
            if sum(1 for r in results if r.name == "fit_view") > 2:
                return f"The crate still does not frame well: {last.text}"
            return ToolCallPart(name="fit_view", arguments={"names": ["Crate"]})
        if not seen["wood"]:
            return f"The report does not show a wooden crate: {last.text}"
        return ToolCallPart(name="export_asset", arguments={"path": "crate.glb"})
    render = ToolCallPart(
        name="render", arguments={"engine": "workbench", "views": ["camera", "front"]}
    )
    if last is not None and last.name == "fit_view":
        return render
    if last is not None and last.name == "export_asset":
        return ToolCallPart(name="validate_asset", arguments={"path": "crate.glb", **SPEC})
    if last is not None and last.name == "validate_asset":
        report: dict[str, Any] = json.loads(last.text)
        if report["ok"]:
            return (
                f"crate.glb is ready: {report['triangles']} triangles, "
                f"{report['dimensions_m'][0]:g} m cube, watertight, origin at the bottom centre "
                f"(validated on attempt {attempt})."
            )
        if attempt >= 2:
            return f"Still failing validation: {[i['message'] for i in report['issues']]}"
        return ToolCallPart(name="delete", arguments={"names": ["Crate"]})
    plan = build_steps(6, smooth=True, first=True) if attempt == 0 else build_steps(2, False, False)
    done = _steps_done(results)
    return plan[done] if done < len(plan) else render  # built: now look at it


def _steps_done(results: list[ToolResultPart]) -> int:
    """How many build steps ran since the attempt started (after a validation or a delete)."""
    done = 0
    for result in results:
        done = 0 if result.name in ("validate_asset", "delete") else done + 1
    return done


def build_agent(model: str | None, out: Path) -> Agent:
    """The agent with the Blender toolkit; exports and run artifacts go under ``out``."""
    return Agent(
        model=model or FunctionModel(artist, name="scripted-artist"),
        instructions=INSTRUCTIONS,
        tools=[BlenderToolkit(output_dir=out, groups=["core", "assets"])],
        artifacts_dir=out,
        max_turns=40,
        # The script rebuilds the crate with some of the same calls on purpose, after deleting
        # it; the loop guard would take those for a model repeating itself. Models keep it.
        loop_guard=None if model is None else LoopGuard(),
    )


def main() -> None:
    """Run the agent once and print each tool result, the images it saw and the answer."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model", help="a model string such as openai:gpt-4.1 (default: offline script)"
    )
    parser.add_argument(
        "--out", type=Path, default=Path("agentsdk-runs"), help="folder for outputs"
    )
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    result = build_agent(args.model, args.out.resolve()).run_sync(TASK)
    seen = 0
    for message in result.messages:
        for tool_result in message.tool_results:
            for part in tool_result.parts:
                if isinstance(part, ImagePart):
                    seen += 1
                    saved = args.out / f"seen-{seen}-{tool_result.name}.png"
                    saved.write_bytes(part.data)
                    print(f"image {seen} from {tool_result.name}: {saved}")
            status = "error" if tool_result.is_error else "ok"
            text = tool_result.text
            shown = text if tool_result.name == "render" else text.splitlines()[0][:110]
            print(f"{tool_result.name}: {status}: {shown}")
    print(result.output)


if __name__ == "__main__":
    main()
