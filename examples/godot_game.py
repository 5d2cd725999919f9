"""An agent builds a small Godot 3D scene with a bouncing ball, runs it, fixes its script, and shows it.

Runs offline by default: a scripted game maker (``FunctionModel``) drives the real
``GodotToolkit`` (Godot 3 headless + the windowed runner under Xvfb). Its first script looks up
a node that does not exist; attaching it runs the scene for a few frames, so the call comes back
as an error with the file and line. It reads the message, fixes the script, runs the game and
takes a screenshot. It decides from the
screenshot's text report alone (no pixel is looked at): the camera starts too close, the report
says the ball is cut off, so it moves the camera back and looks again. Pass ``--model`` to let a
real model plan instead, e.g. ``--model openai:gpt-4.1``.

    uv run python examples/godot_game.py --project /tmp/godot-demo
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from pathlib import Path

from agentsdk.testing import FunctionModel
from agentsdk_godot import GodotToolkit

from agentsdk import Agent, ImagePart, ModelRequest, ToolCallPart

TASK = (
    "Make a small 3D scene with a red ball that bounces up and down, run it, and show me a picture."
)
INSTRUCTIONS = (
    "You build Godot 3 games with the godot tools. Values are Godot literals such as "
    "Vector3( 0, 1, 0 ). When a tool reports an error with a file and line, fix that code and "
    "try again. Finish with a short plain-text answer."
)

BUGGY_SCRIPT = """extends MeshInstance

export var height = 1.0
var time = 0.0

func _ready():
\tget_node("Shadow").visible = true

func _process(delta):
\ttime += delta
\ttranslation.y = 1.0 + abs(sin(time * 3.0)) * height
"""

FIXED_SCRIPT = BUGGY_SCRIPT.replace('\tget_node("Shadow").visible = true\n', "\tvisible = true\n")

# The scripted game maker's plan: each step is a tool call; the script reacts to errors below.
BUILD_STEPS: list[tuple[str, dict[str, object]]] = [
    ("create_scene", {"path": "res://main.tscn", "root_type": "Spatial", "main": True}),
    (
        "add_node",
        {
            "scene": "res://main.tscn",
            "name": "Ball",
            "type": "MeshInstance",
            "properties": {"mesh": "SphereMesh()", "translation": "Vector3( 0, 1, 0 )"},
        },
    ),
    (
        "set_property",
        {
            "scene": "res://main.tscn",
            "node": "Ball",
            "property": "mesh/material",
            "value": "SpatialMaterial()",
        },
    ),
    (
        "set_property",
        {
            "scene": "res://main.tscn",
            "node": "Ball",
            "property": "mesh/material/albedo_color",
            "value": "Color( 0.9, 0.1, 0.1, 1 )",
        },
    ),
    (
        "add_node",
        {
            "scene": "res://main.tscn",
            "name": "Camera",
            "type": "Camera",
            "properties": {"translation": "Vector3( 0, 1.2, 1.5 )"},  # too close
        },
    ),
    (
        "add_node",
        {
            "scene": "res://main.tscn",
            "name": "Sun",
            "type": "DirectionalLight",
            "properties": {"rotation_degrees": "Vector3( -50, 30, 0 )"},
        },
    ),
    ("write_script", {"path": "res://bounce.gd", "source": BUGGY_SCRIPT}),
    ("attach_script", {"scene": "res://main.tscn", "node": "Ball", "script": "res://bounce.gd"}),
]


def game_maker(request: ModelRequest) -> ToolCallPart | str:
    """The offline stand-in for a model: build, run, read the error, fix, run, look."""
    results = [r for m in request.messages for r in m.tool_results]
    if len(results) < len(BUILD_STEPS):
        if results and results[-1].is_error:
            return f"I could not build the scene: {results[-1].text}"
        name, arguments = BUILD_STEPS[len(results)]
        return ToolCallPart(name=name, arguments=arguments)
    last = results[-1]
    if last.name in ("attach_script", "write_script", "run_project") and last.is_error:
        if not re.search(r"res://bounce\.gd:\d+: error", last.text):
            return f"The game failed in a way I cannot fix: {last.text}"
        return ToolCallPart(
            name="write_script", arguments={"path": "res://bounce.gd", "source": FIXED_SCRIPT}
        )
    if last.name == "write_script" and not last.is_error:
        return ToolCallPart(name="run_project", arguments={"seconds": 1.0})
    if last.name == "run_project":
        return ToolCallPart(
            name="screenshot", arguments={"frames": 20, "width": 384, "height": 288}
        )
    if last.name == "screenshot" and not last.is_error:
        # the report, not the picture: "Ball: 31% at x.. y.., red, cut off 12% (top)"
        ball = re.search(r"^Ball: (.*)$", last.text, re.MULTILINE)
        if ball is None or "cut off" in ball.group(1) or "not visible" in ball.group(1):
            if sum(r.name == "screenshot" for r in results) >= 3:
                return f"I could not frame the ball: {last.text}"
            return ToolCallPart(
                name="set_property",
                arguments={
                    "scene": "res://main.tscn",
                    "node": "Camera",
                    "property": "translation",
                    "value": "Vector3( 0, 1.2, 5 )",
                },
            )
        coverage = ball.group(1).split(" ", 1)[0].rstrip(",")
        first_error = next(r for r in results if r.is_error)
        where = re.search(r"res://bounce\.gd:\d+", first_error.text)
        runs = [json.loads(r.text) for r in results if r.name == "run_project" and not r.is_error]
        return (
            f"The red ball bounces in front of the camera and covers {coverage} of the frame, "
            "fully in view (the first picture had it cut off, so I moved the camera back). "
            f"Attaching the script ran the scene, which failed at "
            f"{where.group(0) if where else 'bounce.gd'} (a node named "
            f"Shadow does not exist); I removed that line and the game then ran "
            f"{runs[-1].get('frames')} frames without errors."
        )
    if last.name == "set_property" and not last.is_error:
        return ToolCallPart(
            name="screenshot", arguments={"frames": 20, "width": 384, "height": 288}
        )
    return f"Something went wrong: {last.text}"


def build_agent(model: str | None, project: Path) -> Agent:
    """The agent with the Godot toolkit working on ``project``."""
    return Agent(
        model=model or FunctionModel(game_maker, name="scripted-game-maker"),
        instructions=INSTRUCTIONS,
        tools=[GodotToolkit(project)],
        max_turns=20,
    )


def main() -> None:
    """Run the agent once and print each tool result, where the screenshot went, and the answer."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--model", help="a model string such as openai:gpt-4.1 (default: offline script)"
    )
    parser.add_argument(
        "--project",
        type=Path,
        default=None,
        help="Godot project folder (default: a new temp folder)",
    )
    args = parser.parse_args()
    project = args.project or Path(tempfile.mkdtemp(prefix="godot-demo-"))
    result = build_agent(args.model, project).run_sync(TASK)
    for message in result.messages:
        for tool_result in message.tool_results:
            status = "error" if tool_result.is_error else "ok"
            print(
                f"{tool_result.name}: {status}: {tool_result.text.splitlines()[0][:140] if tool_result.text else ''}"
            )
            for part in tool_result.parts:
                if isinstance(part, ImagePart):
                    shot = project / "screenshot.png"
                    shot.write_bytes(part.data)
                    print(f"screenshot: {shot}")
    print(result.output)


if __name__ == "__main__":
    main()
