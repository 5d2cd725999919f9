"""Summaries of an eval: pass rate, pass@k, scores, time and tokens per task, failures
grouped by reason; as a terminal table and a Markdown report with key images."""

from __future__ import annotations

import math
import os
import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from .rollout import Rollout

__all__ = ["EvalSummary", "TaskSummary", "pass_at_k", "summarize", "write_markdown"]


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased estimate of pass@k from ``n`` samples of which ``c`` passed
    (Chen et al. 2021): the chance that at least one of ``k`` draws passes."""
    if n <= 0 or k <= 0:
        return 0.0
    k = min(k, n)
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


class TaskSummary(BaseModel):
    """One task over its samples."""

    task_id: str
    runs: int
    passed: int
    pass_rate: float
    pass_at_k: float
    mean_score: float
    median_seconds: float
    mean_tokens: float
    statuses: dict[str, int] = Field(default_factory=dict)
    failures: list[str] = Field(default_factory=list)
    """Why runs did not pass: failed checks, errors, broken tasks (counted)."""


class EvalSummary(BaseModel):
    """A whole eval."""

    suite: str
    model: str
    k: int
    rollouts: int
    pass_rate: float
    pass_at_k: float
    mean_score: float
    median_seconds: float
    mean_tokens: float
    seconds: float = 0.0
    tasks: list[TaskSummary]
    failure_reasons: dict[str, int] = Field(default_factory=dict)
    broken: list[str] = Field(default_factory=list)
    """Task ids whose setup, environment or verifier failed (not the model's fault)."""

    def to_text(self) -> str:
        """A table for the terminal."""
        head = (
            f"{self.suite} on {self.model}: {self.rollouts} rollouts, pass rate "
            f"{self.pass_rate:.0%}, pass@{self.k} {self.pass_at_k:.0%}, mean score "
            f"{self.mean_score:.2f}, median {self.median_seconds:.1f} s, "
            f"{self.mean_tokens:.0f} tokens per rollout"
        )
        width = max([len(t.task_id) for t in self.tasks] + [4])
        lines = [
            head,
            f"  {'task'.ljust(width)}  runs  pass  pass@{self.k}  score  median s  tokens",
        ]
        for t in self.tasks:
            lines.append(
                f"  {t.task_id.ljust(width)}  {t.runs:4d}  {t.pass_rate:4.0%}  {t.pass_at_k:6.0%}"
                f"  {t.mean_score:5.2f}  {t.median_seconds:8.1f}  {t.mean_tokens:6.0f}"
            )
        if self.failure_reasons:
            lines.append("  failures by reason:")
            for reason, count in sorted(self.failure_reasons.items(), key=lambda kv: -kv[1])[:15]:
                lines.append(f"    {count:3d} x {reason}")
        if self.broken:
            lines.append(f"  BROKEN tasks (fix the task, not the model): {', '.join(self.broken)}")
        return "\n".join(lines)


def _broken_headline(text: str) -> str:
    """The first line, with the exception's own line when the first only introduces it
    (``setup failed:`` + traceback)."""
    lines = [line for line in text.splitlines() if line.strip()] or [""]
    head = lines[0].strip()
    if head.endswith(":") and len(lines) > 1:
        head = f"{head} {lines[-1].strip()}"
    return head


def _reason(r: Rollout) -> str:
    if r.status == "broken":
        return "broken: " + _broken_headline(r.broken or "")[:160]
    if r.error:
        return "error: " + r.error.split(":")[0]
    if r.verdict is not None:
        failed = [c.name for c in r.verdict.failed]
        return "failed check: " + (", ".join(failed) or "score below pass mark")
    return "no verdict"


def summarize(
    suite: str, model: str, k: int, rollouts: Sequence[Rollout], seconds: float = 0.0
) -> EvalSummary:
    """The summary of ``rollouts`` (the latest attempt of each task and sample)."""
    by_task: dict[str, list[Rollout]] = defaultdict(list)
    for r in rollouts:
        by_task[r.task_id].append(r)
    tasks: list[TaskSummary] = []
    reasons: Counter[str] = Counter()
    for task_id, runs in by_task.items():
        passed = sum(r.passed for r in runs)
        task_reasons = Counter(_reason(r) for r in runs if not r.passed)
        reasons.update(task_reasons)
        tasks.append(
            TaskSummary(
                task_id=task_id,
                runs=len(runs),
                passed=passed,
                pass_rate=passed / len(runs),
                pass_at_k=pass_at_k(len(runs), passed, k),
                mean_score=statistics.fmean(r.score for r in runs),
                median_seconds=statistics.median(r.seconds for r in runs),
                mean_tokens=statistics.fmean(r.usage.total_tokens for r in runs),
                statuses=dict(Counter(r.status for r in runs)),
                failures=[f"{n} x {why}" for why, n in task_reasons.most_common()],
            )
        )
    n = len(rollouts)
    return EvalSummary(
        suite=suite,
        model=model,
        k=k,
        rollouts=n,
        pass_rate=sum(r.passed for r in rollouts) / n if n else 0.0,
        pass_at_k=statistics.fmean(t.pass_at_k for t in tasks) if tasks else 0.0,
        mean_score=statistics.fmean(r.score for r in rollouts) if n else 0.0,
        median_seconds=statistics.median(r.seconds for r in rollouts) if n else 0.0,
        mean_tokens=statistics.fmean(r.usage.total_tokens for r in rollouts) if n else 0.0,
        seconds=seconds,
        tasks=tasks,
        failure_reasons=dict(reasons),
        broken=sorted({r.task_id for r in rollouts if r.status == "broken"}),
    )


def _last_image(workdir: str) -> Path | None:
    folder = Path(workdir)
    if not folder.is_dir():
        return None
    images = sorted(p for p in folder.iterdir() if p.suffix.lower() in (".png", ".jpg", ".jpeg"))
    return images[-1] if images else None


def write_markdown(
    path: Path, summary: EvalSummary, rollouts: Sequence[Rollout], *, images: int = 12
) -> Path:
    """Write a Markdown report: the summary table, then each task's runs with the
    verifier's reasons and the last image each run produced (up to ``images`` inline)."""
    lines = [
        f"# {summary.suite} on `{summary.model}`",
        "",
        f"{summary.rollouts} rollouts, pass rate **{summary.pass_rate:.0%}**, "
        f"pass@{summary.k} **{summary.pass_at_k:.0%}**, mean score {summary.mean_score:.2f}, "
        f"median {summary.median_seconds:.1f} s and {summary.mean_tokens:.0f} tokens per rollout"
        + (f", {summary.seconds:.0f} s in all." if summary.seconds else "."),
        "",
        f"| task | runs | pass rate | pass@{summary.k} | mean score | median s | tokens |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for t in summary.tasks:
        lines.append(
            f"| `{t.task_id}` | {t.runs} | {t.pass_rate:.0%} | {t.pass_at_k:.0%} | "
            f"{t.mean_score:.2f} | {t.median_seconds:.1f} | {t.mean_tokens:.0f} |"
        )
    if summary.failure_reasons:
        lines += ["", "## Failures by reason", ""]
        for reason, count in sorted(summary.failure_reasons.items(), key=lambda kv: -kv[1]):
            lines.append(f"- {count} × {reason}")
    if summary.broken:
        lines += [
            "",
            "**Broken tasks** (their setup, environment or verifier failed): "
            + ", ".join(f"`{b}`" for b in summary.broken),
        ]
    lines += ["", "## Runs", ""]
    shown = 0
    for r in sorted(rollouts, key=lambda r: (r.task_id, r.sample)):
        mark = {"passed": "✅", "failed": "❌", "error": "⚠️", "broken": "🛠"}[r.status]
        lines.append(
            f"### {mark} `{r.task_id}` sample {r.sample}: {r.status}, score {r.score:.2f}, "
            f"{r.seconds:.1f} s, {r.turns} turns, {r.usage.total_tokens} tokens"
        )
        lines.append("")
        if r.tool_calls:
            lines.append("Tool calls: " + ", ".join(f"`{c}`" for c in r.tool_calls))
            lines.append("")
        if r.verdict is not None:
            lines.extend(f"- {reason}" for reason in r.verdict.reasons)
        if r.error:
            lines.append(f"- run error: {r.error[:300]}")
        lines.extend(f"- retried after: {why}" for why in r.retries)
        if r.broken:
            # The whole traceback is for whoever fixes the task (it never reaches the model).
            lines.append(f"- broken: {_broken_headline(r.broken)[:300]}")
            detail = r.broken.splitlines()[1:][-80:]
            if detail:
                lines += ["", "<details><summary>traceback</summary>", "", "```text"]
                lines += [*detail, "```", "", "</details>"]
        if r.output:
            lines += ["", "> " + r.output[:400].replace("\n", "\n> ")]
        image = _last_image(r.workdir) if shown < images else None
        if image is not None:
            shown += 1
            rel = os.path.relpath(image, path.parent)
            lines += ["", f"![last image of {r.task_id} sample {r.sample}]({rel})"]
        lines.append("")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
