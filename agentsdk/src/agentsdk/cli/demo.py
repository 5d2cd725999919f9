"""``agentsdk demo``: two tasks from the shipped suites on the embedded model, offline.

A three.js task the agent can only finish by reading what its render shows (the box
starts cut off at the frame's edge), then a finance question answered from real
data with its source cited. Each result is judged by the task's own verifier, and the
demo says plainly what passed and what did not.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, TextIO

import anyio

from .. import plugins
from ..artifacts import ArtifactStore, default_runs_dir
from ..errors import PluginNotFound
from ..events import (
    Event,
    ImageProduced,
    ModelRequestStarted,
    RunFailed,
    ToolCallFinished,
    ToolCallStarted,
)
from ..models import Model, ModelSettings, Tiers
from ..tasks import Rollout, Suite, Task, ToolkitPool, World, run_task
from ..tasks.runner import EvalResults, make_model, trajectory
from ..tasks.summary import summarize, write_markdown
from ..tools import ToolContext
from ._keep_alive import add_keep_alive_option, engine_keep_alive
from ._progress import Progress, show_plugin_logs

DEMO_MODEL = "local:default"
DEMO_TASKS = ("threejs/place-and-frame", "finance/ibm-total-return")
"""A scene the agent must correct from its render's report, then a cited number."""

_SEES = ("cut off", "not visible", "hidden", "hint:", "blank", "objects visible")


class DemoProgress(Progress):
    """Live lines for one task: turns, tiers, tool calls with durations, and the report
    lines the agent acted on (the timestamped lines of ``agentsdk run``'s progress)."""

    def __call__(self, event: Event) -> None:
        if isinstance(event, ModelRequestStarted):
            tier = f", {event.tier} tier" if event.tier else ""
            self._line(f"turn {event.turn}: asking {event.model}{tier}")
        elif isinstance(event, ToolCallStarted):
            args = json.dumps(event.arguments, ensure_ascii=False)
            self._line(f"  -> {event.name}({args[:140]})")
        elif isinstance(event, ToolCallFinished):
            mark = "error" if event.is_error else "ok"
            self._line(f"  <- {event.name} {mark} in {event.duration:.2f}s")
            text = event.text or event.preview
            seen = [line for line in text.splitlines() if any(s in line for s in _SEES)]
            for line in seen[:5]:
                self._line(f"     sees: {line.strip()[:160]}")
            if event.is_error and not seen:
                self._line(
                    f"     error: {text.strip().splitlines()[0][:160] if text.strip() else ''}"
                )
        elif isinstance(event, ImageProduced):
            self._line(f"     image: {event.path}")
        elif isinstance(event, RunFailed):
            self._line(f"  run ended early: {event.error_type}: {event.message[:160]}")


def _find(task_id: str) -> tuple[Suite, Task]:
    if "/" not in task_id:
        raise SystemExit(
            f"a task id looks like suite/name, not {task_id!r} (see agentsdk demo --list)"
        )
    try:
        suite = plugins.load_suite(task_id.split("/", 1)[0])
        return suite, suite.get(task_id)
    except (PluginNotFound, KeyError) as exc:
        message = exc.args[0] if exc.args else str(exc)
        raise SystemExit(f"agentsdk demo: {message} (see agentsdk demo --list)") from None


async def _export_scene(world: World) -> None:
    """Save the finished 3D scene as a GLB next to the renders (the demo's own step,
    after the verifier has judged the run)."""
    for toolkit in world.toolkits.values():
        for tool in toolkit.tools():
            if tool.name in ("export_glb", "export_asset"):
                ctx = ToolContext(
                    run_id="demo",
                    call_id="export",
                    tool_name=tool.name,
                    turn=0,
                    artifacts=ArtifactStore(world.workdir),
                )
                await tool.call({"path": "scene.glb"}, ctx)
                return


async def run_demo(
    task_ids: list[str],
    model: str | Model | Tiers,
    out: Path,
    stream: TextIO,
    trace: str | None = None,
) -> list[Rollout]:
    """Run each task once and record it in ``out``; the rollouts, in order (a model
    object passed in is closed at the end, like one made from a string)."""
    found = [_find(t) for t in task_ids]
    results = EvalResults(out)
    resolved: Model | Tiers | str = make_model(model)
    rollouts: list[Rollout] = []
    try:
        async with ToolkitPool() as pool:
            for n, (suite, task) in enumerate(found, start=1):
                stream.write(f"\ntask {n}/{len(found)}: {task.id}\n  {task.prompt}\n")
                turns: list[dict[str, Any]] = []
                transcript: list[Any] = []
                progress = DemoProgress(stream)

                async def keep(world: World, transcript: list[Any] = transcript) -> None:
                    transcript[:] = world.messages
                    if world.task.id.startswith(("threejs/", "blender/")):
                        try:
                            await _export_scene(world)
                        except Exception as exc:  # the GLB is a bonus; the verdict stands
                            stream.write(f"  (could not export the scene: {exc})\n")

                rollout = await run_task(
                    task,
                    resolved,
                    suite=suite,
                    pool=pool,
                    workdir=results.runs,
                    settings=ModelSettings(temperature=0),
                    on_event=progress,
                    world_hook=keep,
                    trace=trace,
                )
                results.record(rollout, trajectory(rollout, transcript, turns))
                rollouts.append(rollout)
                verdict = "PASSED" if rollout.passed else rollout.status.upper()
                stream.write(
                    f"  {verdict} (score {rollout.score:.2f}) in {rollout.seconds:.0f} s, "
                    f"{rollout.turns} turns, {rollout.usage.total_tokens} tokens\n"
                )
                if rollout.verdict is not None:
                    for reason in rollout.verdict.reasons:
                        stream.write(f"    {reason}\n")
                for problem in (rollout.error, rollout.broken):
                    if problem:
                        stream.write(f"    {problem.splitlines()[0][:300]}\n")
                if rollout.output:
                    stream.write(
                        "  answer: " + rollout.output.strip().replace("\n", " ")[:400] + "\n"
                    )
    finally:
        if not isinstance(resolved, str):
            await resolved.aclose()
    return rollouts


def _files(rollout: Rollout, suffixes: tuple[str, ...]) -> list[Path]:
    folder = Path(rollout.workdir)
    return (
        sorted(p for p in folder.glob("*") if p.suffix.lower() in suffixes)
        if folder.is_dir()
        else []
    )


def cmd_demo(args: argparse.Namespace) -> int:
    """``agentsdk demo``: the offline demo on the embedded local model."""
    if args.list:
        for name in plugins.suite_names():
            for task in plugins.load_suite(name):
                tags = f" [{', '.join(task.tags)}]" if task.tags else ""
                print(f"{task.id}{tags}: {task.description or task.prompt[:90]}")
        return 0
    task_ids = args.task or list(DEMO_TASKS)
    for task_id in task_ids:
        _find(task_id)  # an unknown task is an error before any engine starts
    out = Path(args.out) if args.out else default_runs_dir() / time.strftime("demo-%Y%m%d-%H%M%S")
    name = args.model if isinstance(args.model, str) else args.model.name
    print(
        f"agentsdk demo: model {name}, {len(task_ids)} task(s), results in {out}",
        file=sys.stderr,
    )
    started = time.perf_counter()
    with engine_keep_alive(args):
        rollouts = anyio.run(run_demo, task_ids, args.model, out, sys.stderr, args.trace)
    seconds = time.perf_counter() - started
    summary = summarize("demo", name, 1, rollouts, seconds)
    report = write_markdown(out / "report.md", summary, rollouts)
    passed = sum(r.passed for r in rollouts)
    lines = [
        f"agentsdk demo on {name}: {passed} of {len(rollouts)} tasks passed in {seconds:.0f} s"
    ]
    for r in rollouts:
        mark = "passed" if r.passed else f"FAILED ({r.status}, score {r.score:.2f})"
        lines.append(f"  {r.task_id}: {mark}, {r.seconds:.0f} s, {r.usage.total_tokens} tokens")
        if not r.passed:
            why = [x for x in (r.verdict.reasons if r.verdict else []) if x.startswith("FAIL")]
            lines += [f"    {x[:300]}" for x in why]
            lines += [f"    {p.splitlines()[0][:300]}" for p in (r.error, r.broken) if p]
        for image in _files(r, (".png",))[-2:]:
            lines.append(f"    render: {image}")
        for glb in _files(r, (".glb",)):
            lines.append(f"    scene:  {glb}")
        if r.output and not r.task_id.startswith(("threejs/", "blender/")):
            lines.append("    answer: " + r.output.strip().replace("\n", " ")[:300])
    lines.append(f"  report: {report}")
    if passed < len(rollouts):
        lines.append(
            "  Not every task passed: the verifiers' reasons are above and in the report. "
            "Small local models miss sometimes; run it again, or try --model openai:..."
        )
    print("\n".join(lines))
    return 0 if rollouts and all(r.passed for r in rollouts) else 1


def register(sub: Any) -> None:
    """Add ``demo`` to the ``agentsdk`` command."""
    p = sub.add_parser(
        "demo",
        help="the offline demo: a three.js task corrected from what the render shows, then a "
        "cited finance answer, each judged by its task's verifier",
    )
    p.add_argument("--model", default=DEMO_MODEL, help=f"model string (default: {DEMO_MODEL})")
    p.add_argument(
        "--task",
        action="append",
        default=None,
        metavar="ID",
        help=f"a task from any installed suite, e.g. finance/aapl-cagr (repeatable; default: "
        f"{' and '.join(DEMO_TASKS)})",
    )
    p.add_argument("--list", action="store_true", help="list every installed task and exit")
    p.add_argument("--out", default=None, help="results folder (default: in the user cache)")
    p.add_argument("--trace", default=None, help="append the runs' events to this JSONL file")
    add_keep_alive_option(p)
    p.set_defaults(func=cmd_demo, setup=show_plugin_logs)
