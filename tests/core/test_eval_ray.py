"""agentsdk eval --backend ray on a real local Ray cluster (2 CPUs): the same results as
the local backend; a worker that dies mid-task is replaced and the task runs once more
on another worker; a task that kills every worker ends as an error after one retry;
and no Ray process is left afterwards (checked by pid)."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from agentsdk.sandbox import pid_alive  # noqa: E402
from agentsdk.tasks import ray_backend  # noqa: E402
from agentsdk.tasks.ray_backend import LocalRayCluster, start_ray  # noqa: E402
from agentsdk.tasks.runner import EvalResults, evaluate  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))  # the workers get it too (the driver's path)
from eval_fixture import crashing_suite, suite  # noqa: E402

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(900)]


class Files:
    def __init__(self, root: Path) -> None:
        self.crash = root / "crashed-once"  # the first mark of a tally/marks-2 run dies
        self.log = root / "calls.log"  # one line per tool call: the run id

    def calls(self) -> Counter[str]:
        return Counter(self.log.read_text().split()) if self.log.exists() else Counter()


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Files:
    return Files(tmp_path_factory.mktemp("ray-files"))


@pytest.fixture(scope="module")
def cluster(files: Files) -> Iterator[LocalRayCluster]:
    started = start_ray(
        num_cpus=2,
        env={
            "TALLY_CRASH_ONCE": str(files.crash),
            "TALLY_CRASH_ALLOWED": "1",
            "TALLY_LOG": str(files.log),
        },
    )
    assert started is not None
    yield started
    started.stop()  # idempotent: the last test stops it and checks what is left


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _dead_pids(rollouts: list[ray_backend.Rollout]) -> list[int]:
    return [int(r.split("(pid ", 1)[1].split(")")[0]) for x in rollouts for r in x.retries]


async def test_ray_gives_the_same_results_as_local_and_retries_a_dead_worker(
    cluster: LocalRayCluster, files: Files, tmp_path: Path
) -> None:
    local = await evaluate(suite(), "reference", out=tmp_path / "local", k=2, concurrency=2)
    remote = await evaluate(
        suite(), "reference", out=tmp_path / "ray", k=2, concurrency=2, backend="ray"
    )
    assert remote.rollouts == local.rollouts == 8
    assert remote.pass_rate == local.pass_rate == 1.0
    key = lambda r: (r.task_id, r.sample)  # noqa: E731
    a = sorted(EvalResults(tmp_path / "local").load(), key=key)
    b = sorted(EvalResults(tmp_path / "ray").load(), key=key)
    assert [(r.task_id, r.sample, r.status, r.score, r.tool_calls, r.turns) for r in a] == [
        (r.task_id, r.sample, r.status, r.score, r.tool_calls, r.turns) for r in b
    ]
    assert sorted(p.name for p in (tmp_path / "ray" / "trajectories").glob("*.json")) == sorted(
        p.name for p in (tmp_path / "local" / "trajectories").glob("*.json")
    )
    assert {r.worker for r in a} <= {"local:0", "local:1"}

    # The first run of tally/marks-2 took its worker down (os._exit); it ran once more.
    assert files.crash.exists()
    retried = [r for r in b if r.retries]
    assert [(r.task_id, r.sample, r.status) for r in retried] == [("tally/marks-2", 0, "passed")]
    (dead,) = _dead_pids(retried)
    assert retried[0].worker.startswith("ray:") and retried[0].worker != f"ray:{dead}"
    assert not pid_alive(dead)
    assert "died running this task (ActorDiedError)" in retried[0].retries[0]
    calls = files.calls()
    assert calls["tally-marks-2.s0"] == 1 + 2  # the dead attempt's first mark, then both marks
    assert calls["tally-marks-2.s1"] == 2 and calls["tally-marks-4.s0"] == 4
    report = (tmp_path / "ray" / "report.md").read_text()
    assert "retried after: the Ray worker (pid" in report


async def test_a_task_that_kills_every_worker_is_an_error_after_one_retry(
    cluster: LocalRayCluster, files: Files, tmp_path: Path
) -> None:
    summary = await evaluate(
        crashing_suite(), "reference", out=tmp_path / "doom", concurrency=2, backend="ray"
    )
    by_id = {r.task_id: r for r in EvalResults(tmp_path / "doom").load()}
    doomed, sound = by_id["tally/doomed"], by_id["tally/marks-1"]
    assert sound.status == "passed" and not sound.retries
    assert doomed.status == "error" and doomed.verdict is None
    assert (doomed.error or "").startswith("WorkerDied: lost 2 Ray workers running this task")
    assert len(doomed.retries) == 2
    assert files.calls()["tally-doomed.s0"] == 2  # tried twice, never a third time
    assert all(not pid_alive(pid) for pid in _dead_pids([doomed]))
    assert summary.rollouts == 2 and summary.pass_rate == 0.5
    assert summary.failure_reasons == {"error: WorkerDied": 1}


async def test_stopping_the_cluster_leaves_no_ray_process(
    cluster: LocalRayCluster, tmp_path: Path
) -> None:
    await evaluate(suite(tasks=1), "reference", out=tmp_path / "one", backend="ray")
    (rollout,) = EvalResults(tmp_path / "one").load()
    worker = int(rollout.worker.removeprefix("ray:"))
    try:
        pids = cluster.pids()
        head = cluster.process.pid if cluster.process else None
        # The head, and its GCS server and raylet, are found by the marker they inherit.
        # Idle workers are not counted on: Ray may reap them, and on CI's 2 loaded cores
        # only head, GCS, agent and raylet were up at this point.
        assert head in pids
        assert {"gcs_server", "raylet"} <= {_command(pid) for pid in pids}
        # The worker that ran the rollout is found by its marker while it lives; Ray may
        # already have reaped it as idle (a clean-clone run on 2 loaded cores did).
        assert worker in pids or not pid_alive(worker)
    finally:
        cluster.stop()  # a failed check above must not leave Ray up for the next test
    assert [pid for pid in [*pids, worker] if pid_alive(pid)] == []
    assert cluster.pids() == [] and cluster.temp_dir is None and not ray.is_initialized()


async def test_an_eval_without_a_cluster_starts_its_own_and_stops_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    started: list[LocalRayCluster] = []

    class Recorded(LocalRayCluster):
        def start(self) -> LocalRayCluster:
            started.append(self)
            return super().start()

    monkeypatch.setattr(ray_backend, "LocalRayCluster", Recorded)
    assert not ray.is_initialized()
    summary = await evaluate(
        suite(tasks=2), "reference", out=tmp_path / "own", concurrency=2, backend="ray"
    )
    assert summary.pass_rate == 1.0 and summary.rollouts == 2
    (own,) = started
    workers = [int(r.worker.removeprefix("ray:")) for r in EvalResults(tmp_path / "own").load()]
    assert len(set(workers)) == 2  # two actors, two processes
    assert own.pids() == [] and not any(pid_alive(pid) for pid in workers)
    assert not ray.is_initialized()


def test_a_cluster_that_does_not_come_up_in_time_says_why_and_leaves_nothing() -> None:
    cluster = LocalRayCluster(2, startup_timeout=0.5, attempts=2)
    folders: list[Path] = []
    original = cluster._start_once

    def noted() -> None:
        try:
            original()
        finally:
            folders.append(cluster.temp_dir)  # type: ignore[arg-type]

    cluster._start_once = noted  # type: ignore[method-assign]
    with pytest.raises(ray_backend.RayStartError) as raised:
        cluster.start()
    message = str(raised.value)
    assert "attempt 1: no head after 0.5 s" in message and "attempt 2:" in message
    assert "ray-start.log" in message or "(no Ray logs)" in message
    assert cluster.pids() == [] and cluster.process is None
    cluster.stop()
    assert len(folders) == 2 and not any(f.exists() for f in folders)
