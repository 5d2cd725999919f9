"""Sum up `agentsdk eval` result folders: a Markdown table and a JSON file.

Each folder is what `agentsdk eval SUITE --out DIR` wrote (rollouts.jsonl, trajectories/).
Per suite: passed / rollouts, median and max seconds per task, seconds per solved task
(every task's seconds over the tasks passed), median tokens per task, turns per tier,
tool calls, and how many calls the tools refused as unknown or schema-invalid (read from
the tool results in the trajectories).

    uv run --no-sync python benchmarks/eval_table.py DIR... [--label NAME] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

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
        "tasks": {
            r["task_id"]: {
                "status": r["status"],
                "score": (r.get("verdict") or {}).get("score"),
                "seconds": round(r["seconds"], 1),
                "tool_calls": r.get("tool_calls", []),
                "tiers": [t.get("tier") for t in r.get("turn_records") or []],
                "error": (r.get("error") or "")[:200] or None,
            }
            for r in sorted(rollouts, key=lambda r: r["task_id"])
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--label", default="")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    rows = [summarise(f) for f in args.folders]
    print(
        "| suite | model | passed | median s (max) | s per solved task | median tokens "
        "| tier turns | calls (refused) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        share = 100 * row["passed"] / max(1, row["rollouts"])
        print(
            f"| {row['suite']} | {row['model']} | {row['passed']}/{row['rollouts']} ({share:.0f}%) "
            f"| {row['median_s']} ({row['max_s']}) | {row['s_per_solved']} | {row['median_tokens']} "
            f"| {row['tier_turns']} | {row['tool_calls']} ({row['refused_calls']}) |"
        )
    if args.out:
        args.out.write_text(json.dumps({"label": args.label, "suites": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
