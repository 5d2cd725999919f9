"""An agent builds a small three.js scene, looks at the render, fixes what is wrong, and exports it.

Runs offline by default: a scripted designer (``FunctionModel``) drives the real
``ThreeJSToolkit`` (headless Chromium + WebGL). Its first attempt forgets the lights, so the
frame comes back blank as an error result; it reads the message, adds lights, checks the colour
in the picture it got back, looks at four views, and exports a GLB. Pass ``--model`` to let a
real model that accepts images plan instead, e.g. ``--model openai:gpt-4.1``.

    uv run python examples/threejs_scene.py --out /tmp/threejs-demo
"""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

from agentsdk.testing import FunctionModel
from agentsdk_threejs import ThreeJSToolkit
from PIL import Image as PILImage

from agentsdk import Agent, ImagePart, ModelRequest, ToolCallPart

TASK = "Build a red box standing on a grey floor, check the render, show it from four sides, export it."
INSTRUCTIONS = (
    "You build three.js scenes with the threejs tools. Look at every image you get back and "
    "fix the scene until it shows what was asked. Finish with a short plain-text answer."
)

FIRST_TRY = """const box = new THREE.Mesh(
  new THREE.BoxGeometry(1.5, 1.5, 1.5),
  new THREE.MeshStandardMaterial({ color: 0xff2020 })
);
box.name = 'box';
box.position.y = 0.75;
const floor = new THREE.Mesh(new THREE.PlaneGeometry(8, 8), new THREE.MeshStandardMaterial({ color: 0x808080 }));
floor.name = 'floor';
floor.rotation.x = -Math.PI / 2;
scene.add(box, floor);
camera.lookAt(0, 0.75, 0);
"""

ADD_LIGHTS = """scene.background = new THREE.Color(0xbfd8ff);
scene.add(new THREE.AmbientLight(0xffffff, 0.6));
const sun = new THREE.DirectionalLight(0xffffff, 2.5);
sun.position.set(3, 6, 4);
scene.add(sun);
"""


def centre_colour(image: ImagePart) -> tuple[int, int, int]:
    """What the designer "sees": the colour in the middle of the picture."""
    picture = PILImage.open(io.BytesIO(image.data)).convert("RGB")
    r, g, b = picture.getpixel((picture.width // 2, picture.height // 2))
    return int(r), int(g), int(b)


def designer(request: ModelRequest) -> ToolCallPart | str:
    """The offline stand-in for a model: build, read the error, fix, look, verify, export."""
    results = [r for m in request.messages for r in m.tool_results]
    if not results:
        return ToolCallPart(name="render_scene", arguments={"code": FIRST_TRY, "reset": True})
    last = results[-1]
    if last.name == "render_scene" and last.is_error:
        if "blank" not in last.text:
            return f"I could not build the scene: {last.text}"
        return ToolCallPart(name="render_scene", arguments={"code": ADD_LIGHTS})
    if last.name == "render_scene":
        images = [part for part in last.parts if isinstance(part, ImagePart)]
        r, g, b = centre_colour(images[0])
        if not (r > 120 and r > 2 * g and r > 2 * b):
            return f"The centre of the picture is rgb({r}, {g}, {b}), not red; giving up."
        return ToolCallPart(
            name="render_views", arguments={"views": ["front", "side", "top", "iso"]}
        )
    if last.name == "render_views":
        return ToolCallPart(name="export_glb", arguments={"path": "red_box.glb"})
    if last.name == "export_glb" and not last.is_error:
        exported = json.loads(last.text)
        return (
            "The red box stands on the grey floor and is lit (the first render was blank because "
            f"the scene had no lights). Exported {exported['meshes_in_file']} meshes to {exported['path']}."
        )
    return f"Something went wrong: {last.text}"


def build_agent(model: str | None, out: Path) -> Agent:
    """The agent with the three.js toolkit; runs and exports go under ``out``."""
    return Agent(
        model=model or FunctionModel(designer, name="scripted-designer"),
        instructions=INSTRUCTIONS,
        tools=[ThreeJSToolkit(groups="all", timeout=30)],
        artifacts_dir=out,
        max_turns=12,
    )


def main() -> None:
    """Run the agent once and print what it says, the images it saw, and where files went."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model", help="a model string such as openai:gpt-4.1 (default: offline script)"
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
            for part in tool_result.parts:
                if isinstance(part, ImagePart):
                    seen += 1
                    saved = (
                        result.artifacts_dir or args.out
                    ) / f"seen-{seen}-{tool_result.name}.png"
                    saved.parent.mkdir(parents=True, exist_ok=True)
                    saved.write_bytes(part.data)
                    print(f"image {seen} from {tool_result.name}: {saved}")
            status = "error" if tool_result.is_error else "ok"
            print(f"{tool_result.name}: {status}: {tool_result.text.splitlines()[0][:120]}")
    print(result.output)


if __name__ == "__main__":
    main()
