"""A one-machine Ray cluster for evals that comes up on a slow, loaded machine.

``ray.init()`` in the driver starts a cluster whose raylet waits a fixed 15 s for its
agents to write their port files and aborts when they are late
(ray-project/ray#65983); on two busy cores the agents' imports alone can take that
long. Started here instead as ``ray start --head --block`` in its own process group:

- every port is chosen up front, so the raylet never waits for a port file;
- fewer processes: no autoscaler monitor, no log monitor, no dashboard UI, no usage stats;
- generous worker-registration and agent timeouts (``RAY_*`` settings), and another
  attempt with fresh ports when a start fails anyway;
- its own token (``RAY_AUTH_MODE=token``): Ray's servers listen on every interface, the
  token keeps anyone else from running code on them;
- its own temporary folder, so it never shares ``/tmp/ray/session_latest`` with another
  cluster on the machine;
- stopping it kills the whole group (workers included, found by a marker in their
  environment) and checks by pid that nothing is left.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..sandbox import ManagedProcess, pid_alive, start_process

__all__ = ["LocalRayCluster", "RayStartError"]

# Ray's defaults are sized for idle machines: a worker that takes over 60 s to import
# Ray under load is declared dead and started again, forever.
_SLOW_MACHINE = {
    "RAY_worker_register_timeout_seconds": "600",
    "RAY_agent_register_timeout_ms": "600000",
    "RAY_USAGE_STATS_ENABLED": "0",
    # Workers are this interpreter; never `uv run` in a copy of the working folder.
    "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0",
}
_PORTS = (
    "port",
    "node-manager-port",
    "object-manager-port",
    "metrics-export-port",
    "dashboard-agent-grpc-port",
    "dashboard-agent-listen-port",
    "runtime-env-agent-port",
    "dashboard-port",
)
_MARK = "AGENTSDK_RAY_CLUSTER"


_TOKEN: list[str] = []


def _process_token() -> str:
    """One token per driver process: Ray's C++ side keeps the first token it loads, so a
    second cluster started by the same process must accept the same one."""
    if not _TOKEN:
        _TOKEN.append(os.environ.get("RAY_AUTH_TOKEN") or secrets.token_hex(32))
    return _TOKEN[0]


class RayStartError(RuntimeError):
    """The local Ray cluster did not come up; the message has the tail of Ray's logs."""


def _free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:  # all bound at once, so the n ports differ
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _import_path() -> str:
    """The driver's own import folders (not the interpreter's): workers on this machine
    import what the driver imports, e.g. a suite module found through ``sys.path``."""
    system = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    keep: list[str] = []
    for entry in sys.path:
        if not entry or not os.path.isdir(entry):
            continue
        path = Path(entry).resolve()
        if any(path == s or s in path.parents for s in system):
            continue
        if str(path) not in keep:
            keep.append(str(path))
    inherited = os.environ.get("PYTHONPATH", "")
    return os.pathsep.join([*keep, *([inherited] if inherited else [])])


class LocalRayCluster:
    """A Ray cluster on this machine, owned by this process.

    ``start()`` blocks until the head is up (or raises ``RayStartError``), ``connect()``
    makes this process its driver, ``stop()`` shuts it down and kills what is left.
    ``with LocalRayCluster(...) as cluster:`` does all three.

    Args:
        num_cpus: CPUs Ray may schedule on (rollout actors take none; this sizes its
            worker pool).
        env: Extra environment for the cluster's processes (its workers inherit it).
        startup_timeout: Seconds one start may take on a loaded machine.
        attempts: Starts to try, each with fresh ports, before giving up.
    """

    def __init__(
        self,
        num_cpus: int = 2,
        *,
        env: Mapping[str, str] | None = None,
        startup_timeout: float = 300.0,
        attempts: int = 2,
    ) -> None:
        if num_cpus < 1 or attempts < 1:
            raise ValueError("num_cpus and attempts must be at least 1")
        self.num_cpus = num_cpus
        self.env = dict(env or {})
        self.startup_timeout = startup_timeout
        self.attempts = attempts
        self.token = _process_token()
        self.mark = secrets.token_hex(8)
        self.address = ""
        self.temp_dir: Path | None = None
        self.process: ManagedProcess | None = None
        self.connected = False
        self._saved_env: dict[str, str | None] = {}

    # -- lifecycle ------------------------------------------------------------------

    def start(self) -> LocalRayCluster:
        """Start the head (blocking); another attempt with fresh ports if one fails."""
        reasons: list[str] = []
        for attempt in range(1, self.attempts + 1):
            try:
                self._start_once()
                return self
            except RayStartError as exc:
                reasons.append(f"attempt {attempt}: {exc}")  # the logs' tails are in here
                self._kill()
                self._remove_folder()
        raise RayStartError("the local Ray cluster did not start:\n" + "\n".join(reasons))

    def connect(self, **options: Any) -> None:
        """Make this process the cluster's driver (``ray.init(address=...)``)."""
        import ray

        if not self.address:
            raise RuntimeError("start() the cluster before connecting to it")
        self._driver_env()
        ray.init(
            address=self.address,
            log_to_driver=False,
            ignore_reinit_error=True,
            **options,
        )
        self.connected = True

    def disconnect(self) -> None:
        """Stop being the cluster's driver (``ray.shutdown()``); the cluster stays up."""
        if self.connected:
            import ray

            with contextlib.suppress(Exception):
                ray.shutdown()
            self.connected = False
        self._restore_env()

    def stop(self, grace: float = 15.0) -> None:
        """Disconnect, stop every process of the cluster and remove its folder. Idempotent."""
        self.disconnect()
        if self.process is not None:
            self.process.terminate(grace)  # SIGTERM lets Ray stop its own; then SIGKILL
        self._kill()
        self._remove_folder()

    def __enter__(self) -> LocalRayCluster:
        self.start()
        self.connect()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- what is running ------------------------------------------------------------

    def pids(self) -> list[int]:
        """Every live process of this cluster: the head, its servers and agents, and the
        workers (found by the marker each one inherits)."""
        needle = f"{_MARK}={self.mark}".encode()
        found: list[int] = []
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/environ", "rb") as f:
                    if needle in f.read().split(b"\0"):
                        found.append(int(entry.name))
            except OSError:
                continue
        return [pid for pid in found if pid_alive(pid)]

    @property
    def session_logs(self) -> Path | None:
        """The cluster's log folder (``raylet.err`` and friends)."""
        if self.temp_dir is None:
            return None
        sessions = sorted(self.temp_dir.glob("session_2*"))
        return sessions[-1] / "logs" if sessions else None

    # -- internals ------------------------------------------------------------------

    def _start_once(self) -> None:
        ports = dict(zip(_PORTS, _free_ports(len(_PORTS)), strict=True))
        # A short path: Ray's unix sockets live under it and must stay under 108 bytes.
        self.temp_dir = Path(tempfile.mkdtemp(prefix="agentsdk-ray-", dir="/tmp"))
        argv = [
            sys.executable,
            "-m",
            "ray.scripts.scripts",
            "start",
            "--head",
            "--block",
            "--node-ip-address=127.0.0.1",
            f"--num-cpus={self.num_cpus}",
            "--include-dashboard=false",
            "--disable-usage-stats",
            "--no-monitor",
            "--include-log-monitor=false",
            f"--temp-dir={self.temp_dir}",
            *[f"--{name}={port}" for name, port in ports.items()],
        ]
        env = {
            **_SLOW_MACHINE,
            "PYTHONPATH": _import_path(),
            **self.env,
            "RAY_AUTH_MODE": "token",
            "RAY_AUTH_TOKEN": self.token,
            _MARK: self.mark,
        }
        log = (self.temp_dir / "ray-start.log").open("wb")
        try:
            self.process = start_process(
                argv, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log
            )
        finally:
            log.close()
        ready = self.temp_dir / "ray_current_cluster"  # written once the head is up
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if not self.process.alive:
                raise RayStartError(
                    f"`ray start` exited ({self.process.popen.returncode}):\n{self._logs()}"
                )
            if ready.is_file() and ready.read_text().strip():
                self.address = f"127.0.0.1:{ports['port']}"
                return
            time.sleep(0.25)
        raise RayStartError(f"no head after {self.startup_timeout:g} s:\n{self._logs()}")

    def _remove_folder(self) -> None:
        if self.temp_dir is not None:
            shutil.rmtree(self.temp_dir, ignore_errors=True)
            self.temp_dir = None

    def _logs(self, lines: int = 15) -> str:
        out: list[str] = []
        folders = [self.temp_dir] if self.temp_dir is not None else []
        if self.session_logs is not None:
            folders.append(self.session_logs)
        for folder in folders:
            for name in ("ray-start.log", "raylet.err", "raylet.out", "gcs_server.err"):
                path = folder / name
                if not path.is_file():
                    continue
                text = path.read_text(errors="replace").splitlines()
                useful = [t for t in text if "[state-dump]" not in t][-lines:]
                if useful:
                    out.append(f"--- {path}\n" + "\n".join(useful))
        return "\n".join(out) or "(no Ray logs)"

    def _kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process = None
        for _ in range(3):  # whatever left the group and the sandbox's reach
            left = self.pids()
            if not left:
                return
            for pid in left:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.2)

    def _driver_env(self) -> None:
        """The driver talks to this cluster with its token, and runs its own interpreter
        on the workers (Ray's `uv run` hook would restart them in an empty venv)."""
        wanted = {
            "RAY_AUTH_MODE": "token",
            "RAY_AUTH_TOKEN": self.token,
            "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0",
        }
        for key, value in wanted.items():
            self._saved_env.setdefault(key, os.environ.get(key))
            os.environ[key] = value
        import ray._private.ray_constants as constants

        # Read at import time; the driver may have imported Ray before we got here.
        constants.RAY_ENABLE_UV_RUN_RUNTIME_ENV = False
        with contextlib.suppress(Exception):  # Ray's C++ config re-reads RAY_AUTH_MODE
            importlib.import_module("ray._raylet").Config.initialize("")

    def _restore_env(self) -> None:
        for key, value in self._saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        self._saved_env.clear()
