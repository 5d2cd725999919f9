"""An agent builds a spinning turret prefab in a live Unity Editor.

Needs a running Unity Editor whose project has the agentsdk bridge package installed
(tools/unity/unity-package, see tools/unity/README.md). Without one it prints how to start one
and exits with status 0. It finds the editor through ``--project`` (the Unity project folder,
whose Library/AgentSdkBridge/connection.json the package writes) or the AGENTSDK_UNITY_* env vars.

By default a scripted designer (``FunctionModel``) plays the model, offline: its first script has
a type error, it reads Unity's compiler error (file and line), fixes the script using the file's
hash, builds the turret, saves it as a prefab and looks at a camera screenshot. Pass ``--model``
to let a real model plan instead, e.g. ``--model openai:gpt-4.1``.

    uv run python examples/unity_prefab.py --project ~/UnityProjects/Demo
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import anyio
from agentsdk.testing import FunctionModel
from agentsdk_unity import BridgeSettings, BridgeUnavailableError, UnityBridge, UnityToolkit

from agentsdk import Agent, ImagePart, ModelRequest, ToolCallPart, ToolResultPart

TASK = "Make a turret prefab: a cube that spins about Y at 180 degrees per second. Save it and show me."
INSTRUCTIONS = (
    "You work inside a live Unity Editor through the unity tools. Write C# scripts with write_script, "
    "fix the compiler errors it reports (pass the hash it gives back as expected_hash), then build "
    "GameObjects, save prefabs and look at a screenshot before you answer in plain text."
)
SCRIPT_PATH = "Assets/Scripts/Spinner.cs"
BUGGY = """using UnityEngine;

public class Spinner : MonoBehaviour
{
    public float speed = 90f;

    void Update()
    {
        int step = speed * Time.deltaTime;
        transform.Rotate(0f, step, 0f);
    }
}
"""
FIXED = BUGGY.replace("int step", "float step")


def last_result(request: ModelRequest) -> ToolResultPart | None:
    """The most recent tool result the model was shown."""
    for message in reversed(request.messages):
        for part in message.parts:
            if isinstance(part, ToolResultPart):
                return part
    return None


def saw_image(request: ModelRequest) -> bool:
    """Whether a picture reached the model (inside the tool result or in a trailing message)."""
    for message in request.messages:
        for part in message.parts:
            inner = part.parts if isinstance(part, ToolResultPart) else [part]
            if any(isinstance(p, ImagePart) for p in inner):
                return True
    return False


def designer(request: ModelRequest) -> ToolCallPart | str:
    """The offline stand-in for a model: write, read the compiler error, fix, build, save, look."""
    done = [p.name for m in request.messages for p in m.parts if isinstance(p, ToolResultPart)]
    last = last_result(request)
    if not done:
        return ToolCallPart(name="write_script", arguments={"path": SCRIPT_PATH, "content": BUGGY})
    if last is not None and last.name == "write_script" and last.is_error:
        text = " ".join(getattr(p, "text", "") for p in last.parts)
        found = re.search(r"hash ([0-9a-f]{64})", text)
        arguments: dict[str, object] = {"path": SCRIPT_PATH, "content": FIXED}
        if found:
            arguments["expected_hash"] = found.group(1)
        return ToolCallPart(name="write_script", arguments=arguments)
    plan: list[tuple[str, dict[str, object]]] = [
        ("create_gameobject", {"name": "Turret", "primitive": "Cube", "position": [0, 0.5, 0]}),
        ("add_component", {"path": "Turret", "component": "Spinner"}),
        ("set_field", {"path": "Turret", "component": "Spinner", "field": "speed", "value": 180}),
        ("save_prefab", {"path": "Turret", "asset_path": "Assets/Prefabs/Turret.prefab"}),
        ("screenshot", {"width": 320, "height": 240}),
    ]
    for name, arguments in plan:
        if name not in done:
            return ToolCallPart(name=name, arguments=arguments)
    seen = "and the screenshot shows it" if saw_image(request) else "(no screenshot reached me)"
    return f"Saved Assets/Prefabs/Turret.prefab: a cube with Spinner at 180 degrees per second, {seen}."


async def editor_available(settings: BridgeSettings) -> str | None:
    """None when an editor answers, else the reason it does not."""
    try:
        async with UnityBridge(settings) as bridge:
            assert bridge.welcome is not None
            print(f"Connected to {bridge.welcome.server} (editor state: {bridge.welcome.state})")
    except BridgeUnavailableError as missing:
        return missing.message
    return None


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--project",
        type=Path,
        help="Unity project folder (default: env vars, then the current folder)",
    )
    parser.add_argument(
        "--model", help="a real model, e.g. openai:gpt-4.1 (default: the offline designer)"
    )
    parser.add_argument("--artifacts", type=Path, help="where run folders (screenshots) go")
    args = parser.parse_args(argv)
    settings = BridgeSettings(project_path=args.project, busy_timeout=300)

    reason = await editor_available(settings)
    if reason is not None:
        print(
            "This example needs a running Unity Editor with the agentsdk bridge package "
            f"(tools/unity/unity-package); none answered.\n  {reason}",
            file=sys.stderr,
        )
        return 0

    model = args.model or FunctionModel(designer)
    agent = Agent(
        model=model,
        instructions=INSTRUCTIONS,
        tools=[UnityToolkit(settings=settings)],
        artifacts_dir=args.artifacts,
    )
    result = await agent.run(TASK)
    for message in result.messages:
        for part in message.parts:
            if isinstance(part, ToolResultPart):
                text = " ".join(
                    getattr(p, "text", "") for p in part.parts if getattr(p, "text", None)
                )
                flag = "ERROR " if part.is_error else ""
                print(f"- {part.name}: {flag}{text[:200]}")
    print(result.output)
    if result.artifacts_dir is not None:
        print(f"Artifacts: {result.artifacts_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
