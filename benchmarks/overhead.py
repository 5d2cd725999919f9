"""Framework overhead, side by side: agentsdk, openai-agents and pydantic-ai on the same task.

Run from the repository root::

    uv run python benchmarks/overhead.py

The first run creates ``.venv-bench`` (git-ignored) with ``uv venv`` and installs
``benchmarks/requirements-peers.txt`` plus this workspace's agentsdk and agentsdk-openai as
editable packages, then re-runs itself inside it. The peers are never project dependencies.

Every framework runs in its own child process (clean peak RSS); the fake OpenAI-compatible
server runs in another. Prints markdown tables, writes ``benchmarks/results/overhead.json``
and refreshes the results section of ``benchmarks/README.md``. ``--quick`` is a tiny
configuration for the smoke test.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BENCH_VENV = ROOT / ".venv-bench"
REQUIREMENTS = HERE / "requirements-peers.txt"
README = HERE / "README.md"
README_BEGIN, README_END = "<!-- overhead:begin -->", "<!-- overhead:end -->"
INPROCESS = ["floor", "agentsdk", "openai-agents", "openai-agents-scripted", "pydantic-ai"]
HTTP = ["floor", "agentsdk", "openai-agents", "pydantic-ai"]
# The connector as shipped, and with the transports the investigation compares.
HTTP_AGENTSDK_VARIANTS = ["agentsdk+httpx-aiohttp", "agentsdk+httpx-unlimited"]


# --- the benchmark environment -------------------------------------------------------------


def _stamp() -> str:
    """Changes when the pins or the workspace packages' dependencies change."""
    digest = hashlib.sha256(REQUIREMENTS.read_bytes())
    for member in ("agentsdk", "connectors/openai"):
        digest.update((ROOT / member / "pyproject.toml").read_bytes())
    return digest.hexdigest()


def ensure_bench_venv() -> Path:
    """Create or refresh .venv-bench when the pinned requirements changed; return its python."""
    python = BENCH_VENV / "bin" / "python"
    stamp_file = BENCH_VENV / ".requirements-sha256"
    if python.exists() and stamp_file.exists() and stamp_file.read_text() == _stamp():
        return python
    uv = shutil.which("uv") or sys.exit("overhead.py needs `uv` on PATH to build .venv-bench")
    print(f"building {BENCH_VENV} from {REQUIREMENTS.name} ...", flush=True)
    subprocess.run(
        [uv, "venv", "--quiet", "--allow-existing", "-p", "3.11", str(BENCH_VENV)], check=True
    )
    install = [uv, "pip", "install", "--quiet", "--python", str(python), "-r", str(REQUIREMENTS)]
    install += ["-e", str(ROOT / "agentsdk"), "-e", str(ROOT / "connectors" / "openai")]
    subprocess.run(install, check=True, cwd=ROOT)
    stamp_file.write_text(_stamp())
    return python


def in_bench_venv() -> bool:
    """True when this interpreter is the benchmark environment's."""
    return Path(sys.prefix).resolve() == BENCH_VENV.resolve()


# --- workers (run in child processes) -----------------------------------------------------


def worker(kind: str, name: str, config: dict[str, Any]) -> None:
    """Measure one framework in this process and print its result as the last stdout line."""
    sys.path.insert(0, str(HERE))
    from _overhead_http import HttpPlan, peak_rss_mb
    from _overhead_http import measure as measure_http
    from _overhead_inprocess import measure as measure_inprocess

    if kind == "inprocess":
        result = measure_inprocess(name, **config)
        result["peak_rss_mb"] = round(peak_rss_mb(), 1)
    else:
        base_url = config.pop("base_url")
        concurrency = tuple(tuple(pair) for pair in config.pop("concurrency"))
        result = measure_http(name, base_url, HttpPlan(concurrency=concurrency, **config))
    print(json.dumps(result))


def run_worker(kind: str, name: str, config: dict[str, Any], timeout: float) -> dict[str, Any]:
    """Run one worker in a fresh interpreter; return its numbers or {"error": ...}."""
    argv = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        kind,
        name,
        json.dumps(config),
    ]
    started = time.perf_counter()
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"exit {done.returncode}: {tail}"}
    result: dict[str, Any] = json.loads(lines[-1])
    summary = _summary(result)
    print(f"  {kind:9} {name:26} {time.perf_counter() - started:6.1f} s  {summary}", flush=True)
    return result


def _summary(result: dict[str, Any]) -> str:
    if "cpu_us_per_turn" in result:
        return f"{result['cpu_us_per_turn']} µs/turn"
    phases = [k for k in result if k.startswith("c") and k[1:].isdigit()]
    return "  ".join(
        f"{k}: {result[k].get('calls_per_s', result[k].get('ms_per_turn'))}" for k in phases
    )


def fake_server() -> Any:
    """The canned chat-completions server in its own process (a ``ServerProcess``)."""
    from _server_process import ServerProcess

    return ServerProcess(HERE / "_fake_openai_server.py", path="/v1", what="fake server")


# --- orchestration ---------------------------------------------------------------------


def plan(quick: bool, c1000_turns: int) -> dict[str, Any]:
    """Workloads: the full run, or a tiny one for the smoke test."""
    if quick:
        return {
            "inprocess": {"turns": 3, "flat_turns": 6, "repeats": 3, "warmup": 1},
            "http": {"turns": 3, "c1_runs": 2, "concurrency": [[10, 3]]},
            "transports": {"turns": 3, "c1_runs": 1, "concurrency": [[10, 3]], "streaming": False},
        }
    concurrency = [[100, 20], [1000, c1000_turns]]
    return {
        "inprocess": {"turns": 20, "flat_turns": 40, "repeats": 30, "warmup": 5},
        "http": {"turns": 20, "c1_runs": 10, "concurrency": concurrency},
        # A bounded httpx pool is quadratic in its queue: keep these runs short.
        "transports": {
            "turns": 20,
            "c1_runs": 3,
            "concurrency": [[100, 5], [1000, 1]],
            "streaming": False,
        },
    }


def update_readme(section: str) -> None:
    """Replace the generated block of benchmarks/README.md with ``section``."""
    text = README.read_text()
    if README_BEGIN not in text or README_END not in text:
        print(f"{README} has no {README_BEGIN} block; not updated")
        return
    head, rest = text.split(README_BEGIN, 1)
    tail = rest.split(README_END, 1)[1]
    README.write_text(f"{head}{README_BEGIN}\n{section}\n{README_END}{tail}")


def main() -> None:
    """Parse arguments, build or enter .venv-bench, run every measurement, report."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="tiny configuration (smoke test)")
    parser.add_argument("--frameworks", nargs="+", help="subset of frameworks (default: all)")
    parser.add_argument("--transports", nargs="*", help="raw-floor HTTP clients to compare")
    parser.add_argument("--no-bench-venv", action="store_true", help="run in this interpreter")
    parser.add_argument("--skip-inprocess", action="store_true")
    parser.add_argument("--skip-http", action="store_true")
    parser.add_argument("--c1000-turns", type=int, default=2, help="tool turns per run at c=1000")
    parser.add_argument("--output", type=Path, default=HERE / "results" / "overhead.json")
    parser.add_argument(
        "--worker", nargs=3, metavar=("KIND", "NAME", "CONFIG"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.worker:
        kind, name, config = args.worker
        worker(kind, name, json.loads(config))
        return
    if not args.no_bench_venv and not in_bench_venv():
        python = ensure_bench_venv()
        os.execv(str(python), [str(python), str(Path(__file__).resolve()), *sys.argv[1:]])

    sys.path.insert(0, str(HERE))
    from _overhead_clients import TRANSPORTS
    from _overhead_report import http_table, inprocess_table, machine, machine_line

    started = time.perf_counter()
    work = plan(args.quick, args.c1000_turns)
    selected = args.frameworks or INPROCESS
    transports = TRANSPORTS if args.transports is None else args.transports
    report: dict[str, Any] = {"machine": machine(), "plan": work}
    print(machine_line(report["machine"]), flush=True)
    args.output.parent.mkdir(parents=True, exist_ok=True)

    def measure(
        section: str, key: str, kind: str, name: str, config: dict[str, Any], limit: float
    ) -> None:
        report.setdefault(section, {})[key] = run_worker(kind, name, config, limit)
        args.output.write_text(json.dumps(report, indent=2) + "\n")  # partial results survive

    report["inprocess"] = {}
    for name in INPROCESS:
        if name in selected and not args.skip_inprocess:
            measure("inprocess", name, "inprocess", name, work["inprocess"], 300)
    if not args.skip_http:
        server = fake_server()
        with server as base_url:
            http_names = [n for n in HTTP if n in selected]
            if "agentsdk" in http_names and args.transports is None:
                http_names += HTTP_AGENTSDK_VARIANTS
            for name in http_names:
                measure("http", name, "http", name, {**work["http"], "base_url": base_url}, 900)
            for variant in transports:
                config = {**work["transports"], "base_url": base_url}
                measure("transports", variant, "http", f"transport:{variant}", config, 600)
        report["server_pid"] = server.pid
    report["machine"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    report["seconds"] = round(time.perf_counter() - started, 1)

    tables = [inprocess_table(report["inprocess"])]
    if "http" in report:
        tables.append(http_table(report["http"], "over HTTP"))
    if report.get("transports"):
        tables.append(http_table(report["transports"], "raw floor over"))
    section = "\n\n".join([f"Machine: {machine_line(report['machine'])}", *tables])
    section += f"\n\nWhole run: {report['seconds']:.0f} s."
    print("\n" + section)
    args.output.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.output}")
    if (
        not args.quick
        and args.frameworks is None
        and args.output == HERE / "results" / "overhead.json"
    ):
        update_readme(section)


if __name__ == "__main__":
    main()
