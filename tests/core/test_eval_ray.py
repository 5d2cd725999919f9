"""agentsdk eval --backend ray: the same results as the local backend, on a local Ray
cluster started by the test (2 workers), and a worker that dies mid-task is replaced
and the task run again."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from agentsdk.tasks.ray_backend import start_ray  # noqa: E402
from agentsdk.tasks.runner import EvalResults, evaluate  # noqa: E402

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from eval_fixture import suite  # noqa: E402

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    crash = tmp_path_factory.mktemp("crash") / "crashed-once"
    path = os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])
    start_ray(
        num_cpus=2,
        runtime_env={"env_vars": {"PYTHONPATH": path, "TALLY_CRASH_ONCE": str(crash)}},
    )
    yield crash
    ray.shutdown()


async def test_ray_gives_the_same_results_as_local(ray_cluster: Path, tmp_path: Path) -> None:
    local = await evaluate(suite(), "reference", out=tmp_path / "local", k=2, concurrency=2)
    remote = await evaluate(
        suite(), "reference", out=tmp_path / "ray", k=2, concurrency=2, backend="ray"
    )
    assert remote.rollouts == local.rollouts == 8
    assert remote.pass_rate == local.pass_rate == 1.0
    key = lambda r: (r.task_id, r.sample)  # noqa: E731
    a = sorted(EvalResults(tmp_path / "local").load(), key=key)
    b = sorted(EvalResults(tmp_path / "ray").load(), key=key)
    assert [(r.task_id, r.sample, r.status, r.score, r.tool_calls) for r in a] == [
        (r.task_id, r.sample, r.status, r.score, r.tool_calls) for r in b
    ]
    assert sorted(p.name for p in (tmp_path / "ray" / "trajectories").glob("*.json")) == sorted(
        p.name for p in (tmp_path / "local" / "trajectories").glob("*.json")
    )
    # the worker that ran tally/marks-2 first died (os._exit) and was replaced
    assert ray_cluster.exists()
