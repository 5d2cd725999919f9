"""Sum up `agentsdk eval` result folders: a Markdown table and a JSON file.

Each folder is what `agentsdk eval SUITE --out DIR` wrote (rollouts.jsonl, trajectories/).
Per suite: passed / rollouts, median and max seconds per task, seconds per solved task
(every task's seconds over the tasks passed), median tokens per task, turns per tier,
tool calls, and how many calls the tools refused as unknown or schema-invalid (read from
the tool results in the trajectories). With k samples per task (`--k`), also pass@k (the
unbiased estimate, averaged over tasks) and each task's samples.

    uv run --no-sync python benchmarks/eval_table.py DIR... [--label NAME] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

from agentsdk.tasks.summary import pass_at_k

REFUSED = ("Unknown tool '", "The arguments for tool '", "Invalid arguments for tool '")


def _rollouts(folder: Path) -> list[dict[str, Any]]:
    """The last record per (task, sample): a resumed eval appends retries."""
    latest: dict[tuple[str, int], dict[str, Any]] = {}
    for line in (folder / "rollouts.jsonl").read_text().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a line cut short by a kill
        latest[(record["task_id"], record["sample"])] = record
    return list(latest.values())


def _calls(folder: Path) -> tuple[int, int]:
    calls = refused = 0
    for path in sorted((folder / "trajectories").glob("*.json")):
        for message in json.loads(path.read_text()).get("messages") or []:
            for part in message["parts"]:
                if part.get("kind") == "tool_call":
                    calls += 1
                elif part.get("kind") == "tool_result":
                    text = " ".join(p.get("text", "") for p in part.get("parts", []))
                    refused += any(marker in text for marker in REFUSED)
    return calls, refused


def summarise(folder: Path) -> dict[str, Any]:
    """One suite's numbers from its results folder."""
    rollouts = _rollouts(folder)
    seconds = [r["seconds"] for r in rollouts]
    tokens = [
        r["usage"].get("input_tokens", 0) + r["usage"].get("output_tokens", 0) for r in rollouts
    ]
    tiers: dict[str, int] = {}
    for r in rollouts:
        for turn in r.get("turn_records") or []:
            key = turn.get("tier") or "single"
            tiers[key] = tiers.get(key, 0) + 1
    calls, refused = _calls(folder)
    solved = sum(r["status"] == "passed" for r in rollouts)
    total = sum(seconds)
    return {
        "suite": rollouts[0]["task_id"].split("/")[0] if rollouts else folder.name,
        "model": rollouts[0]["model"] if rollouts else "",
        "passed": solved,
        "rollouts": len(rollouts),
        "median_s": round(statistics.median(seconds), 1) if seconds else None,
        "max_s": round(max(seconds), 1) if seconds else None,
        "over_300_s": sum(s > 300 for s in seconds),
        "total_s": round(total, 1),
        "s_per_solved": round(total / solved, 1) if solved else None,
        "median_tokens": int(statistics.median(tokens)) if tokens else None,
        "tier_turns": tiers,
        "tool_calls": calls,
        "refused_calls": refused,
        **_per_task(rollouts),
    }


def _sample(r: dict[str, Any]) -> dict[str, Any]:
    return {
        "status": r["status"],
        "score": (r.get("verdict") or {}).get("score"),
        "seconds": round(r["seconds"], 1),
        "tool_calls": r.get("tool_calls", []),
        "tiers": [t.get("tier") for t in r.get("turn_records") or []],
        "error": (r.get("error") or "")[:200] or None,
    }


def _per_task(rollouts: list[dict[str, Any]]) -> dict[str, Any]:
    """One sample per task: its record; k samples: k, pass@k and every task's samples."""
    by_task: dict[str, list[dict[str, Any]]] = {}
    for r in sorted(rollouts, key=lambda r: (r["task_id"], r["sample"])):
        by_task.setdefault(r["task_id"], []).append(r)
    k = max((len(runs) for runs in by_task.values()), default=1)
    if k == 1:
        return {"tasks": {task: _sample(runs[0]) for task, runs in by_task.items()}}
    tasks = {}
    for task, runs in by_task.items():
        passed = sum(r["status"] == "passed" for r in runs)
        tasks[task] = {
            "runs": len(runs),
            "passed": passed,
            "pass_at_k": round(pass_at_k(len(runs), passed, k), 3),
            "samples": [_sample(r) for r in runs],
        }
    share = sum(t["pass_at_k"] for t in tasks.values()) / len(tasks)
    return {
        "k": k,
        "pass_at_k": round(share, 3),
        "tasks_passed_at_k": sum(t["passed"] > 0 for t in tasks.values()),
        "tasks": tasks,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--label", default="")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    rows = [summarise(f) for f in args.folders]
    print(
        "| suite | model | passed | pass@k | median s (max) | s per solved task "
        "| median tokens | tier turns | calls (refused) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        share = 100 * row["passed"] / max(1, row["rollouts"])
        at_k = (
            f"pass@{row['k']} {100 * row['pass_at_k']:.0f}% ({row['tasks_passed_at_k']}/"
            f"{len(row['tasks'])} tasks)"
            if "k" in row
            else "-"
        )
        print(
            f"| {row['suite']} | {row['model']} | {row['passed']}/{row['rollouts']} ({share:.0f}%) "
            f"| {at_k} | {row['median_s']} ({row['max_s']}) | {row['s_per_solved']} "
            f"| {row['median_tokens']} | {row['tier_turns']} | {row['tool_calls']} "
            f"({row['refused_calls']}) |"
        )
    if args.out:
        args.out.write_text(json.dumps({"label": args.label, "suites": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
