"""Which recorded maker calls the local model's mends (``agentsdk_openai.local.as_asked``)
would change: replayed offline over what earlier runs wrote, with the real three.js, Blender
and Godot tool schemas, no engine.

Reads `agentsdk eval` output folders (their ``trajectories/*.json``) and
``new_user_prompts.py`` results (``FILE.json`` with its ``--traces`` folder next to it, named
as the file without ``.json``). Each call is replayed alone, under the request of its run,
so the mends see what they would have seen at that turn (they read only the newest request
and the call). Prints each call that would change, before and after, and a count.

    uv run --no-sync python benchmarks/replay_as_asked.py EVAL_DIR|RESULTS.json ...
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentsdk_blender import BlenderToolkit
from agentsdk_godot import GodotToolkit
from agentsdk_openai.local.as_asked import as_asked
from agentsdk_threejs import ThreeJSToolkit

from agentsdk import Message, ModelRequest, ModelResponse, ToolCallPart, ToolSpec


def _specs() -> dict[str, ToolSpec]:
    specs: dict[str, ToolSpec] = {}
    for toolkit in (ThreeJSToolkit(), BlenderToolkit(), GodotToolkit()):
        for tool in toolkit.tools():
            specs[tool.name] = tool.spec()
    return specs


def _calls(source: Path) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
    """(run, prompt, tool, arguments) for every call a recorded run made."""
    if source.is_dir():
        for path in sorted((source / "trajectories").glob("*.json")):
            run = json.loads(path.read_text())
            messages = run["messages"]
            prompt = next(
                part["text"]
                for m in messages
                if m["role"] == "user"
                for part in m["parts"]
                if part.get("kind") == "text"
            )
            for message in messages:
                for part in message["parts"] if message["role"] == "assistant" else []:
                    if part.get("kind") == "tool_call":
                        yield run["task_id"], prompt, part["name"], part["arguments"]
        return
    results = json.loads(source.read_text())
    traces = source.with_suffix("")
    for row in results["runs"]:
        mode = "on" if row.get("toolkit_instructions", True) else "off"
        trace = traces / f"p{row['prompt_id']}_{mode}.jsonl"
        for line in trace.read_text().splitlines():
            event = json.loads(line)
            if event["event"] == "ToolCallStarted":
                run = f"{source.stem}/p{row['prompt_id']}"
                yield run, row["prompt"], event["name"], event["arguments"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="+", type=Path)
    args = parser.parse_args()
    specs = _specs()
    seen = changed = 0
    for source in args.sources:
        for run, prompt, tool, arguments in _calls(source):
            spec = specs.get(tool)
            if spec is None or spec.creates is None:
                continue
            seen += 1
            call = ToolCallPart(name=tool, arguments=arguments)
            request = ModelRequest(messages=[Message.user(prompt)], tools=[spec])
            (mended,) = as_asked(request, ModelResponse(parts=[call])).tool_calls
            if mended.arguments != call.arguments:
                changed += 1
                print(
                    f"{run} {tool}\n    {json.dumps(arguments)}\n -> {json.dumps(mended.arguments)}"
                )
    print(f"{changed} of {seen} maker calls would change")


if __name__ == "__main__":
    main()
