"""The Ray backend of ``evaluate``: rollouts spread over Ray actors, each owning its own
engines (a browser, a Blender worker, a local model) for all the tasks it runs.

The driver keeps the queue and writes every result, so ``rollouts.jsonl`` and the
trajectories (with their images, sent back through Ray's object store) are the same
as with the local backend. Each rollout's working folder (renders, exports) is
written by the actor under the results folder's ``runs/``: on a multi-node cluster,
put the results folder on a filesystem every node shares.

Without ``address`` the eval starts its own cluster on this machine
(``LocalRayCluster``: fixed ports, few processes, a private token) and stops it at
the end. An actor that dies mid-task (a crashed engine took the process, a node went
away) or stops answering is replaced, and the task runs once more on the new actor; the
rollout records why (``Rollout.retries``). A second loss is recorded as an error.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..models import ModelSettings
from .ray_cluster import LocalRayCluster, RayStartError
from .rollout import Rollout, ToolkitPool
from .runner import EvalResults, ModelSpec, make_model, run_one, trajectory
from .task import Suite, Task

__all__ = ["RayStartError", "RolloutWorker", "run_on_ray", "start_ray"]

WORKER_START_TIMEOUT = 600.0
"""Seconds a new actor may take to come up (a Python worker importing Ray on a busy
machine); after that the eval stops with Ray's own logs in the error."""


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise RuntimeError(
            "the ray backend needs Ray: pip install 'agentsdk[ray]' (or use --backend local)"
        ) from exc
    return ray


def start_ray(
    address: str | None = None,
    *,
    num_cpus: int = 2,
    env: Mapping[str, str] | None = None,
    startup_timeout: float = 300.0,
    attempts: int = 2,
) -> LocalRayCluster | None:
    """Make this process a Ray driver for evals.

    With ``address``, join that cluster (its owner configured it) and return ``None``.
    Without, start a ``LocalRayCluster`` on this machine, connect to it and return it:
    call its ``stop()`` when done (an eval that started its own cluster does).

    Args:
        address: An existing cluster (``"host:port"``, ``"auto"``).
        num_cpus: CPUs of a new local cluster.
        env: Extra environment for a new local cluster's workers.
        startup_timeout: Seconds one start of a local cluster may take.
        attempts: Starts of a local cluster to try (fresh ports each time).

    Raises:
        RayStartError: the local cluster did not come up (the message has Ray's logs).
    """
    ray = _ray()
    if address is not None:
        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
        return None
    cluster = LocalRayCluster(
        num_cpus, env=env, startup_timeout=startup_timeout, attempts=attempts
    ).start()
    try:
        cluster.connect()
    except BaseException:
        cluster.stop()
        raise
    return cluster


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
        """The actor's process id."""
        import os

        return os.getpid()


@dataclass
class _Slot:
    actor: Any
    pid: int


@dataclass
class _Job:
    task: Task
    sample: int
    lost: list[str] = field(default_factory=list)
    """Why earlier attempts were lost."""


@dataclass
class _Running:
    slot: int
    job: _Job
    started: float
    deadline: float
    overdue: bool = False


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
    grace: float = 180.0,
) -> None:
    """Run ``jobs`` on ``concurrency`` Ray actors, recording results as they come.

    A job whose actor dies (or has not answered ``grace`` seconds after the task's
    timeout, and is killed) runs again on a fresh actor, up to ``retries`` times."""
    ray = _ray()
    own: LocalRayCluster | None = None
    if not ray.is_initialized() and address is not None:
        start_ray(address)
    elif not ray.is_initialized():
        own = LocalRayCluster(max(2, concurrency))
        await asyncio.to_thread(own.start)  # a minute on a busy machine: not on the loop
        try:
            own.connect()
        except BaseException:
            await asyncio.to_thread(own.stop)
            raise
    Actor = ray.remote(num_cpus=0)(RolloutWorker).options(max_concurrency=1, max_restarts=0)
    results.runs.mkdir(parents=True, exist_ok=True)

    async def spawn() -> _Slot:
        actor = Actor.remote(suite, model, settings, str(results.runs))
        try:
            pid = await asyncio.wait_for(
                asyncio.wrap_future(actor.pid.remote().future()), WORKER_START_TIMEOUT
            )
        except TimeoutError:
            logs = own.session_logs if own is not None else None
            raise RayStartError(
                f"Ray started no worker process within {WORKER_START_TIMEOUT:g} s"
                + (f"; see {logs}/raylet.err" if logs else "")
            ) from None
        return _Slot(actor, int(pid))

    queue: list[_Job] = [_Job(t, s) for t, s in reversed(jobs)]
    slots: list[_Slot] = []
    running: dict[asyncio.Future[Any], _Running] = {}
    count = done
    try:
        slots = list(
            await asyncio.gather(*[spawn() for _ in range(min(concurrency, max(1, len(queue))))])
        )
        idle = list(range(len(slots)))
        while queue or running:
            while queue and idle:
                index = idle.pop()
                job = queue.pop()
                ref = slots[index].actor.run.remote(job.task.id, job.sample)
                now = time.monotonic()
                running[asyncio.wrap_future(ref.future())] = _Running(
                    index, job, time.perf_counter(), now + job.task.timeout + grace
                )
            wait = max(0.1, min(r.deadline for r in running.values()) - time.monotonic())
            finished, _ = await asyncio.wait(
                running, timeout=wait, return_when=asyncio.FIRST_COMPLETED
            )
            for run in running.values():  # a stuck actor: kill it; its call then fails
                if not run.overdue and time.monotonic() > run.deadline:
                    run.overdue = True
                    ray.kill(slots[run.slot].actor, no_restart=True)
            for future in finished:
                run = running.pop(future)
                slot = slots[run.slot]
                try:
                    text, record = future.result()
                    rollout = Rollout.model_validate_json(text)
                except ray.exceptions.RayActorError as exc:
                    how = "stopped answering and was killed" if run.overdue else "died"
                    run.job.lost.append(
                        f"the Ray worker (pid {slot.pid}) {how} running this task "
                        f"({type(exc).__name__})"
                    )
                    slots[run.slot] = await spawn()  # the next task goes to a fresh actor
                    idle.append(run.slot)
                    if len(run.job.lost) <= retries:
                        queue.append(run.job)
                        continue
                    rollout = Rollout(
                        task_id=run.job.task.id,
                        sample=run.job.sample,
                        model=_label(model),
                        status="error",
                        error=f"WorkerDied: lost {len(run.job.lost)} Ray workers running this "
                        f"task (pids {', '.join(_pids(run.job.lost))}); it was not run again",
                        seconds=time.perf_counter() - run.started,
                        worker=f"ray:{slot.pid}",
                    )
                    record = trajectory(rollout, [], [])
                else:
                    idle.append(run.slot)
                rollout.worker = f"ray:{slot.pid}"
                rollout.retries = list(run.job.lost)
                record["worker"], record["retries"] = rollout.worker, rollout.retries
                results.record(rollout, record)
                count += 1
                if on_rollout is not None:
                    on_rollout(rollout, count, total)
    finally:
        await _close(ray, [s.actor for s in slots])
        if own is not None:
            own.disconnect()  # ray.shutdown belongs to the thread that called ray.init
            await asyncio.to_thread(own.stop)


async def _close(ray: Any, actors: list[Any]) -> None:
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


def _pids(reasons: list[str]) -> list[str]:
    return [r.split("(pid ", 1)[1].split(")", 1)[0] for r in reasons if "(pid " in r]


def _label(model: Any) -> str:
    return model if isinstance(model, str) else str(getattr(model, "name", "model"))
