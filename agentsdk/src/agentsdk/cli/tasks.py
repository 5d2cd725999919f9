"""``agentsdk tasks``, ``agentsdk check``, ``agentsdk eval`` and ``agentsdk
export-trajectories``: list, quality-check and evaluate the task suites installed toolkits
ship, and turn an eval's token traces into training samples."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import anyio

from .. import plugins
from ..models import ModelSettings
from ..tasks import QualityReport, Rollout, Suite, TaskQuality, check_suite
from ..tasks.runner import evaluate
from ._progress import show_plugin_logs


def _suite(args: argparse.Namespace) -> Suite:
    suite = plugins.load_suite(args.suite)
    ids = [i.strip() for i in (getattr(args, "task", None) or "").split(",") if i.strip()]
    tags = [t.strip() for t in (getattr(args, "tags", None) or "").split(",") if t.strip()]
    return suite.select(ids, tags)


def cmd_tasks(args: argparse.Namespace) -> int:
    """``agentsdk tasks [SUITE]``: installed suites, or one suite's tasks."""
    if not args.suite:
        names = plugins.suite_names()
        if not names:
            print("no task suites installed")
        for name in names:
            try:
                suite = plugins.load_suite(name)
                print(f"{name}: {len(suite)} tasks - {suite.description}")
            except Exception as exc:  # a broken plugin should not hide the others
                print(f"{name}: (failed to load: {type(exc).__name__}: {exc})")
        return 0
    suite = _suite(args)
    for task in suite:
        tags = f" [{', '.join(task.tags)}]" if task.tags else ""
        print(f"{task.id}{tags}: {task.description or task.prompt[:100]}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    """``agentsdk check SUITE``: every task solvable, deterministic, not gameable."""
    suite = _suite(args)
    out = Path(args.out) if args.out else None

    def progress(quality: TaskQuality) -> None:
        mark = "ok  " if quality.ok else "FAIL"
        print(f"  {mark} {quality.task_id} ({quality.seconds:.1f}s)", file=sys.stderr)
        for problem in quality.problems:
            print(f"       - {problem.splitlines()[0][:300]}", file=sys.stderr)

    print(f"checking {len(suite)} task(s) of suite {suite.name}", file=sys.stderr)
    report: QualityReport = anyio.run(lambda: check_suite(suite, workdir=out, on_task=progress))
    print(report.to_text())
    return 0 if report.ok else 1


def cmd_eval(args: argparse.Namespace) -> int:
    """``agentsdk eval SUITE --model M``: run the suite and report pass rates."""
    suite = _suite(args)
    out = Path(args.resume or args.out or f"eval-{suite.name}-{time.strftime('%Y%m%d-%H%M%S')}")
    settings = ModelSettings(
        temperature=args.temperature, max_tokens=args.max_tokens, record_tokens=args.record_tokens
    )
    start = time.perf_counter()
    tty = sys.stderr.isatty()
    counts = {"passed": 0, "failed": 0, "error": 0, "broken": 0}

    def progress(rollout: Rollout, done: int, total: int) -> None:
        counts[rollout.status] += 1
        elapsed = time.perf_counter() - start
        ran = sum(counts.values())
        eta = elapsed / ran * (total - done) if ran else 0.0
        line = (
            f"[{done}/{total}] {rollout.status:7s} {rollout.task_id} s{rollout.sample} "
            f"({rollout.seconds:.1f}s, score {rollout.score:.2f}) | passed {counts['passed']}, "
            f"failed {counts['failed']}, errors {counts['error']}, broken {counts['broken']}"
            f" | ETA {eta / 60:.1f} min"
        )
        print(("\r\x1b[K" if tty else "") + line, end="" if tty else "\n", file=sys.stderr)

    print(
        f"eval {suite.name}: {len(suite)} task(s) x {args.k} on {args.model}, "
        f"{args.concurrency} at a time, backend {args.backend}; results in {out}",
        file=sys.stderr,
    )

    async def main() -> Any:
        return await evaluate(
            suite,
            args.model,
            out=out,
            k=args.k,
            concurrency=args.concurrency,
            resume=bool(args.resume),
            backend=args.backend,
            settings=settings,
            on_rollout=progress,
            address=args.address,
        )

    summary = anyio.run(main)
    if tty:
        print(file=sys.stderr)
    print(summary.to_text())
    print(f"report: {out / 'report.md'}", file=sys.stderr)
    return 0 if not summary.broken else 2


def cmd_export(args: argparse.Namespace) -> int:
    """``agentsdk export-trajectories RESULTS OUT``: training samples as JSONL."""
    from ..tasks.trajectories import export_trajectories

    statuses = [s.strip() for s in args.status.split(",") if s.strip()]
    report = export_trajectories(args.results, args.out, per_turn=args.per_turn, statuses=statuses)
    print(report.to_text())
    return 0 if report.samples else 1


def register(sub: Any) -> None:
    """Add ``tasks``, ``check`` and ``eval`` to the ``agentsdk`` command."""
    p = sub.add_parser("tasks", help="list installed task suites, or the tasks of one")
    p.add_argument("suite", nargs="?", help="a suite name (see the list without one)")
    p.add_argument("--tags", default="", help="only tasks with one of these comma-separated tags")
    p.set_defaults(func=cmd_tasks)

    p = sub.add_parser(
        "check",
        help="quality-check a suite: reference solutions pass, verifiers are deterministic "
        "and reject degenerate and injected answers",
    )
    p.add_argument("suite", help="an installed suite (agentsdk tasks lists them)")
    p.add_argument("--task", default="", help="only these comma-separated task ids")
    p.add_argument("--tags", default="", help="only tasks with one of these comma-separated tags")
    p.add_argument("--out", default=None, help="keep the runs' folders here (default: temporary)")
    p.set_defaults(func=cmd_check, setup=show_plugin_logs)

    p = sub.add_parser("eval", help="run a suite with a model and report pass rates")
    p.add_argument("suite", help="an installed suite (agentsdk tasks lists them)")
    p.add_argument(
        "--model",
        default="local:default",
        help="model string (default: local:default); 'reference' plays each task's own solution",
    )
    p.add_argument("--k", type=int, default=1, help="samples per task (default 1)")
    p.add_argument("--concurrency", type=int, default=1, help="rollouts at once (default 1)")
    p.add_argument(
        "--backend", choices=("local", "ray"), default="local", help="where rollouts run"
    )
    p.add_argument("--address", default=None, help="Ray cluster address (ray backend)")
    p.add_argument("--out", default=None, help="results folder (default: ./eval-SUITE-TIME)")
    p.add_argument(
        "--resume",
        default=None,
        metavar="RESULTS",
        help="continue the eval in this results folder: runs only what is missing or errored",
    )
    p.add_argument("--task", default="", help="only these comma-separated task ids")
    p.add_argument("--tags", default="", help="only tasks with one of these comma-separated tags")
    p.add_argument("--temperature", type=float, default=None, help="sampling temperature")
    p.add_argument("--max-tokens", type=int, default=None, help="cap on tokens per model turn")
    p.add_argument(
        "--record-tokens",
        action="store_true",
        help="record token ids and logprobs per turn (embedded engine) for training",
    )
    p.set_defaults(func=cmd_eval, setup=show_plugin_logs)

    p = sub.add_parser(
        "export-trajectories",
        help="write an eval's token-level trajectories as training samples (JSONL): "
        "prompt ids, response ids, a mask without the tool outputs, reward = verifier score",
    )
    p.add_argument("results", help="the results folder of an `agentsdk eval --record-tokens` run")
    p.add_argument("out", help="the JSONL file to write")
    p.add_argument(
        "--per-turn",
        action="store_true",
        help="one sample per model turn (the verifiers library's trajectory steps) instead of "
        "one per rollout",
    )
    p.add_argument(
        "--status",
        default="passed,failed,error",
        help="rollouts to export, comma-separated (default: passed,failed,error)",
    )
    p.set_defaults(func=cmd_export)
