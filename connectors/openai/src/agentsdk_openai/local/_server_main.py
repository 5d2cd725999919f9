"""Child-process entry point: run one llama.cpp server (xllamacpp) on 127.0.0.1.

Started by ``LocalEngine``; not a public command. It exits when its parent goes away
(stdin reaches EOF, and PR_SET_PDEATHSIG as a second line of defence), or, for a resident
engine (``--keep-alive``), ``keep_alive`` seconds after the last process using it has gone.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path


def _exit_when_parent_closes_stdin() -> None:
    try:
        while sys.stdin.buffer.read(4096):
            pass
    finally:
        os._exit(0)


def _exit_when_unused(folder: Path, key: str, keep_alive: float) -> None:
    """A resident engine's watchdog: exit once no process has held it for ``keep_alive`` s.

    The last check and the record's removal happen under the record's lock, which a
    process finding the engine also takes, so nobody attaches to a server on its way out.
    """
    from agentsdk_openai.local import resident

    idle_since = time.monotonic()
    while True:
        time.sleep(max(0.1, min(1.0, keep_alive / 4)))
        if resident.live_holders(folder, key):
            idle_since = time.monotonic()
            continue
        if time.monotonic() - idle_since < keep_alive:
            continue
        fd = resident.try_locked(folder, key)
        if fd is None:  # a process is finding or starting the engine right now
            continue
        if resident.live_holders(folder, key):
            os.close(fd)
            idle_since = time.monotonic()
            continue
        resident.remove_record(folder, key, os.getpid())
        print(f"agentsdk: no process used this engine for {keep_alive:g} s; exiting", flush=True)
        os._exit(0)  # the lock goes with the process


def _tree_ticks(root: int) -> dict[int, int]:
    """CPU ticks (user + system) so far of each process under ``root`` (``root`` itself
    included), from /proc; empty where /proc cannot be read."""
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", encoding="ascii", errors="replace") as stat:
                fields = stat.read().rpartition(")")[2].split()
        except OSError:  # it exited meanwhile
            continue
        pid = int(entry.name)
        parents[pid] = int(fields[1])  # after the name: state, ppid, ..., utime (12), stime (13)
        ticks[pid] = int(fields[11]) + int(fields[12])
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    found: dict[int, int] = {}
    todo = [root]
    while todo:
        pid = todo.pop()
        if pid in ticks and pid not in found:
            found[pid] = ticks[pid]
            todo.extend(children.get(pid, ()))
    return found


def busy_cores(cores: int, window: float = 0.25, ours: int | None = None) -> float:
    """How many cores other work keeps busy right now (from /proc/stat over ``window``).

    With ``ours`` (the agent's process id), the CPU that process and its children spend is
    not counted: a browser or Blender the agent is starting at the same moment is busy
    only while it starts, and its tool calls never overlap generation.
    """

    def sample() -> tuple[int, int]:
        with open("/proc/stat", encoding="ascii") as stat:
            ticks = [int(x) for x in stat.readline().split()[1:]]
        return sum(ticks), ticks[3] + ticks[4]  # all, idle + iowait

    try:
        before = _tree_ticks(ours) if ours else {}
        total, idle = sample()
        time.sleep(window)
        total2, idle2 = sample()
        after = _tree_ticks(ours) if ours else {}
    except (OSError, ValueError, IndexError):  # not Linux: the 1-minute load average
        return os.getloadavg()[0]
    spent = total2 - total
    if spent <= 0:
        return 0.0
    own = sum(t - before.get(pid, 0) for pid, t in after.items())
    busy = (spent - (idle2 - idle)) - max(0, own)
    return max(0.0, busy / spent * cores)


def choose_threads(cores: int, busy: float, threads: int = 0, batch: int = 0) -> tuple[int, int]:
    """Generation and prompt threads for a server starting while ``busy`` of ``cores`` are
    kept busy by other work (``threads``/``batch`` above 0 are the caller's own choice).

    Every core (at most 8) when the machine is idle, half of them otherwise. Generation
    syncs all its workers at every token, so one descheduled worker stalls the rest:
    measured with the 1.5B model on 2 cores, 2 threads decoded 8.9 tok/s idle against
    5.0 with 1 thread, but 0.9 tok/s with one core kept busy, where 1 thread still gave
    5.1. Prompt reading is a few large batches and scales with cores the same way (2
    idle cores took the demo's first tool call from ~15.5 to ~10.5 s).
    """
    idle = busy < 0.5
    half = max(1, min(cores // 2, 8))
    every = max(1, min(cores, 8))
    chosen = threads or (every if idle else half)
    return chosen, batch or (every if idle else chosen)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", required=True)
    parser.add_argument("--alias", required=True)
    parser.add_argument("--ready-file", required=True)
    parser.add_argument("--ctx", type=int, default=8192)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--batch-threads", type=int, default=0)
    parser.add_argument("--chat-template", default="")
    parser.add_argument("--parallel", type=int, default=1)
    parser.add_argument("--slot-save-path", default="")
    parser.add_argument("--keep-alive", type=float, default=0.0)
    parser.add_argument("--engines-dir", default="")
    parser.add_argument("--key", default="")
    args = parser.parse_args()

    if args.keep_alive > 0:
        watchdog = (Path(args.engines_dir), args.key, args.keep_alive)
        threading.Thread(target=_exit_when_unused, args=watchdog, daemon=True).start()
    else:
        threading.Thread(target=_exit_when_parent_closes_stdin, daemon=True).start()

    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.model_alias = args.alias
    params.hostnames = ["127.0.0.1"]
    params.port = 0  # the server picks a free port and reports it
    # Every slot gets the full context window: llama.cpp splits n_ctx between the slots.
    params.n_parallel = max(1, args.parallel)
    params.n_ctx = args.ctx * params.n_parallel
    if args.slot_save_path:  # enables POST /slots/{id}?action=save|restore (the prefix cache)
        # llama.cpp joins folder and file name by plain concatenation: end with a separator.
        params.slot_save_path = os.path.join(args.slot_save_path, "")
    params.use_jinja = True
    cores = len(os.sched_getaffinity(0))
    busy = busy_cores(cores, ours=os.getppid())
    threads, batch = choose_threads(cores, busy, args.threads, args.batch_threads)
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = batch
    # Waiting threads sleep instead of spinning, which starves other work on a busy machine.
    params.cpuparams.poll = 0
    params.cpuparams_batch.poll = 0
    token = os.environ.pop("AGENTSDK_ENGINE_TOKEN", "")
    if token:
        params.api_keys = [token]
    if args.chat_template:
        params.chat_template = Path(args.chat_template).read_text(encoding="utf-8")

    server = xllamacpp.Server(params)  # returns once the model is loaded and listening
    ready = Path(args.ready_file)
    temporary = ready.with_suffix(".tmp")
    # Line 1 the address, line 2 the thread counts (the engine logs them).
    temporary.write_text(f"{server.listening_address}\n{threads} {batch}", encoding="utf-8")
    temporary.replace(ready)
    threading.Event().wait()


if __name__ == "__main__":
    main()
