"""Run child processes that cannot take the agent down.

Every child gets its own process group and, on Linux, dies with its parent
(``PR_SET_PDEATHSIG``). A timeout or a cancelled run kills the whole group,
so engines and the helpers they spawn leave no orphans; if the agent process
itself dies, a small warden process kills the groups that are left. What left
the group (``setsid``: Godot's ``OS.execute``, daemons) is found by a marker in
its environment and by its ancestry, and killed with the group.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import json
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from typing import IO, Any

import anyio
from pydantic import BaseModel

__all__ = [
    "Limits",
    "ManagedProcess",
    "ProcessResult",
    "kill_process_group",
    "pid_alive",
    "run_process",
    "start_process",
]

_SAFE_ENV = (
    "PATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "TMPDIR",
    "DISPLAY",
    "XDG_RUNTIME_DIR",
    "XDG_CACHE_HOME",
    "PYTHONPATH",
    "VIRTUAL_ENV",
)


class Limits(BaseModel):
    """Resource limits applied to the child with ``setrlimit``."""

    cpu_seconds: int | None = None
    memory_bytes: int | None = None
    file_size_bytes: int | None = None
    open_files: int | None = None


class ProcessResult(BaseModel):
    """What a finished child process did."""

    argv: list[str]
    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    duration: float
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    pid: int

    @property
    def ok(self) -> bool:
        """Exited with status 0 and did not time out."""
        return self.returncode == 0 and not self.timed_out


def _prctl_pdeathsig() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def _preexec(limits: Limits | None, *, die_with_parent: bool = True) -> Any:
    def setup() -> None:
        if die_with_parent:
            _prctl_pdeathsig()
        if limits is None:
            return
        import resource

        pairs = (
            (resource.RLIMIT_CPU, limits.cpu_seconds),
            (resource.RLIMIT_AS, limits.memory_bytes),
            (resource.RLIMIT_FSIZE, limits.file_size_bytes),
            (resource.RLIMIT_NOFILE, limits.open_files),
        )
        for which, value in pairs:
            if value is not None:
                resource.setrlimit(which, (value, value))

    return setup


# anyio's open_process has no preexec_fn, so a tiny Python launcher applies the
# death signal and the limits, then execs the real program (same pid).
_LAUNCHER = """
import ctypes, json, os, resource, signal, sys
try:
    ctypes.CDLL("libc.so.6").prctl(1, signal.SIGKILL, 0, 0, 0)
except OSError:
    pass
for name, value in json.loads(sys.argv[1]).items():
    resource.setrlimit(getattr(resource, name), (value, value))
try:
    os.execvp(sys.argv[2], sys.argv[2:])
except OSError as exc:
    sys.stderr.write(f"cannot start {sys.argv[2]!r}: {exc}\\n")
    os._exit(127)
"""


def _launcher_argv(argv: Sequence[str], limits: Limits | None) -> list[str]:
    rlimits: dict[str, int] = {}
    if limits is not None:
        names = {
            "RLIMIT_CPU": limits.cpu_seconds,
            "RLIMIT_AS": limits.memory_bytes,
            "RLIMIT_FSIZE": limits.file_size_bytes,
            "RLIMIT_NOFILE": limits.open_files,
        }
        rlimits = {k: v for k, v in names.items() if v is not None}
    if not sys.platform.startswith("linux"):
        return [str(a) for a in argv]
    return [sys.executable, "-S", "-c", _LAUNCHER, json.dumps(rlimits), *map(str, argv)]


def _environment(
    env: Mapping[str, str] | None, inherit_env: bool, mark: str | None = None
) -> dict[str, str]:
    if inherit_env:
        base = dict(os.environ)
    else:
        base = {k: os.environ[k] for k in _SAFE_ENV if k in os.environ}
    if env:
        base.update(env)
    if mark is not None:
        # appended, so a sandbox inside a sandbox stays findable by both
        base[_MARK] = f"{os.environ.get(_MARK, '')} {mark}".strip()
    return base


# --- processes that leave the group ---
# A child that calls setsid (Godot's OS.execute does) or a daemon that forks twice leaves its
# process group, and a group kill misses it. Every child we start carries a word in the
# environment variable _MARK, which whatever it starts inherits; a kill also finds those
# processes (and descendants that cleared their environment, by a walk of parent pids).
_MARK = "AGENTSDK_SANDBOX"
_marks: dict[int, str] = {}  # pid of a child we started -> its word
_counter = itertools.count(1)
_agent_words: dict[int, str] = {}  # this process's random prefix (a fork gets its own)


def _agent_word() -> str:
    pid = os.getpid()
    if pid not in _agent_words:
        _agent_words[pid] = secrets.token_hex(6)
    return _agent_words[pid]


def _new_mark() -> str:
    return f"{_agent_word()}.{next(_counter)}"


def _escaped(mark: str) -> list[int]:
    """Live processes carrying ``mark``, plus every descendant of those."""
    if not os.path.isdir("/proc"):
        return []
    parents: dict[int, int] = {}
    found: set[int] = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        pid = int(entry)
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
            if fields[0] in (b"Z", b"X"):
                continue
            parents[pid] = int(fields[1])
            with open(f"/proc/{pid}/environ", "rb") as environ:
                variables = environ.read().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        prefix = _MARK.encode() + b"="
        for item in variables:
            if item.startswith(prefix) and mark.encode() in item[len(prefix) :].split():
                found.add(pid)
    grew = True
    while grew:  # close the set under "child of"
        grew = False
        for pid, parent in parents.items():
            if parent in found and pid not in found:
                found.add(pid)
                grew = True
    found.discard(os.getpid())
    return sorted(pid for pid in found if pid in parents)


# --- the warden: kills our process groups when the agent process dies, however it dies ---
# PR_SET_PDEATHSIG reaches only a direct child. What that child spawned (Xvfb under
# xvfb-run, a shell's background job) stays in its process group but would outlive a
# SIGKILLed agent. The warden is one small process per agent process, in its own session:
# it learns each group we start through a pipe, and when the pipe closes (the agent
# exited or was killed) it SIGKILLs every group still registered. Once a second it forgets
# groups that have no process left, so a recycled number is never killed by mistake
# (Linux does not reuse a pid while a process group of that number has members).
_WARDEN = r"""# agentsdk sandbox warden: kills the agent's process groups when the agent dies
import os, select, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
groups, pending = set(), b""
fd = sys.stdin.fileno()
while True:
    ready, _, _ = select.select([fd], [], [], 1.0)
    if ready:
        data = os.read(fd, 65536)
        if not data:
            break
        *lines, pending = (pending + data).split(b"\n")
        for line in lines:
            if line[:1] == b"+":
                groups.add(int(line[1:]))
            elif line[:1] == b"-":
                groups.discard(int(line[1:]))
    for pgid in list(groups):
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            groups.discard(pgid)
        except PermissionError:
            pass
for pgid in groups:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
# processes that left their group carry "AGENTSDK_SANDBOX=... <agent word>.<n>" (see _escaped)
word = ("%s." % sys.argv[1]).encode()
for _ in range(3):
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        try:
            with open("/proc/%s/environ" % entry, "rb") as environ:
                items = environ.read().split(b"\0")
            marked = [i for i in items if i.startswith(b"AGENTSDK_SANDBOX=")]
            if marked and any(w.startswith(word) for w in marked[0][17:].split()):
                if int(entry) != os.getpid():
                    os.kill(int(entry), signal.SIGKILL)
        except (OSError, ValueError):
            pass
"""


class _Warden:
    """The agent side of the warden: starts it on first use, tells it about groups."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._popen: subprocess.Popen[bytes] | None = None
        self._owner = 0  # the pid that started it (a forked child needs its own)

    def _tell(self, line: bytes) -> None:
        with self._lock:
            for _ in range(2):
                if (
                    self._popen is None
                    or self._owner != os.getpid()
                    or self._popen.poll() is not None
                ):
                    self._popen = subprocess.Popen(
                        [sys.executable, "-S", "-c", _WARDEN, _agent_word()],
                        stdin=subprocess.PIPE,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                        start_new_session=True,
                    )
                    self._owner = os.getpid()
                assert self._popen.stdin is not None
                try:
                    self._popen.stdin.write(line)
                    self._popen.stdin.flush()
                    return
                except (BrokenPipeError, ValueError):
                    self._popen = None  # it died: start another and say it again

    def watch(self, pgid: int) -> None:
        """Kill group ``pgid`` if this process dies while the group still exists."""
        with contextlib.suppress(OSError):
            self._tell(b"+%d\n" % pgid)

    def forget(self, pgid: int) -> None:
        """The group was killed or has ended."""
        if self._popen is not None and self._owner == os.getpid():
            with contextlib.suppress(OSError):
                self._tell(b"-%d\n" % pgid)

    @property
    def pid(self) -> int | None:
        """The warden's pid, once it runs."""
        return self._popen.pid if self._popen is not None else None


_warden = _Warden()


def pid_alive(pid: int) -> bool:
    """True if process ``pid`` exists and has not exited (a zombie counts as exited).

    Where that cannot be told without side effects (Windows, where ``os.kill(pid, 0)``
    would send Ctrl-C), the answer is True.
    """
    if sys.platform == "win32":
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except FileNotFoundError:
        return False
    except (OSError, IndexError):  # no /proc (macOS): ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


def kill_process_group(pid: int, sig: int = signal.SIGKILL) -> None:
    """Send ``sig`` to the process group led by ``pid``; quiet if it is gone.

    For a child started here, what left the group (``setsid``, daemons) gets ``sig`` too.
    """
    mark = _marks.get(pid)
    # collected first: the parent links that lead to an escaped process die with the group
    escaped = _escaped(mark) if mark is not None else []
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
    rounds = 3 if sig == signal.SIGKILL else 1
    while escaped and rounds:  # again: one may have forked between the look and the kill
        for other in escaped:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(other, sig)
        rounds -= 1
        escaped = _escaped(mark) if mark is not None and rounds else []


def _release(pid: int) -> None:
    """The child and everything it started are dead: forget it."""
    _marks.pop(pid, None)
    _warden.forget(pid)


class ManagedProcess:
    """A long-lived child (an engine, a worker) in its own process group."""

    def __init__(self, popen: subprocess.Popen[bytes]):
        self.popen = popen
        self.pid = popen.pid

    @property
    def alive(self) -> bool:
        """True while the child has not exited."""
        return self.popen.poll() is None

    def kill(self) -> None:
        """Kill the whole process group (and what left it) and reap the child. Idempotent."""
        kill_process_group(self.pid)
        _release(self.pid)
        with contextlib.suppress(ProcessLookupError):
            self.popen.kill()
        with contextlib.suppress(Exception):
            self.popen.wait(timeout=5)
        for stream in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            if stream is not None:
                with contextlib.suppress(Exception):
                    stream.close()

    def terminate(self, grace: float = 3.0) -> None:
        """SIGTERM the group, then SIGKILL after ``grace`` seconds."""
        kill_process_group(self.pid, signal.SIGTERM)
        try:
            self.popen.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
        self.kill()

    async def wait(self, timeout: float | None = None) -> int | None:
        """Wait for exit without blocking the event loop; None on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.popen.poll() is None:
            if deadline is not None and time.monotonic() >= deadline:
                return None
            await anyio.sleep(0.02)
        return self.popen.returncode

    def __enter__(self) -> ManagedProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()


def start_process(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    inherit_env: bool = True,
    limits: Limits | None = None,
    stdin: int | IO[Any] | None = subprocess.PIPE,
    stdout: int | IO[Any] | None = subprocess.PIPE,
    stderr: int | IO[Any] | None = subprocess.PIPE,
    detached: bool = False,
) -> ManagedProcess:
    """Start a long-lived child in its own process group.

    ``detached``: the child outlives this process (no death signal, not watched by the
    warden), for a server that ends itself, such as a resident engine. It still runs in
    a session of its own with ``limits``, ``kill()`` still ends it, and an enclosing
    sandbox that kills what escaped it (the marker it inherits) still finds it.
    """
    mark = None if detached else _new_mark()
    popen = subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=_environment(env, inherit_env, mark),
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        start_new_session=True,
        preexec_fn=_preexec(limits, die_with_parent=not detached),
    )
    if mark is not None:
        _marks[popen.pid] = mark
        _warden.watch(popen.pid)
    return ManagedProcess(popen)


async def _drain(stream: anyio.abc.ByteReceiveStream | None, sink: bytearray, cap: int) -> bool:
    truncated = False
    if stream is None:
        return truncated
    async for chunk in stream:
        room = cap - len(sink)
        if room > 0:
            sink.extend(chunk[:room])
        if len(chunk) > room:
            truncated = True
    return truncated


async def run_process(
    argv: Sequence[str],
    *,
    timeout: float | None = None,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    inherit_env: bool = True,
    limits: Limits | None = None,
    input: bytes | None = None,
    max_output: int = 1_000_000,
) -> ProcessResult:
    """Run a child to completion with a timeout; output is captured and capped.

    On timeout the process group is killed and ``timed_out`` is set. If the
    calling task is cancelled, the group is killed before cancellation
    propagates. When the child exits, what it left running (in its group or
    detached from it) is killed, so it cannot hold the run open.
    """
    start = time.monotonic()
    mark = _new_mark()
    process = await anyio.open_process(
        _launcher_argv(argv, limits),
        cwd=cwd,
        env=_environment(env, inherit_env, mark),
        start_new_session=True,
        stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
    )
    pid = process.pid
    _marks[pid] = mark
    _warden.watch(pid)
    out, err = bytearray(), bytearray()
    flags = {"out": False, "err": False, "timed_out": False}
    try:

        async def read_out() -> None:
            flags["out"] = await _drain(process.stdout, out, max_output)

        async def read_err() -> None:
            flags["err"] = await _drain(process.stderr, err, max_output)

        with anyio.move_on_after(timeout) as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(read_out)
                tg.start_soon(read_err)
                if input is not None and process.stdin is not None:
                    await process.stdin.send(input)
                    await process.stdin.aclose()
                await process.wait()
                # leftovers would keep the output pipes open until the timeout
                kill_process_group(pid)
        if scope.cancelled_caught:
            flags["timed_out"] = True
    finally:
        kill_process_group(pid)
        _release(pid)
        with anyio.CancelScope(shield=True):
            with contextlib.suppress(Exception):
                process.kill()
            with contextlib.suppress(Exception):
                await process.wait()
            with contextlib.suppress(Exception):
                await process.aclose()
    return ProcessResult(
        argv=[str(a) for a in argv],
        returncode=None if flags["timed_out"] else process.returncode,
        stdout=out.decode("utf-8", "replace"),
        stderr=err.decode("utf-8", "replace"),
        timed_out=flags["timed_out"],
        duration=time.monotonic() - start,
        stdout_truncated=flags["out"],
        stderr_truncated=flags["err"],
        pid=pid,
    )
