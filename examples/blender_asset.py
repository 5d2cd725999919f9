"""An agent models a game-ready crate in Blender, renders it, validates it and exports a GLB.

Runs offline by default: a scripted artist (``FunctionModel``) drives the real
``BlenderToolkit`` (a bpy worker process). Its first crate is over-smoothed: the validator
reports 9,408 triangles against a budget of 1,000, so the artist deletes it, rebuilds it with a
light bevel, looks at the render again and exports a GLB that passes (1 m cube, origin at the
bottom centre, watertight). Pass ``--model`` to let a real model plan instead, e.g.
``--model openai:gpt-4.1`` (one that accepts images sees the renders).

    uv run python examples/blender_asset.py --out /tmp/blender-demo
"""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path
from typing import Any

from agentsdk.testing import FunctionModel
from agentsdk_blender import BlenderToolkit
from PIL import Image as PILImage

from agentsdk import Agent, ImagePart, ModelRequest, ToolCallPart, ToolResultPart

TASK = (
    "Model a wooden crate for a game: 1 m cube, standing on the ground with its origin at the "
    "bottom centre, at most 1000 triangles, watertight. Render it, validate it, export crate.glb."
)
INSTRUCTIONS = (
    "You are a 3D artist using the Blender tools. Build with primitives and modifiers, look at "
    "every render, validate the export against the spec and fix what the report says. "
    "Finish with a short plain-text answer."
)
SPEC = {
    "max_triangles": 1000,
    "expected_dimensions_m": [1.0, 1.0, 1.0],
    "require_watertight": True,
    "origin": "bottom_center",
}
WOOD = [0.55, 0.33, 0.14, 1.0]


def build_steps(bevel_segments: int, smooth: bool) -> list[ToolCallPart]:
    """The tool calls that model, light and frame one crate."""
    steps = [
        ToolCallPart(
            name="create_primitive",
            arguments={"kind": "cube", "name": "Crate", "size": 1.0, "location": [0, 0, 0.5]},
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
    steps += [
        ToolCallPart(
            name="set_material", arguments={"name": "Crate", "base_color": WOOD, "roughness": 0.8}
        ),
        ToolCallPart(
            name="place_camera", arguments={"location": [2.4, -2.4, 1.9], "look_at": [0, 0, 0.5]}
        ),
        ToolCallPart(
            name="place_light",
            arguments={"location": [3, -2, 5], "kind": "sun", "energy": 4.0, "look_at": [0, 0, 0]},
        ),
        ToolCallPart(
            name="render", arguments={"engine": "workbench", "views": ["camera", "front"]}
        ),
        ToolCallPart(name="export_asset", arguments={"path": "crate.glb"}),
        ToolCallPart(name="validate_asset", arguments={"path": "crate.glb", **SPEC}),
    ]
    return steps


def looks_like_wood(image: ImagePart) -> bool:
    """What the artist "sees": a warm brown in the middle of the picture."""
    picture = PILImage.open(io.BytesIO(image.data)).convert("RGB")
    r, g, b = picture.getpixel((picture.width // 2, picture.height // 2))  # type: ignore[misc]
    return bool(r > g > b and r > 60)


def artist(request: ModelRequest) -> ToolCallPart | str:
    """The offline stand-in for a model: build, look, validate, rebuild within budget."""
    results: list[ToolResultPart] = [r for m in request.messages for r in m.tool_results]
    attempt = sum(1 for r in results if r.name == "validate_asset")
    if results and results[-1].is_error:
        return f"A tool failed, stopping: {results[-1].text}"
    if results and results[-1].name == "render":
        images = [p for p in results[-1].parts if isinstance(p, ImagePart)]
        if not all(looks_like_wood(i) for i in images):
            return "The render does not show the brown crate; stopping."
    if results and results[-1].name == "validate_asset":
        report: dict[str, Any] = json.loads(results[-1].text)
        if report["ok"]:
            return (
                f"crate.glb is ready: {report['triangles']} triangles, "
                f"{report['dimensions_m'][0]:g} m cube, watertight, origin at the bottom centre "
                f"(validated on attempt {attempt})."
            )
        if attempt >= 2:
            return f"Still failing validation: {[i['message'] for i in report['issues']]}"
        return ToolCallPart(name="delete", arguments={"names": ["Crate"]})
    plan = (
        build_steps(bevel_segments=6, smooth=True) if attempt == 0 else build_steps(2, smooth=False)
    )
    return plan[_steps_done(results)]


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
        max_turns=30,
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
            print(f"{tool_result.name}: {status}: {tool_result.text.splitlines()[0][:110]}")
    print(result.output)


if __name__ == "__main__":
    main()
