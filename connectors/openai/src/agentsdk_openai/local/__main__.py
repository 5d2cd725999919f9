"""``python -m agentsdk_openai.local``: list or stop the resident local engines.

python -m agentsdk_openai.local            # list them
python -m agentsdk_openai.local stop       # stop them all
python -m agentsdk_openai.local stop qwen2.5-coder-1.5b
"""

from __future__ import annotations

import argparse
import time

from .engine import engines_dir, resident_engines, stop_resident_engines
from .resident import live_holders, records


def _rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return 0.0


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agentsdk_openai.local",
        description="List or stop the local engines kept loaded between processes.",
    )
    parser.add_argument("action", nargs="?", choices=("list", "stop"), default="list")
    parser.add_argument("model", nargs="?", default=None, help="stop only this model's engines")
    args = parser.parse_args()
    if args.action == "stop":
        stopped = stop_resident_engines(args.model)
        for record in stopped:
            print(f"stopped {record['model']} (pid {record['pid']})")
        if not stopped:
            print("no resident engine was running" + (f" for {args.model}" if args.model else ""))
        return 0
    live = resident_engines()
    if not live:
        print(f"no resident engines (records in {engines_dir()})")
        return 0
    keys = {record["pid"]: key for key, record in records(engines_dir()).items()}
    print(
        f"{'model':<22} {'pid':>7} {'address':<24} {'users':>5} {'keep':>6} {'up':>7} {'RSS MB':>7}"
    )
    for record in live:
        users = len(live_holders(engines_dir(), keys.get(record["pid"], "")))
        up = time.time() - record["started"]
        print(
            f"{record['model']:<22} {record['pid']:>7} {record['address']:<24} {users:>5} "
            f"{record['keep_alive']:>5.0f}s {up:>6.0f}s {_rss_mb(record['pid']):>7.0f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
