"""Does speculative decoding shorten the demo's first tool call on this machine?

Records the first chat request ``agentsdk demo`` sends (the 1.5B model's, on
threejs/place-and-frame: the system turn, the tools, the grammar), then, for each mode, starts
a llama.cpp server (xllamacpp) with the 1.5B model and that mode, sends the request once to
read the prefix (its generation is timed too: a reply not seen before), and times it
``--reps`` more times, when only the reply is generated (and a speculator that remembers
what the server generated before, ``ngram_mod``, can draft all of it); then a probe whose
reply repeats itself, to check the output is the same with and without drafting.
Modes: ``none``; ``draft`` (the 0.5B model drafts for the 1.5B one); ``ngram_simple``,
``ngram_map_k``, ``ngram_mod`` (drafts looked up in the prompt itself). Prints a table and
writes benchmarks/results/speculative.json.

    uv run --no-sync python benchmarks/speculative.py [--reps 3]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).parent / "results" / "speculative.json"
MODES = ("none", "draft", "ngram_simple", "ngram_map_k", "ngram_mod")

_RECORD = """
import sys
from pathlib import Path
from agentsdk_openai import model as m

out = Path(sys.argv[1])
original = m.OpenAIChatModel._post

class Recorded(Exception):
    pass

async def _post(self, body, timeout, *, stream):
    out.write_bytes(body)
    raise Recorded()

m.OpenAIChatModel._post = _post
from agentsdk.cli import main
main(["demo", "--task", "threejs/place-and-frame", "--keep-alive", "0"])
"""


def record_request(path: Path) -> dict[str, Any]:
    """The demo's first chat request body (the demo itself then fails: that is expected)."""
    subprocess.run(
        [sys.executable, "-c", _RECORD, str(path)], cwd=ROOT, capture_output=True, timeout=600
    )
    if not path.exists():
        raise SystemExit("the demo sent no chat request; is the 1.5B model installed?")
    body: dict[str, Any] = json.loads(path.read_text())
    return body


_SERVE = """
import json, sys, time, urllib.request
from pathlib import Path
import xllamacpp
from agentsdk_openai.local.catalog import resolve_model_path

mode, request_files, reps = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3])
template = Path(sys.argv[4])
params = xllamacpp.CommonParams()
params.model.path = str(resolve_model_path("qwen2.5-coder-1.5b")[0])
params.model_alias = "qwen2.5-coder-1.5b"
params.hostnames = ["127.0.0.1"]
params.port = 0
params.n_parallel = 1
params.n_ctx = 8192
params.use_jinja = True
params.chat_template = template.read_text()
for cpu in (params.cpuparams, params.cpuparams_batch):
    cpu.n_threads, cpu.poll = 2, 0
kinds = type(params.speculative.types[0])
spec = params.speculative
if mode == "draft":
    spec.types = [kinds.COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE]
    spec.draft.mparams.path = str(resolve_model_path("qwen2.5-coder-0.5b")[0])
    spec.draft.n_max = 8
    for cpu in (spec.draft.cpuparams, spec.draft.cpuparams_batch):
        cpu.n_threads, cpu.poll = 2, 0
elif mode != "none":
    spec.types = [getattr(kinds, "COMMON_SPECULATIVE_TYPE_" + mode.upper())]
server = xllamacpp.Server(params)
address = server.listening_address
url = (address if address.startswith("http") else "http://" + address) + "/v1/chat/completions"
out = []
for request_file in request_files:
    body = Path(request_file).read_bytes()
    runs = []
    for rep in range(reps + 1):
        started = time.perf_counter()
        request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
        reply = json.loads(urllib.request.urlopen(request, timeout=900).read())
        timings = reply.get("timings", {})
        message = reply["choices"][0]["message"]
        runs.append({
            "seconds": round(time.perf_counter() - started, 2),
            "prompt_tokens": timings.get("prompt_n"),
            "generated_tokens": timings.get("predicted_n"),
            "prompt_ms": timings.get("prompt_ms"),
            "generate_ms": timings.get("predicted_ms"),
            "drafted": timings.get("draft_n"),
            "accepted": timings.get("draft_n_accepted"),
            "reply": json.dumps(message.get("tool_calls") or message.get("content")),
        })
    out.append(runs)
print(json.dumps(out))
"""


PROBE = {
    "messages": [
        {"role": "user", "content": "Write the numbers from 1 to 80, separated by commas."}
    ],
    "max_tokens": 240,
    "temperature": 0,
}
"""A reply that repeats itself: drafting from earlier tokens is most at home here, and any
change to the greedy output shows at once."""


def run_mode(mode: str, files: list[Path], reps: int) -> dict[str, Any]:
    template = ROOT / "connectors/openai/src/agentsdk_openai/local/templates/qwen_tools.jinja"
    names = ",".join(str(f) for f in files)
    done = subprocess.run(
        [sys.executable, "-c", _SERVE, mode, names, str(reps), str(template)],
        cwd=ROOT, capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    lines = [line for line in done.stdout.splitlines() if line.startswith("[")]
    if done.returncode != 0 or not lines:
        return {"mode": mode, "error": done.stderr.strip().splitlines()[-3:]}
    demo, probe = json.loads(lines[-1])
    timed = [r["seconds"] for r in demo[1:]]  # the first one also read the prefix
    return {
        "mode": mode,
        "first_with_prefix_s": demo[0]["seconds"],
        "first_generate_s": round((demo[0]["generate_ms"] or 0) / 1000, 2),
        "first_prompt_s": round((demo[0]["prompt_ms"] or 0) / 1000, 2),
        "reply_s": timed,
        "median_reply_s": statistics.median(timed),
        "generated_tokens": demo[-1]["generated_tokens"],
        "drafted": demo[-1]["drafted"],
        "accepted": demo[-1]["accepted"],
        "call": demo[-1]["reply"],
        "calls_all_same": len({r["reply"] for r in demo}) == 1,
        "probe_replies": [r["reply"][:120] for r in probe],
        "probe_all_same": len({r["reply"] for r in probe}) == 1,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--modes", default=",".join(MODES))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        request_file = Path(work) / "request.json"
        body = record_request(request_file)
        body.pop("stream", None)
        request_file.write_text(json.dumps(body))
        probe_file = Path(work) / "probe.json"
        probe_file.write_text(json.dumps(PROBE))
        results = []
        for mode in args.modes.split(","):
            print(f"{mode}...", file=sys.stderr, flush=True)
            results.append(run_mode(mode, [request_file, probe_file], args.reps))
    plain = next((r for r in results if r["mode"] == "none" and "call" in r), None)
    print(
        "| mode | demo call, first time: generating (s) | the same again (s), median | "
        "drafted / accepted | same output as `none` (demo call; repeated numbers) |"
    )
    print("|---|---|---|---|---|")
    for r in results:
        if "error" in r:
            print(f"| {r['mode']} | error | {' '.join(r['error'])} | | |")
            continue
        if plain is not None:
            r["same_call_as_none"] = r["calls_all_same"] and r["call"] == plain["call"]
            r["same_probe_as_none"] = (
                r["probe_all_same"] and r["probe_replies"] == plain["probe_replies"]
            )
        drafts = f"{r['drafted']} / {r['accepted']}" if r["drafted"] is not None else "none"
        same = f"{r.get('same_call_as_none')}; {r.get('same_probe_as_none')}"
        print(
            f"| {r['mode']} | {r['first_generate_s']:.2f} | {r['median_reply_s']:.2f} "
            f"| {drafts} | {same} |"
        )
    RESULTS.write_text(
        json.dumps(
            {
                "benchmark": "speculative",
                "date": time.strftime("%Y-%m-%d"),
                "machine": {
                    "cpus": os.cpu_count(),
                    "platform": platform.platform(),
                    "load_average_1m_at_end": round(os.getloadavg()[0], 2),
                },
                "requests": [
                    "agentsdk demo's first request (threejs/place-and-frame, 1.5B model)",
                    PROBE["messages"][0]["content"],  # type: ignore[index]
                ],
                "results": results,
            },
            indent=1,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
