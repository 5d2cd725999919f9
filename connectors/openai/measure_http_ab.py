"""This connector over HTTP, now against an earlier commit: the same canned server, the same
``.venv-bench``, the two versions interleaved round by round so both see the same load.

Run from the repository root (after ``benchmarks/overhead.py`` built ``.venv-bench``)::

    .venv-bench/bin/python connectors/openai/measure_http_ab.py --before 5a85f43 --rounds 8

The earlier version's ``agentsdk``, ``agentsdk-openai`` and ``agentsdk-anthropic`` sources are
taken with ``git archive`` into a temporary folder and put first on ``PYTHONPATH`` for its
workers; each worker is ``benchmarks/overhead.py``'s own HTTP worker for the ``agentsdk`` row
(c=1 runs of 20 tool turns, streamed and not; 100 runs of 20 turns at once; 1,000 runs of 2).
Prints the medians and writes ``benchmarks/results/overhead_http_ab.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("agentsdk/src", "connectors/openai/src", "connectors/anthropic/src")
FIGURES = {
    "c1 ms/turn": lambda r: r["c1"]["ms_per_turn"],
    "c1 client CPU ms/turn": lambda r: r["c1"]["cpu_ms_per_turn"],
    "c1 stream ms/turn": lambda r: r["c1_stream"]["ms_per_turn"],
    "c1 stream client CPU ms/turn": lambda r: r["c1_stream"]["cpu_ms_per_turn"],
    "c=100 calls per CPU-s": lambda r: r["c100"]["calls_per_cpu_s"],
    "c=1000 calls per CPU-s": lambda r: r["c1000"]["calls_per_cpu_s"],
    "errors": lambda r: r["c100"]["errors"] + r["c1000"]["errors"],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--before", required=True, help="the earlier commit")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument(
        "--output", type=Path, default=ROOT / "benchmarks/results/overhead_http_ab.json"
    )
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from overhead import FakeServer

    config = {"turns": 20, "c1_runs": 30, "concurrency": [[100, 20], [1000, 2]]}
    rounds: dict[str, list[dict[str, Any]]] = {"before": [], "now": []}
    with tempfile.TemporaryDirectory() as old, FakeServer() as base:
        archive = subprocess.run(
            ["git", "archive", args.before, *SOURCES], cwd=ROOT, capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", old], input=archive.stdout, check=True)
        for _ in range(args.rounds):
            for which in rounds:
                env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
                if which == "before":
                    env["PYTHONPATH"] = os.pathsep.join(f"{old}/{s}" for s in SOURCES)
                argv = [sys.executable, str(ROOT / "benchmarks/overhead.py"), "--worker", "http"]
                argv += ["agentsdk", json.dumps({**config, "base_url": base})]
                done = subprocess.run(
                    argv, capture_output=True, text=True, env=env, cwd=ROOT, timeout=900
                )
                if done.returncode != 0:
                    raise RuntimeError(done.stderr.strip().splitlines()[-1])
                result = json.loads(done.stdout.strip().splitlines()[-1])
                rounds[which].append(result)
                shown = "  ".join(f"{k} {f(result)}" for k, f in FIGURES.items())
                print(f"{which:6} {shown}", flush=True)
    medians = {
        which: {k: statistics.median(f(r) for r in results) for k, f in FIGURES.items()}
        for which, results in rounds.items()
    }
    print("\n| figure (median of rounds) | " + f"{args.before} | now |\n|---|---|---|")
    for key in FIGURES:
        print(f"| {key} | {medians['before'][key]:g} | {medians['now'][key]:g} |")
    report = {
        "before": args.before,
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "medians": medians,
        "rounds": rounds,
    }
    args.output.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
