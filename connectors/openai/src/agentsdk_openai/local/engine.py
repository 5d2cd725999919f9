"""``LocalEngine``: a llama.cpp server that agentsdk starts itself on loopback."""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import httpx
from agentsdk.sandbox import ManagedProcess, kill_process_group, pid_alive, start_process

from agentsdk import ModelError

from . import resident
from ._server_main import busy_cores, choose_threads
from .catalog import BUILTIN_MODELS, BuiltinModel, cache_dir, resolve_model_path
from .prefix_cache import PrefixCache, build_id

__all__ = [
    "KEEP_ALIVE_ENV",
    "LocalEngine",
    "LocalEngineError",
    "engines_dir",
    "resident_engines",
    "running_engines",
    "stop_all_engines",
    "stop_resident_engines",
]

logger = logging.getLogger("agentsdk_openai.local")

_TEMPLATES = Path(__file__).parent / "templates"
_WORKDIR_PREFIX = "agentsdk-engine-"
_ENGINES: dict[str, LocalEngine] = {}


KEEP_ALIVE_ENV = "AGENTSDK_ENGINE_KEEP_ALIVE"
"""Seconds an engine stays loaded for the next process when an engine is made without
``keep_alive`` (``agentsdk demo`` and ``agentsdk run`` set it from ``--keep-alive``)."""


class LocalEngineError(ModelError):
    """The local engine could not start; the message includes the end of its log."""


def engines_dir() -> Path:
    """Where resident engines are recorded (``<cache>/engines``; private to the user)."""
    return cache_dir() / "engines"


def _keep_alive_default() -> float:
    text = os.environ.get(KEEP_ALIVE_ENV, "").strip()
    if not text:
        return 0.0
    try:
        seconds = float(text)
    except ValueError:
        raise ValueError(f"{KEEP_ALIVE_ENV}={text!r} is not a number of seconds") from None
    return max(0.0, seconds)


class LocalEngine:
    """A llama.cpp server (PyPI ``xllamacpp``) in a child process on 127.0.0.1.

    The child runs in its own process group, dies with its parent (PR_SET_PDEATHSIG and
    a closed stdin) and requires a random bearer token. Use ``LocalEngine.shared(model)``
    to get the engine every agent in this process shares for that model; it starts
    lazily on first use and stops at interpreter exit or on ``await engine.stop()``::

        async with LocalEngine("smollm2-135m") as engine:
            print(engine.base_url)

    With ``keep_alive`` (seconds; ``AGENTSDK_ENGINE_KEEP_ALIVE`` when not given) the
    server is *resident*: it outlives this process, and the next process that asks for
    the same engine uses it instead of loading the model again. It exits by itself
    ``keep_alive`` seconds after the last process using it has gone; ``stop()`` ends it
    at once. See ``agentsdk_openai.local.resident``.
    """

    def __init__(
        self,
        model: str = "default",
        *,
        context_window: int | None = None,
        threads: int | None = None,
        batch_threads: int | None = None,
        startup_timeout: float = 180.0,
        chat_template: str | Path | None = None,
        parallel: int = 1,
        kv_cache_dir: str | Path | None = None,
        keep_alive: float | None = None,
    ):
        if parallel < 1:
            raise ValueError(f"parallel must be at least 1, not {parallel}")
        builtin = BUILTIN_MODELS.get(model)
        self.model = builtin.name if builtin else model
        self.builtin: BuiltinModel | None = builtin
        self.context_window = context_window or (builtin.context_window if builtin else 8192)
        self.threads = threads
        self.batch_threads = batch_threads
        self.startup_timeout = startup_timeout
        self._chat_template = Path(chat_template) if chat_template else None
        self.parallel = parallel
        kv_default = os.environ.get("AGENTSDK_KV_CACHE_DIR") or cache_dir() / "kv"
        self.kv_cache_dir = Path(kv_cache_dir or kv_default)
        self.keep_alive = _keep_alive_default() if keep_alive is None else max(0.0, keep_alive)
        """Seconds the server stays loaded after the last process using it (0: it dies
        with this process)."""
        self.attached = False
        """True when the running server was found resident, not started by this process."""
        self.model_path: Path | None = None
        self.launches = 0  # bumped on every start
        self.threads_used: tuple[int, int] | None = None
        """(generation, prompt) threads of the running server: every core when the machine
        was idle as it started, half of them otherwise (unless ``threads`` is given)."""
        self.prefix_cache: PrefixCache | None = None
        """The prefix cache of the running server (a new one per start: a restarted server
        holds nothing in its slots)."""
        self._token = secrets.token_urlsafe(24)
        self._process: ManagedProcess | None = None
        self._resident: tuple[str, int] | None = None  # (key, pid) of a resident server
        self._base_url: str | None = None
        self._starting = False
        self._log_path: Path | None = None
        self._workdir: tempfile.TemporaryDirectory[str] | None = None

    @property
    def slots(self) -> int:
        """How many requests the server decodes at once (``parallel``)."""
        return self.parallel

    @classmethod
    def shared(cls, model: str = "default", *, parallel: int | None = None) -> LocalEngine:
        """The engine every caller in this process shares for ``model`` (not started yet).

        ``parallel`` slots take effect when the shared engine is made (or restarted after
        ``stop()``); asking a running engine for a different count is a ``ValueError``.
        """
        builtin = BUILTIN_MODELS.get(model)
        key = builtin.name if builtin else str(Path(model).expanduser().resolve())
        engine = _ENGINES.get(key)
        if engine is None:
            engine = _ENGINES[key] = cls(model, parallel=parallel or 1)
        elif parallel is not None and parallel != engine.parallel:
            if engine.running:
                raise ValueError(
                    f"the shared {engine.model} engine already runs with {engine.parallel} "
                    f"slot(s); stop it first to serve {parallel}"
                )
            engine.parallel = parallel
        return engine

    def __repr__(self) -> str:  # the token stays out of reprs and logs
        return f"LocalEngine(model={self.model!r}, base_url={self._base_url!r}, pid={self.pid})"

    @property
    def pid(self) -> int | None:
        """Process id of the server while it runs."""
        if self._resident is not None:
            return self._resident[1] if pid_alive(self._resident[1]) else None
        return self._process.pid if self._process is not None and self._process.alive else None

    @property
    def running(self) -> bool:
        """True while the server process is alive and was reported ready."""
        return self._base_url is not None and self.pid is not None

    @property
    def address(self) -> str:
        """The ``http://127.0.0.1:<port>`` root (llama.cpp's own endpoints live here)."""
        return self.base_url.removesuffix("/v1")

    @property
    def base_url(self) -> str:
        """The ``http://127.0.0.1:<port>/v1`` URL; raises if not started."""
        if self._base_url is None:
            raise LocalEngineError(f"local engine for {self.model} is not running")
        return self._base_url

    @property
    def token(self) -> str:
        """Bearer token the server requires."""
        return self._token

    @property
    def log_path(self) -> Path | None:
        """The server's log file (stdout and stderr)."""
        return self._log_path

    async def __aenter__(self) -> LocalEngine:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def start(self) -> None:
        """Start the server if it is not running (idempotent; concurrent callers wait)."""
        # Another task is starting it: poll rather than share an Event, which would be
        # bound to one event loop (run_sync starts a new loop per run).
        while self._starting:  # noqa: ASYNC110
            await anyio.sleep(0.05)
        if self.running:
            return
        if self._process is not None or self._resident is not None:
            # it died (or its starting thread ended): start afresh
            logger.warning("local engine for %s exited; restarting it", self.model)
            self._cleanup()
        self._starting = True
        try:
            await self._launch()
        except BaseException:
            self._cleanup()  # cancelled or failed mid-start: no process survives
            raise
        finally:
            self._starting = False

    async def _launch(self) -> None:
        started = time.perf_counter()
        model_path, builtin = await anyio.to_thread.run_sync(resolve_model_path, self.model)
        self.model_path = model_path
        template = self._chat_template
        if template is None and builtin is not None and builtin.chat_template:
            template = _TEMPLATES / builtin.chat_template
        self.kv_cache_dir.mkdir(parents=True, exist_ok=True)
        if self.keep_alive > 0:
            await self._find_or_start_resident(model_path, template, started)
            return
        _remove_stale_workdirs()
        self._workdir = tempfile.TemporaryDirectory(prefix=f"{_WORKDIR_PREFIX}{os.getpid()}-")
        work = Path(self._workdir.name)
        self._log_path = work / "server.log"
        await self._spawn(self._argv(model_path, template, work / "address"), detached=False)
        self._ready(model_path, started)

    def _argv(self, model_path: Path, template: Path | None, ready: Path) -> list[str]:
        argv = [
            sys.executable, "-m", "agentsdk_openai.local._server_main",
            "--model", str(model_path), "--alias", self.model, "--ready-file", str(ready),
            "--ctx", str(self.context_window), "--threads", str(self.threads or 0),
            "--batch-threads", str(self.batch_threads or 0),
            "--parallel", str(self.parallel), "--slot-save-path", str(self.kv_cache_dir),
        ]  # fmt: skip
        if template is not None:
            argv += ["--chat-template", str(template)]
        return argv

    async def _spawn(self, argv: list[str], *, detached: bool) -> None:
        """Start the server process and wait until it answers."""
        assert self._log_path is not None
        ready = Path(argv[argv.index("--ready-file") + 1])
        logger.info("starting local engine: %s on 127.0.0.1", self.model)
        with self._log_path.open("wb") as log:
            # Started on the event-loop thread: PR_SET_PDEATHSIG is tied to the spawning thread.
            self._process = start_process(
                argv, stdin=subprocess.DEVNULL if detached else subprocess.PIPE, stdout=log,
                stderr=subprocess.STDOUT, env={"AGENTSDK_ENGINE_TOKEN": self._token},
                detached=detached,
            )  # fmt: skip
        logger.info("local engine pid %d is loading the model", self._process.pid)
        address = await self._wait_for_address(ready)
        await self._wait_for_health(address)
        self._base_url = f"{address}/v1"

    def _ready(self, model_path: Path, started: float) -> None:
        self.launches += 1
        self.prefix_cache = PrefixCache(self.kv_cache_dir, model_path, slots=self.parallel)
        logger.info(
            "local engine ready: %s at %s in %.1f s (threads %s)",
            self.model,
            self.address,
            time.perf_counter() - started,
            "/".join(map(str, self.threads_used or ())) or "?",
        )

    # -- resident engines ----------------------------------------------------------------

    def _resident_key(self, model_path: Path, template: Path | None) -> str:
        stat = model_path.stat()
        return resident.engine_key(
            model=str(model_path.resolve()), size=stat.st_size, mtime=stat.st_mtime_ns,
            ctx=self.context_window, parallel=self.parallel, threads=self.threads or 0,
            batch=self.batch_threads or 0, kv=str(self.kv_cache_dir.resolve()),
            template=hashlib.sha256(template.read_bytes()).hexdigest() if template else "",
            build=build_id(),
        )  # fmt: skip

    async def _find_or_start_resident(
        self, model_path: Path, template: Path | None, started: float
    ) -> None:
        """Use the resident server for this engine if one runs; else start one that stays."""
        folder, key = engines_dir(), self._resident_key(model_path, template)
        deadline = time.monotonic() + self.startup_timeout
        # Another process may be starting this very engine: wait for it rather than
        # loading the model twice (the lock is held for the whole start).
        while (fd := resident.try_locked(folder, key)) is None:
            if time.monotonic() > deadline:
                raise LocalEngineError(
                    f"another process has been starting the {self.model} engine for "
                    f"{self.startup_timeout:.0f} s (lock {folder / key}.lock)"
                )
            await anyio.sleep(0.05)
        try:
            record = resident.read_record(folder, key)
            threads = 0  # the server's own choice
            if record is not None and await self._usable(record):
                threads = await self._starved(folder, key, record)
                if not threads:
                    resident.add_holder(folder, key)
                    self._adopt(key, record, model_path)
                    return
                kill_process_group(record["pid"])
            if record is not None:  # its server is gone or is not what the record says
                resident.remove_record(folder, key)
            resident.add_holder(folder, key)  # before the start: its watchdog must see it
            self._resident = None
            self._token = secrets.token_urlsafe(24)  # not one an earlier server had
            self._log_path = folder / f"{key}.log"
            ready = folder / f"{key}.address"
            ready.unlink(missing_ok=True)
            argv = self._argv(model_path, template, ready)
            if threads:  # measured idle just now: not left to a second look
                argv[argv.index("--threads") + 1] = argv[argv.index("--batch-threads") + 1] = str(
                    threads
                )
            argv += ["--keep-alive", str(self.keep_alive), "--engines-dir", str(folder)]
            argv += ["--key", key]
            try:
                await self._spawn(argv, detached=True)
            except BaseException:
                resident.remove_holder(folder, key)
                raise
            assert self._process is not None
            self._resident = (key, self._process.pid)
            record = resident.Record(
                pid=self._process.pid, address=self.address, token=self._token,
                model=self.model, model_path=str(model_path), keep_alive=self.keep_alive,
                threads=list(self.threads_used or ()), kv_cache_dir=str(self.kv_cache_dir),
                log=str(self._log_path), started=time.time(),
            )  # fmt: skip
            resident.write_record(folder, key, record)
            self._ready(model_path, started)
            logger.info(
                "local engine %s stays loaded %g s after its last user (pid %d)",
                self.model,
                self.keep_alive,
                self._process.pid,
            )
        finally:
            os.close(fd)

    async def _usable(self, record: resident.Record) -> bool:
        """The recorded server is alive and takes the recorded token."""
        if not pid_alive(record["pid"]):
            return False
        try:
            async with httpx.AsyncClient(timeout=5.0) as client:
                answer = await client.get(
                    f"{record['address']}/slots",
                    headers={"Authorization": f"Bearer {record['token']}"},
                )
        except httpx.HTTPError:
            return False
        return answer.status_code == 200

    async def _starved(self, folder: Path, key: str, record: resident.Record) -> int:
        """The thread count to restart the resident server with, or 0 to keep it: it is
        worth a restart when it started on a busy machine with fewer threads than it would
        get now, and nobody uses it (its thread count is fixed at start; 1 thread decodes
        about half as fast as 2 on an idle 2-core machine)."""
        if self.threads or self.batch_threads or resident.live_holders(folder, key):
            return 0
        cores = len(os.sched_getaffinity(0))
        if not record["threads"] or record["threads"][0] >= min(cores, 8):
            return 0  # unknown, or every core it may use already
        busy = await anyio.to_thread.run_sync(busy_cores, cores, 0.25, os.getpid())
        wanted = choose_threads(cores, busy)[0]
        if wanted <= record["threads"][0]:
            return 0
        logger.info(
            "the resident %s engine decodes with %d thread(s); the machine is idle now: "
            "restarting it with %d",
            self.model,
            record["threads"][0],
            wanted,
        )
        return wanted

    def _adopt(self, key: str, record: resident.Record, model_path: Path) -> None:
        self._token = record["token"]
        self._resident = (key, record["pid"])
        self._base_url = f"{record['address']}/v1"
        self._log_path = Path(record["log"])
        counts = record["threads"]
        self.threads_used = (counts[0], counts[1]) if len(counts) == 2 else None
        self.attached = True
        self.prefix_cache = PrefixCache(self.kv_cache_dir, model_path, slots=self.parallel)
        logger.info(
            "local engine ready: %s at %s, resident (pid %d, threads %s)",
            self.model,
            self.address,
            record["pid"],
            "/".join(map(str, counts)) or "?",
        )

    async def _wait_for_address(self, ready_file: Path) -> str:
        deadline = time.monotonic() + self.startup_timeout
        ready = anyio.Path(ready_file)
        while not await ready.exists():
            if self._process is None or not self._process.alive:
                raise LocalEngineError(
                    f"local engine for {self.model} exited while starting.\n{self._log_tail()}"
                )
            if time.monotonic() > deadline:
                raise LocalEngineError(
                    f"local engine for {self.model} did not start within {self.startup_timeout:.0f} s.\n{self._log_tail()}"
                )
            await anyio.sleep(0.05)
        lines = (await ready.read_text(encoding="utf-8")).strip().splitlines()
        if len(lines) > 1 and len(counts := lines[1].split()) == 2:
            self.threads_used = (int(counts[0]), int(counts[1]))
        return lines[0].strip().rstrip("/")

    async def _wait_for_health(self, address: str) -> None:
        deadline = time.monotonic() + self.startup_timeout
        async with httpx.AsyncClient(timeout=5.0) as client:
            while True:
                try:
                    response = await client.get(f"{address}/health")
                    if response.status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
                if self._process is None or not self._process.alive or time.monotonic() > deadline:
                    raise LocalEngineError(
                        f"local engine for {self.model} never became healthy.\n{self._log_tail()}"
                    )
                await anyio.sleep(0.1)

    def _log_tail(self, lines: int = 15) -> str:
        if self._log_path is None or not self._log_path.exists():
            return "(no server log)"
        text = self._log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        return "server log (last lines):\n" + "\n".join(text[-lines:])

    def _cleanup(self, *, keep_resident: bool = False) -> None:
        process, self._process = self._process, None
        found, self._resident = self._resident, None
        self._base_url = None
        self.prefix_cache = None
        self.attached = False
        if found is not None:
            key, pid = found
            resident.remove_holder(engines_dir(), key)
            if not keep_resident:
                kill_process_group(pid)
                resident.remove_record(engines_dir(), key, pid)
                if process is not None:
                    process.kill()  # reaps it
        elif process is not None:
            process.kill()  # kills the whole process group and reaps the child
        if self._workdir is not None:
            self._workdir.cleanup()
            self._workdir = None

    async def stop(self) -> None:
        """Stop the server (idempotent), a resident one too. The next request starts it again."""
        if self.pid is not None:
            logger.info("stopping local engine for %s (pid %d)", self.model, self.pid)
        self._cleanup()

    def stop_now(self) -> None:
        """Synchronous ``stop`` for atexit handlers and finalisers."""
        self._cleanup()

    def release(self) -> None:
        """This process is done with the engine: a resident server stays loaded for the
        next process (``keep_alive``), any other one stops. Called at interpreter exit."""
        self._cleanup(keep_resident=True)


def _remove_stale_workdirs() -> None:
    """Delete the log folders of engines whose parent process died without cleaning up."""
    for folder in Path(tempfile.gettempdir()).glob(f"{_WORKDIR_PREFIX}*-*"):
        owner = folder.name.removeprefix(_WORKDIR_PREFIX).split("-", 1)[0]
        if owner.isdigit() and not pid_alive(int(owner)):
            shutil.rmtree(folder, ignore_errors=True)


def running_engines() -> list[LocalEngine]:
    """The shared engines whose server is running."""
    return [engine for engine in _ENGINES.values() if engine.running]


def stop_all_engines() -> None:
    """Stop every shared engine of this process (resident ones too)."""
    for engine in list(_ENGINES.values()):
        engine.stop_now()


def _is_our_server(pid: int) -> bool:
    """``pid`` is alive and is an engine server (not a process that got a recycled pid)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return pid_alive(pid) and b"agentsdk_openai.local._server_main" in cmdline.read()
    except OSError:
        return False


def resident_engines() -> list[resident.Record]:
    """The resident engines running now (any process's), with their records; records of
    servers that are gone are removed."""
    folder = engines_dir()
    live: list[resident.Record] = []
    for key, record in resident.records(folder).items():
        if _is_our_server(record["pid"]):
            live.append(record)
        else:
            resident.remove_record(folder, key, record["pid"])
    return live


def stop_resident_engines(model: str | None = None) -> list[resident.Record]:
    """Stop the resident engines (of ``model`` only, when given); the records stopped."""
    folder = engines_dir()
    stopped: list[resident.Record] = []
    for key, record in resident.records(folder).items():
        if model is not None and model not in (record["model"], record["model_path"]):
            continue
        if _is_our_server(record["pid"]):
            kill_process_group(record["pid"])
            stopped.append(record)
        resident.remove_record(folder, key, record["pid"])
    return stopped


def _release_all_engines() -> None:
    for engine in list(_ENGINES.values()):
        engine.release()


atexit.register(_release_all_engines)
os.register_at_fork(after_in_child=_ENGINES.clear)
