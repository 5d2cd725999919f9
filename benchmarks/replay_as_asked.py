"""Which recorded calls the local model's mends (``agentsdk_openai.local.as_asked``) would
change, and which would be asked for as the call that makes a part first
(``agentsdk_openai.local.unmade.premature_part``): replayed offline over what earlier runs
wrote, with the real three.js, Blender and Godot tool schemas, no engine.

Reads `agentsdk eval` output folders (their ``trajectories/*.json``) and
``new_user_prompts.py`` results (``FILE.json`` with its ``--traces`` folder next to it, named
as the file without ``.json``). Each call is replayed under the conversation of its run up
to it (the request, and the calls before it with their results), so the checks see what
they would have seen at that turn. Prints each call that would change, before and after,
each call that would be replaced by one making a part, and a count of each.

    uv run --no-sync python benchmarks/replay_as_asked.py EVAL_DIR|RESULTS.json ...
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from agentsdk_blender import BlenderToolkit
from agentsdk_godot import GodotToolkit
from agentsdk_openai.local.as_asked import as_asked
from agentsdk_openai.local.reask import drifting
from agentsdk_openai.local.unmade import premature_part
from agentsdk_threejs import ThreeJSToolkit

from agentsdk import (
    Message,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
)

TOOLKITS = {"threejs": ThreeJSToolkit, "blender": BlenderToolkit, "godot": GodotToolkit}


@dataclass
class Run:
    name: str
    kit: str | None
    """The toolkit the run used, when the record says (its task id, or its tools)."""
    prompt: str
    calls: list[tuple[ToolCallPart, ToolResultPart | None]]
    turns: list[object] = field(default_factory=list)
    """Each call's turn (calls of one turn share it), where the record says."""


def _specs() -> dict[str, dict[str, ToolSpec]]:
    return {kit: {t.name: t.spec() for t in toolkit().tools()} for kit, toolkit in TOOLKITS.items()}


def _result(call: ToolCallPart, text: str, error: bool) -> ToolResultPart:
    return ToolResultPart(
        call_id=call.id, name=call.name, parts=[TextPart(text=text)], is_error=error
    )


def _runs(source: Path) -> Iterator[Run]:
    """Every recorded run: its request and its calls with their results, in order."""
    if source.is_dir():
        for path in sorted((source / "trajectories").glob("*.json")):
            record = json.loads(path.read_text())
            messages = record["messages"]
            prompt = next(
                part["text"]
                for m in messages
                if m["role"] == "user"
                for part in m["parts"]
                if part.get("kind") == "text"
            )
            results = {
                part["call_id"]: part
                for m in messages
                for part in m["parts"]
                if part.get("kind") == "tool_result"
            }
            calls, turns = [], []
            for at, message in enumerate(messages):
                for part in message["parts"] if message["role"] == "assistant" else []:
                    if part.get("kind") != "tool_call":
                        continue
                    call = ToolCallPart(
                        id=part.get("id") or f"c{len(calls)}",
                        name=part["name"],
                        arguments=part["arguments"],
                    )
                    found = results.get(call.id)
                    text = " ".join(p.get("text", "") for p in (found or {}).get("parts", []))
                    error = bool((found or {}).get("is_error"))
                    calls.append((call, _result(call, text, error) if found else None))
                    turns.append(at)
            task = str(record.get("task_id", ""))
            yield Run(task, task.split("/")[0] or None, prompt, calls, turns)
        return
    results = json.loads(source.read_text())
    traces = source.with_suffix("")
    for row in results["runs"]:
        mode = "on" if row.get("toolkit_instructions", True) else "off"
        trace = traces / f"p{row['prompt_id']}_{mode}.jsonl"
        run = Run(f"{source.stem}/p{row['prompt_id']}", row.get("toolkit"), row["prompt"], [])
        started: dict[str, ToolCallPart] = {}
        for line in trace.read_text().splitlines():
            event = json.loads(line)
            if event["event"] == "ToolCallStarted":
                call_id = event.get("call_id") or f"c{len(started)}"
                call = ToolCallPart(id=call_id, name=event["name"], arguments=event["arguments"])
                started[call_id] = call
                run.calls.append((call, None))
                run.turns.append(event.get("turn"))
            elif event["event"] == "ToolCallFinished" and event.get("call_id") in started:
                call = started[event["call_id"]]
                at = next(i for i, (c, _) in enumerate(run.calls) if c is call)
                text = event.get("text") or event.get("preview") or ""
                run.calls[at] = (call, _result(call, text, bool(event.get("is_error"))))
        yield run


def _tools(run: Run, specs: dict[str, dict[str, ToolSpec]]) -> dict[str, ToolSpec]:
    """The tools of the run's toolkit; without one named, that whose tools it called."""
    if run.kit in specs:
        return specs[run.kit]
    called = {call.name for call, _ in run.calls}
    return max(specs.values(), key=lambda tools: len(called & set(tools)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="+", type=Path)
    args = parser.parse_args()
    specs = _specs()
    seen = changed = premature = drifts = 0
    for source in args.sources:
        for run in _runs(source):
            tools = _tools(run, specs)
            messages = [Message.user(run.prompt)]
            turned = [Message.user(run.prompt)]  # the calls grouped by turn, as sent
            asked: set[str] = set()  # the model asks for each part once per run
            for at, (call, result) in enumerate(run.calls):
                turn = run.turns[at] if at < len(run.turns) else None
                alone = turn is None or run.turns.count(turn) == 1
                if call.name in tools and alone:
                    request = ModelRequest(messages=turned, tools=list(tools.values()))
                    if drifting(request, ModelResponse(parts=[call])):
                        drifts += 1
                        print(
                            f"{run.name} {call.name} {json.dumps(call.arguments)}\n -> the answer"
                        )
                if turn is None or at == 0 or run.turns[at - 1] != turn:
                    turned.append(Message(role="assistant", parts=[call]))
                    turned.append(Message(role="tool", parts=[]))
                else:
                    turned[-2] = Message(role="assistant", parts=[*turned[-2].parts, call])
                if result is not None:
                    turned[-1] = Message(role="tool", parts=[*turned[-1].parts, result])
                if call.name in tools:
                    seen += 1
                    request = ModelRequest(messages=messages, tools=list(tools.values()))
                    (mended,) = as_asked(request, ModelResponse(parts=[call])).tool_calls
                    if mended.arguments != call.arguments:
                        changed += 1
                        print(
                            f"{run.name} {call.name}\n    {json.dumps(call.arguments)}\n"
                            f" -> {json.dumps(mended.arguments)}"
                        )
                    part = premature_part(request, [call])
                    if part is not None and part.key.lower() not in asked:
                        asked.add(part.key.lower())
                        premature += 1
                        print(
                            f"{run.name} {call.name} {json.dumps(call.arguments)}\n"
                            f" -> the call that makes {part.key} first"
                        )
                messages.append(Message(role="assistant", parts=[call]))
                if result is not None:
                    messages.append(Message(role="tool", parts=[result]))
    print(f"{changed} of {seen} calls would change")
    print(f"{premature} of {seen} calls would be asked for as the call that makes a part first")
    print(
        f"{drifts} of {seen} calls would be the answer asked for (a knob turned, the request done)"
    )


if __name__ == "__main__":
    main()
