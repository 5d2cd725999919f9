"""examples/eval_suite.py on the embedded engine, and training samples with REAL token ids.

The example runs as a user would (a subprocess, offline): one finance task on
``local:qwen2.5-coder-0.5b`` (Qwen2.5-Coder-0.5B in llama.cpp on 127.0.0.1) with ``record_tokens``,
its summary and report, then the export. The exported samples are then checked against
the engine itself: the ids decode (``/detokenize``) to the prompt, the calls and the
answer the run recorded, the masked ids to the tool output, the mask and log-probabilities
line up, and the reward is the verdict's score."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

agentsdk_openai = pytest.importorskip("agentsdk_openai")
pytest.importorskip("agentsdk_finance")

from agentsdk.plugins import load_suite  # noqa: E402
from agentsdk.sandbox import pid_alive  # noqa: E402
from agentsdk.tasks.runner import EvalResults  # noqa: E402
from agentsdk.tasks.trajectories import TrainingSample, export_trajectories  # noqa: E402
from agentsdk_openai.local import stop_all_engines  # noqa: E402

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(1200)]

MODEL = "local:qwen2.5-coder-0.5b"
EOS = "<|im_end|>"
EXAMPLE = Path(__file__).parents[2] / "examples" / "eval_suite.py"
TASK = "finance/goog-year-end-close"


@pytest.fixture(scope="module")
def example(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """One run of the example: its results folder and what it printed."""
    out = tmp_path_factory.mktemp("example") / "eval"
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--tasks", TASK, "--max-tokens", "120", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=1100,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return out, done


@pytest.fixture(scope="module")
def engine_pid() -> Iterator[int]:
    engine = agentsdk_openai.LocalEngine.shared("qwen2.5-coder-0.5b")
    anyio.run(engine.start)
    assert engine.pid is not None
    yield engine.pid
    stop_all_engines()
    assert not pid_alive(engine.pid), "the engine outlived the test"


def runs(sample: TrainingSample) -> list[tuple[int, list[int]]]:
    """The response as (mask, ids) runs."""
    out: list[tuple[int, list[int]]] = []
    for mask, token in zip(sample.response_mask, sample.response_ids, strict=True):
        if out and out[-1][0] == mask:
            out[-1][1].append(token)
        else:
            out.append((mask, [token]))
    return out


def said(message: dict[str, Any]) -> Any:
    """What an assistant message holds: its call as the JSON the model writes, or its text."""
    for part in message["parts"]:
        if part["kind"] == "tool_call":
            return {"name": part["name"], "arguments": part["arguments"]}
    return "".join(p["text"] for p in message["parts"] if p["kind"] == "text")


def test_the_example_evaluates_a_task_and_exports_it(
    example: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    out, done = example
    (rollout,) = EvalResults(out).load()
    assert rollout.task_id == TASK and rollout.model == MODEL
    assert rollout.status in ("passed", "failed"), rollout.error or rollout.broken
    assert done.stdout.startswith("finance on local:qwen2.5-coder-0.5b: 1 rollouts, pass rate ")
    assert f"report: {out / 'report.md'}" in done.stdout
    assert f"1 training samples from 1 rollouts -> {out / 'train.jsonl'}" in done.stdout
    assert f"[1/1] {TASK} s0: {rollout.status}, score {rollout.score:.2f}" in done.stderr
    report = (out / "report.md").read_text()
    assert f"| `{TASK}` | 1 |" in report and "Tool calls: `price_history`" in report


async def test_exported_samples_hold_the_engines_own_token_ids(
    example: tuple[Path, subprocess.CompletedProcess[str]], engine_pid: int
) -> None:
    out, _ = example
    suite = load_suite("finance").select([TASK])
    summary = json.loads((out / "summary.json").read_text())
    (rollout,) = EvalResults(out).load()
    trajectory = json.loads(EvalResults(out).trajectory_path(rollout).read_text())
    turns = trajectory["turns"]
    assert len(turns) >= 2 and all(t["prompt_ids"] and t["response_ids"] for t in turns)

    samples = [TrainingSample.model_validate_json(x) for x in (out / "train.jsonl").open()]
    again = export_trajectories(out, out / "again.jsonl")  # the export is deterministic
    assert (out / "again.jsonl").read_text() == (out / "train.jsonl").read_text()
    assert again.samples == len(samples) and again.skipped == {}
    assert len(samples) == 1, [s.split for s in samples]  # one rollout, history kept
    sample = samples[0]
    assert sample.turns == [t["turn"] for t in turns] and sample.parts == 1

    # the reward is the verifier's score, as the eval summary reports it
    assert sample.reward == rollout.score == summary["mean_score"]
    assert sample.passed == rollout.passed

    model = agentsdk_openai.connect(MODEL)
    try:
        prompt = await model.detokenize(sample.prompt_ids)
        assert prompt.startswith("<|im_start|>system\n" + (suite.instructions or "")[:60])
        assert suite.tasks[0].prompt in prompt and prompt.endswith("<|im_start|>assistant\n")

        assistant = [m for m in trajectory["messages"] if m["role"] == "assistant"]
        results = [p for m in trajectory["messages"] if m["role"] == "tool" for p in m["parts"]]
        pieces = runs(sample)
        sampled = [ids for mask, ids in pieces if mask == 1]
        environment = [ids for mask, ids in pieces if mask == 0]
        assert len(sampled) == len(turns) == len(assistant) and len(environment) == len(turns) - 1
        for ids, turn, message in zip(sampled, turns, assistant, strict=True):
            assert ids == turn["response_ids"]  # not re-tokenised: the ids the engine sampled
            decoded = (await model.detokenize(ids)).removesuffix(EOS)
            expected = said(message)
            if isinstance(expected, dict):
                assert json.loads(decoded) == expected
            else:
                assert decoded.strip() == expected.strip()
        for ids, result in zip(environment, results, strict=True):
            between = await model.detokenize(ids)
            assert result["parts"][0]["text"] in between  # the tool output, masked out

        # prompt + response is the last turn's context, id for id
        last = turns[-1]
        assert sample.prompt_ids + sample.response_ids == last["prompt_ids"] + last["response_ids"]
    finally:
        await model.aclose()

    # mask and log-probabilities line up with what the engine reported
    assert len(sample.response_mask) == len(sample.response_ids)
    assert sum(sample.response_mask) == sum(t["usage"]["output_tokens"] for t in turns)
    assert sample.response_logprobs is not None
    for mask, logprob in zip(sample.response_mask, sample.response_logprobs, strict=True):
        assert logprob <= 0.0 and (mask == 1 or logprob == 0.0)
    assert sum(sample.response_logprobs) < 0.0  # real values, not zeros
