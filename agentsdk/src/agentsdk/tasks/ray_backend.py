"""The Ray backend of ``evaluate``: rollouts spread over Ray actors, each owning its own
engines (a browser, a Blender worker, a local model) for all the tasks it runs.

The driver keeps the queue and writes every result, so ``rollouts.jsonl`` and the
trajectories (with their images, sent back through Ray's object store) are the same
as with the local backend. Each rollout's working folder (renders, exports) is
written by the actor under the results folder's ``runs/``: on a multi-node cluster,
put the results folder on a filesystem every node shares. An actor that dies mid-task
(a crashed engine took the process, a node went away) is replaced and the task is
run once more on the new actor; a second death is recorded as an error.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..models import ModelSettings
from .rollout import Rollout, ToolkitPool
from .runner import EvalResults, ModelSpec, make_model, run_one
from .task import Suite, Task

__all__ = ["RolloutWorker", "run_on_ray", "start_ray"]


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise RuntimeError(
            "the ray backend needs Ray: pip install 'agentsdk[ray]' (or use --backend local)"
        ) from exc
    return ray


def start_ray(address: str | None = None, attempts: int = 3, **options: Any) -> None:
    """``ray.init`` for evals: no dashboard, and a few attempts on a busy machine, where
    Ray's raylet gives its agent a fixed 15 s to start (ray-project/ray#65983) and a
    local cluster can fail to come up the first time."""
    ray = _ray()
    for attempt in range(1, attempts + 1):
        try:
            ray.init(
                address=address,
                include_dashboard=False,
                ignore_reinit_error=True,
                log_to_driver=False,
                **options,
            )
            return
        except Exception as exc:
            ray.shutdown()
            if attempt == attempts or "timed out during startup" not in str(exc):
                raise


class RolloutWorker:
    """A Ray actor's state: one pool of toolkits and one model for all its rollouts."""

    def __init__(self, suite: Suite, model: Any, settings: ModelSettings | None, runs: str) -> None:
        self.suite = suite
        self.model_spec = model
        self.settings = settings
        self.runs = Path(runs)
        self.pool = ToolkitPool()
        self.model: Any = None

    async def run(self, task_id: str, sample: int) -> tuple[str, dict[str, Any]]:
        """One rollout: its JSON and its trajectory."""
        if self.model is None:
            self.model = make_model(self.model_spec)
        task = self.suite.get(task_id)
        rollout, record = await run_one(
            task,
            sample,
            self.model,
            suite=self.suite,
            pool=self.pool,
            runs=self.runs,
            settings=self.settings,
        )
        return rollout.model_dump_json(), record

    async def close(self) -> None:
        """Close the toolkits and the model this actor made."""
        await self.pool.aclose()
        if self.model is not None and not isinstance(self.model, str):
            await self.model.aclose()

    def pid(self) -> int:
        """The actor's process id (for tests)."""
        import os

        return os.getpid()


async def run_on_ray(
    suite: Suite,
    model: ModelSpec | Callable[[], ModelSpec],
    jobs: Sequence[tuple[Task, int]],
    results: EvalResults,
    concurrency: int,
    settings: ModelSettings | None,
    on_rollout: Callable[[Rollout, int, int], None] | None,
    done: int,
    total: int,
    address: str | None,
    *,
    retries: int = 1,
) -> None:
    """Run ``jobs`` on ``concurrency`` Ray actors, recording results as they come."""
    ray = _ray()
    if not ray.is_initialized():
        start_ray(address)
    Actor = ray.remote(num_cpus=0)(RolloutWorker).options(max_concurrency=1, max_restarts=0)
    results.runs.mkdir(parents=True, exist_ok=True)

    def spawn() -> Any:
        return Actor.remote(suite, model, settings, str(results.runs))

    queue: list[tuple[Task, int, int]] = [(t, s, 0) for t, s in reversed(jobs)]
    actors = [spawn() for _ in range(min(concurrency, max(1, len(queue))))]
    idle = list(range(len(actors)))
    running: dict[asyncio.Future[Any], tuple[int, Task, int, int, float]] = {}
    count = done
    try:
        while queue or running:
            while queue and idle:
                slot = idle.pop()
                task, sample, attempt = queue.pop()
                ref = actors[slot].run.remote(task.id, sample)
                running[asyncio.wrap_future(ref.future())] = (
                    slot,
                    task,
                    sample,
                    attempt,
                    time.perf_counter(),
                )
            finished, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            for future in finished:
                slot, task, sample, attempt, started = running.pop(future)
                try:
                    text, record = future.result()
                    rollout = Rollout.model_validate_json(text)
                except ray.exceptions.RayActorError as exc:
                    actors[slot] = spawn()  # the next task goes to a fresh actor
                    if attempt < retries:
                        queue.append((task, sample, attempt + 1))
                        idle.append(slot)
                        continue
                    rollout = Rollout(
                        task_id=task.id,
                        sample=sample,
                        model=_label(model),
                        status="error",
                        error=f"WorkerDied: the Ray worker died running this task "
                        f"{attempt + 1} times ({type(exc).__name__})",
                        seconds=time.perf_counter() - started,
                    )
                    record = {
                        "schema": "agentsdk.trajectory/1",
                        "task_id": task.id,
                        "sample": sample,
                        "status": "error",
                        "error": rollout.error,
                        "turns": [],
                        "messages": [],
                    }
                results.record(rollout, record)
                idle.append(slot)
                count += 1
                if on_rollout is not None:
                    on_rollout(rollout, count, total)
    finally:
        closing = []
        for actor in actors:
            try:
                closing.append(asyncio.wrap_future(actor.close.remote().future()))
            except Exception:
                pass
        if closing:
            await asyncio.wait(closing, timeout=60)
        for actor in actors:
            try:
                ray.kill(actor)
            except Exception:
                pass


def _label(model: Any) -> str:
    return model if isinstance(model, str) else str(getattr(model, "name", "model"))
