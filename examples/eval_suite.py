"""Evaluate an agent on a task suite with the embedded local model, then export what it
did as training samples.

Offline: the finance suite's tasks run on real sample data, the model is the embedded
llama.cpp engine on 127.0.0.1 (``local:qwen2.5-coder-0.5b``: one model, so every
training sample comes from the policy being trained; ``local:default`` mixes two). Each
rollout is verified on the world it left (the tool results it got, the figures it stated), recorded with the token ids the
engine evaluated and sampled, and summarised; the token ids become JSONL samples (prompt
ids, response ids, a mask without the tool outputs, reward = the verifier's score).

    uv run python examples/eval_suite.py --out /tmp/eval-demo
    uv run python examples/eval_suite.py --tasks finance/ibm-total-return,finance/aapl-cagr --k 4

The same thing from the command line:

    agentsdk eval finance --task finance/goog-year-end-close --model local:qwen2.5-coder-0.5b \
        --record-tokens --out DIR
    agentsdk export-trajectories DIR DIR/train.jsonl
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import anyio
from agentsdk.plugins import load_suite
from agentsdk.tasks import Rollout
from agentsdk.tasks.runner import evaluate
from agentsdk.tasks.trajectories import export_trajectories

from agentsdk import ModelSettings

DEFAULT_TASKS = "finance/goog-year-end-close"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="finance", help="an installed suite (agentsdk tasks)")
    parser.add_argument("--tasks", default=DEFAULT_TASKS, help="comma-separated task ids")
    parser.add_argument("--model", default="local:qwen2.5-coder-0.5b", help="model string")
    parser.add_argument("--k", type=int, default=1, help="samples per task")
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--max-tokens", type=int, default=256, help="cap per model turn")
    parser.add_argument("--out", default="eval-example", help="results folder (must be new)")
    args = parser.parse_args(argv)

    suite = load_suite(args.suite).select([t.strip() for t in args.tasks.split(",") if t.strip()])
    settings = ModelSettings(
        record_tokens=True,  # token ids + logprobs per turn (the embedded engine gives them)
        temperature=args.temperature,
        max_tokens=args.max_tokens,
        allow_truncated=True,  # a long answer cut at the cap is still judged
        tool_choice="required",  # the first turn must fetch data; later turns are free
    )

    def progress(rollout: Rollout, done: int, total: int) -> None:
        print(
            f"[{done}/{total}] {rollout.task_id} s{rollout.sample}: {rollout.status}, "
            f"score {rollout.score:.2f}, {rollout.seconds:.0f} s",
            file=sys.stderr,
        )

    out = Path(args.out)
    summary = anyio.run(
        lambda: evaluate(
            suite, args.model, out=out, k=args.k, settings=settings, on_rollout=progress
        )
    )
    print(summary.to_text())
    print(f"report: {out / 'report.md'}")
    exported = export_trajectories(out, out / "train.jsonl")
    print(exported.to_text())
    return 0 if not summary.broken else 2


if __name__ == "__main__":
    raise SystemExit(main())
