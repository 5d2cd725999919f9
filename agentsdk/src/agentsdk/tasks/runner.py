"""Evals: every task of a suite ``k`` times, several at once, each rollout recorded as
it finishes (so a killed eval resumes without losing or repeating finished work).

A results folder holds ``rollouts.jsonl`` (one ``Rollout`` per line, appended and
synced as each finishes), ``trajectories/`` (one JSON file per rollout: the messages
with images as files, per-turn model/tier, tokens and, when recorded, the token ids
the engine produced), ``runs/`` (each rollout's working folder: renders, exports),
``summary.json`` and ``report.md``.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio

from ..events import Event, TurnFinished
from ..messages import ImagePart, Message
from ..models import Model, ModelSettings, Tiers
from ..plugins import resolve_model
from .rollout import REFERENCE, Rollout, ToolkitPool, run_task
from .summary import EvalSummary, summarize, write_markdown
from .task import Suite, Task
from .world import World

__all__ = ["TRAJECTORY_SCHEMA", "EvalResults", "evaluate", "make_model", "run_one", "trajectory"]

TRAJECTORY_SCHEMA = "agentsdk.trajectory/1"

ModelSpec = Model | Tiers | str


class EvalResults:
    """A results folder: what finished, appended as it happens."""

    def __init__(self, folder: str | Path):
        self.dir = Path(folder)
        self.rollouts_path = self.dir / "rollouts.jsonl"
        self.trajectories = self.dir / "trajectories"
        self.runs = self.dir / "runs"

    def load(self) -> list[Rollout]:
        """Every rollout recorded so far, the latest attempt of each (task, sample) last
        wins; a line cut short by a killed process is ignored."""
        latest: dict[tuple[str, int], Rollout] = {}
        if not self.rollouts_path.is_file():
            return []
        for line in self.rollouts_path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            try:
                r = Rollout.model_validate_json(line)
            except ValueError:
                continue
            latest[(r.task_id, r.sample)] = r
        return list(latest.values())

    def finished(self) -> set[tuple[str, int]]:
        """(task, sample) pairs with a verdict that stands: passed or failed. Errors and
        broken tasks are run again on resume."""
        return {(r.task_id, r.sample) for r in self.load() if r.status in ("passed", "failed")}

    def append(self, rollout: Rollout) -> None:
        """Record one rollout durably (one write, then fsync)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        line = (rollout.model_dump_json() + "\n").encode("utf-8")
        with self.rollouts_path.open("ab") as f:
            if f.tell() and not _ends_with_newline(self.rollouts_path):
                # A process killed mid-line left a fragment: end it, or this line joins it.
                line = b"\n" + line
            f.write(line)
            f.flush()
            os.fsync(f.fileno())

    def trajectory_path(self, rollout: Rollout) -> Path:
        """Where ``rollout``'s trajectory is (or will be) written."""
        return self.trajectories / f"{_safe(rollout.task_id)}.s{rollout.sample}.json"

    def record(self, rollout: Rollout, trajectory: dict[str, Any]) -> Path:
        """Write a rollout's trajectory (images as files named by their content) and
        then append the rollout itself: a rollout in ``rollouts.jsonl`` always has its
        trajectory on disk."""
        self.trajectories.mkdir(parents=True, exist_ok=True)
        images = self.trajectories / "images"
        record = dict(trajectory)
        record["messages"] = [_store_images(m, images) for m in trajectory.get("messages", [])]
        path = self.trajectory_path(rollout)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, path)
        self.append(rollout)
        return path


def trajectory(
    rollout: Rollout, messages: list[Message], turns: list[dict[str, Any]]
) -> dict[str, Any]:
    """The full record of one rollout, JSON-ready except image bytes (under ``data``)."""
    return {
        "schema": TRAJECTORY_SCHEMA,
        "task_id": rollout.task_id,
        "sample": rollout.sample,
        "model": rollout.model,
        "status": rollout.status,
        "reward": rollout.score,
        "passed": rollout.passed,
        "verdict": rollout.verdict.model_dump() if rollout.verdict else None,
        "error": rollout.error,
        "seconds": rollout.seconds,
        "usage": rollout.usage.model_dump(),
        "turns": turns,
        "messages": [_message_json(m) for m in messages],
    }


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "-" for c in name).strip("-.") or "task"


def _message_json(message: Message) -> dict[str, Any]:
    def part(p: Any) -> Any:
        if isinstance(p, ImagePart):
            return {"kind": "image", "media_type": p.media_type, "data": p.data}
        if getattr(p, "kind", "") == "tool_result":
            data: dict[str, Any] = p.model_dump(mode="json", exclude={"parts"})
            data["parts"] = [part(x) for x in p.parts]
            return data
        return p.model_dump(mode="json")

    return {"role": message.role, "parts": [part(p) for p in message.parts]}


def _store_images(message: dict[str, Any], images: Path) -> dict[str, Any]:
    def part(p: Any) -> Any:
        if isinstance(p, dict) and p.get("kind") == "image" and isinstance(p.get("data"), bytes):
            data: bytes = p["data"]
            ext = str(p["media_type"]).split("/")[-1].replace("jpeg", "jpg")
            target = images / f"{hashlib.sha256(data).hexdigest()[:16]}.{ext}"
            if not target.exists():
                images.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            return {"kind": "image", "media_type": p["media_type"], "path": f"images/{target.name}"}
        if isinstance(p, dict) and isinstance(p.get("parts"), list):
            return {**p, "parts": [part(x) for x in p["parts"]]}
        return p

    return {"role": message["role"], "parts": [part(p) for p in message["parts"]]}


async def run_one(
    task: Task,
    sample: int,
    model: ModelSpec,
    *,
    suite: Suite,
    pool: ToolkitPool,
    runs: Path,
    settings: ModelSettings | None = None,
    grace: float = 120.0,
) -> tuple[Rollout, dict[str, Any]]:
    """One rollout and its trajectory; bounded by the task's timeout plus ``grace``
    (for setup and verification), after which the toolkits are replaced."""
    turns: list[dict[str, Any]] = []
    transcript: list[Message] = []

    def on_event(event: Event) -> None:
        if isinstance(event, TurnFinished):
            turn: dict[str, Any] = {
                "turn": event.turn,
                "model": event.model,
                "tier": event.tier,
                "tool_calls": event.tool_calls,
                "finish_reason": event.finish_reason,
                "usage": event.usage.model_dump(),
            }
            if event.token_trace is not None:
                turn["prompt_ids"] = event.token_trace.prompt_ids
                turn["response_ids"] = event.token_trace.response_ids
                turn["response_logprobs"] = event.token_trace.response_logprobs
            turns.append(turn)

    def keep(world: World) -> None:
        transcript[:] = world.messages

    rollout: Rollout | None = None
    started = time.perf_counter()
    with anyio.move_on_after(task.timeout + grace):
        rollout = await run_task(
            task,
            model,
            suite=suite,
            pool=pool,
            workdir=runs,
            sample=sample,
            settings=settings,
            on_event=on_event,
            world_hook=keep,
        )
    if rollout is None:
        with anyio.move_on_after(30, shield=True):
            await pool.discard(task.specs)
        rollout = Rollout(
            task_id=task.id,
            sample=sample,
            model=model if isinstance(model, str) else model.name,
            status="error",
            error=f"RolloutHung: the rollout did not finish within {task.timeout + grace:g} s "
            "(an engine stopped answering); its toolkits were replaced",
            seconds=time.perf_counter() - started,
        )
    return rollout, trajectory(rollout, transcript, turns)


async def evaluate(
    suite: Suite,
    model: ModelSpec | Callable[[], ModelSpec],
    *,
    out: str | Path,
    k: int = 1,
    concurrency: int = 1,
    resume: bool = False,
    backend: str = "local",
    settings: ModelSettings | None = None,
    on_rollout: Callable[[Rollout, int, int], None] | None = None,
    address: str | None = None,
    model_name: str | None = None,
) -> EvalSummary:
    """Run every task of ``suite`` ``k`` times and summarise.

    Args:
        suite: The tasks.
        model: A model, tiers, a model string (``"reference"`` plays each task's reference
            solution), or a function making one (called once per worker).
        out: The results folder.
        k: Samples per task.
        concurrency: Rollouts at once (each worker has its own toolkits: one browser,
            one Blender worker ...).
        resume: Keep the rollouts already in ``out`` that passed or failed; run the rest.
        backend: ``"local"`` (tasks in this process) or ``"ray"`` (Ray actors; needs
            ``agentsdk[ray]``).
        settings: Model settings for every rollout (e.g. ``temperature``, ``record_tokens``).
        on_rollout: Called with each finished rollout, how many are done and the total.
        address: The Ray cluster to join (``ray`` backend); a local one when ``None``.
        model_name: How to call the model in the summary (its name by default).
    """
    if k < 1 or concurrency < 1:
        raise ValueError("k and concurrency must be at least 1")
    results = EvalResults(out)
    if not resume and results.rollouts_path.exists():
        raise FileExistsError(
            f"{results.rollouts_path} exists: pass resume=True (--resume) to continue it, "
            "or choose another folder"
        )
    done = results.finished() if resume else set()
    jobs = [(t, s) for s in range(k) for t in suite.tasks if (t.id, s) not in done]
    total = len(suite.tasks) * k
    name = model_name or _name_of(model)
    started = time.perf_counter()
    if backend == "local":
        await _local(
            suite, model, jobs, results, concurrency, settings, on_rollout, total - len(jobs), total
        )
    elif backend == "ray":
        from .ray_backend import run_on_ray

        await run_on_ray(
            suite,
            model,
            jobs,
            results,
            concurrency,
            settings,
            on_rollout,
            total - len(jobs),
            total,
            address,
        )
    else:
        raise ValueError(f"unknown backend {backend!r}: use 'local' or 'ray'")
    wanted = {(t.id, s) for t in suite.tasks for s in range(k)}
    rollouts = [r for r in results.load() if (r.task_id, r.sample) in wanted]
    summary = summarize(suite.name, name, k, rollouts, time.perf_counter() - started)
    (results.dir / "summary.json").write_text(summary.model_dump_json(indent=2), encoding="utf-8")
    write_markdown(results.dir / "report.md", summary, rollouts)
    return summary


def _name_of(model: Any) -> str:
    if isinstance(model, str):
        return model
    name = getattr(model, "name", None)
    return str(name) if name else getattr(model, "__name__", "model")


def make_model(model: ModelSpec | Callable[[], ModelSpec]) -> ModelSpec:
    """The model a worker uses: strings other than ``"reference"`` resolved once."""
    if callable(model) and not isinstance(model, Model | Tiers):
        model = model()
    if isinstance(model, str) and model != REFERENCE:
        return resolve_model(model)
    return model


async def _local(
    suite: Suite,
    model: ModelSpec | Callable[[], ModelSpec],
    jobs: Sequence[tuple[Task, int]],
    results: EvalResults,
    concurrency: int,
    settings: ModelSettings | None,
    on_rollout: Callable[[Rollout, int, int], None] | None,
    done: int,
    total: int,
) -> None:
    queue = list(jobs)
    queue.reverse()  # pop() takes them in order
    count = [done]
    shared = make_model(model) if not callable(model) or isinstance(model, Model | Tiers) else None
    owned = isinstance(model, str) and model != REFERENCE

    async def worker(index: int) -> None:
        worker_model = shared if shared is not None else make_model(model)
        try:
            async with ToolkitPool() as pool:
                while queue:
                    task, sample = queue.pop()
                    rollout, record = await run_one(
                        task,
                        sample,
                        worker_model,
                        suite=suite,
                        pool=pool,
                        runs=results.runs,
                        settings=settings,
                    )
                    rollout.worker = record["worker"] = f"local:{index}"
                    record["retries"] = []
                    results.record(rollout, record)
                    count[0] += 1
                    if on_rollout is not None:
                        on_rollout(rollout, count[0], total)
        finally:
            if shared is None and not isinstance(worker_model, str):
                await worker_model.aclose()

    try:
        async with anyio.create_task_group() as tg:
            for index in range(min(concurrency, max(1, len(queue)))):
                tg.start_soon(worker, index)
    finally:
        if owned and shared is not None and not isinstance(shared, str):
            await shared.aclose()
