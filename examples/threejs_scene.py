"""An agent builds a small three.js scene and corrects it from what each render's report says.

Runs offline by default: a scripted designer (``FunctionModel``) drives the real
``ThreeJSToolkit`` (headless Chromium + WebGL) and decides **from the text of the tool results
alone** (never from the pixels), as a model that cannot see would: its first box lands too far
to the right and the scene has no light, so the visibility report says the frame is flat black
and then that the box is cut off on the right; it adds lights, frames the box with ``fit_view``, checks that the box
rests on the floor with ``assert_rests_on``, looks at four views and exports a GLB. Pass
``--model`` to let a real model plan instead, e.g. ``--model local:default`` or
``--model openai:gpt-4.1``.

    uv run python examples/threejs_scene.py --out /tmp/threejs-demo
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from agentsdk.testing import FunctionModel
from agentsdk_threejs import ThreeJSToolkit

from agentsdk import Agent, ImagePart, ModelRequest, ToolCallPart

TASK = (
    "Build a red box named box, 1 on each side, standing on a grey floor named floor. Make sure "
    "it is lit, fully in view and at least 20% of the frame, then export the scene as red_box.glb."
)
INSTRUCTIONS = (
    "You build three.js scenes with the threejs tools; y is up. Every tool result lists the scene "
    "and what the camera sees (a visibility report). Fix what the report says is wrong. Finish "
    "with a short plain-text answer."
)


def box_line(text: str) -> str:
    """The visibility report's line about the box ("box: 12% at x.. y.., red, cut off ...")."""
    return next((line for line in text.splitlines() if line.startswith("box: ")), "")


def coverage(line: str) -> float:
    """The box's share of the frame from its report line (0 when it is not visible)."""
    head = line.split(",")[0].removeprefix("box: ").split(" ")[0]
    return float(head.rstrip("%")) / 100 if head.endswith("%") else 0.0


def designer(request: ModelRequest) -> ToolCallPart | str:
    """The offline stand-in for a model: every decision reads the previous tool's text."""
    results = [r for m in request.messages for r in m.tool_results]
    if not results:
        return ToolCallPart(
            name="add_object",
            arguments={"name": "floor", "shape": "plane", "size": [8, 8], "color": "grey"},
        )
    last = results[-1]
    if last.is_error:
        return f"I could not build the scene: {last.text}"
    text, box = last.text, box_line(last.text)
    if last.name == "add_object" and "box (box " not in text:
        # A first attempt that is off: too far to the right for the default camera.
        return ToolCallPart(
            name="add_object",
            arguments={"name": "box", "size": [1], "color": "red", "position": [3.2, 0.5, -1]},
        )
    if "flat black" in text or "Lights: none" in text:
        return [  # type: ignore[return-value]
            ToolCallPart(name="add_light", arguments={"kind": "ambient", "intensity": 0.8}),
            ToolCallPart(name="add_light", arguments={"kind": "directional", "name": "sun"}),
        ]
    if last.name in ("add_object", "add_light", "fit_view") and box:
        if "cut off" in box or coverage(box) < 0.2:
            return (
                ToolCallPart(name="fit_view", arguments={"names": ["box", "floor"]})
                if (last.name != "fit_view")
                else ToolCallPart(name="fit_view", arguments={"names": ["box"], "margin": 1.3})
            )
        return ToolCallPart(name="assert_rests_on", arguments={"name": "box", "on": "floor"})
    if last.name == "assert_rests_on":
        verdict = json.loads(text)
        if not verdict["passed"]:
            return f"The box does not stand on the floor: {verdict['message']}"
        return ToolCallPart(
            name="render_views", arguments={"views": ["front", "side", "top", "iso"]}
        )
    if last.name == "render_views":
        return ToolCallPart(name="export_glb", arguments={"path": "red_box.glb"})
    if last.name == "export_glb":
        exported = json.loads(text)
        return (
            "The red box stands on the grey floor, lit and fully in view (the reports said the "
            "first frames were black and the box was cut off at the right edge). Exported "
            f"{exported['meshes_in_file']} meshes to {exported['path']}."
        )
    return f"Something went wrong: {text}"


def build_agent(model: str | None, out: Path) -> Agent:
    """The agent with the three.js toolkit; runs and exports go under ``out``."""
    return Agent(
        model=model or FunctionModel(designer, name="scripted-designer"),
        instructions=INSTRUCTIONS,
        tools=[ThreeJSToolkit(groups=["core", "check", "views", "files"], timeout=30)],
        artifacts_dir=out,
        max_turns=14,
    )


def main() -> None:
    """Run the agent once and print each tool's report, the images it got, and the answer."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model", help="a model string such as local:default (default: offline script)"
    )
    parser.add_argument(
        "--out", type=Path, default=Path("agentsdk-runs"), help="folder for run artifacts"
    )
    args = parser.parse_args()
    agent = build_agent(args.model, args.out)
    result = agent.run_sync(TASK)
    seen = 0
    for message in result.messages:
        for tool_result in message.tool_results:
            status = "error" if tool_result.is_error else "ok"
            print(f"== {tool_result.name}: {status}")
            print(tool_result.text)
            for part in tool_result.parts:
                if isinstance(part, ImagePart):
                    seen += 1
                    saved = (
                        result.artifacts_dir or args.out
                    ) / f"seen-{seen}-{tool_result.name}.png"
                    saved.parent.mkdir(parents=True, exist_ok=True)
                    saved.write_bytes(part.data)
                    print(f"(image {seen}: {saved})")
    print(result.output)


if __name__ == "__main__":
    main()
