"""``LocalEngine``: a llama.cpp server that agentsdk starts itself on loopback."""

from __future__ import annotations

import atexit
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
from agentsdk.sandbox import ManagedProcess, pid_alive, start_process

from agentsdk import ModelError

from .catalog import BUILTIN_MODELS, BuiltinModel, LocalModelError, cache_dir, resolve_model_path
from .prefix_cache import PrefixCache

__all__ = ["LocalEngine", "LocalEngineError", "running_engines", "stop_all_engines"]

logger = logging.getLogger("agentsdk_openai.local")

_TEMPLATES = Path(__file__).parent / "templates"
_WORKDIR_PREFIX = "agentsdk-engine-"
_ENGINES: dict[str, LocalEngine] = {}


class LocalEngineError(ModelError):
    """The local engine could not start; the message includes the end of its log."""


class LocalEngine:
    """A llama.cpp server (PyPI ``xllamacpp``) in a child process on 127.0.0.1.

    The child runs in its own process group, dies with its parent (PR_SET_PDEATHSIG and
    a closed stdin) and requires a random bearer token. Use ``LocalEngine.shared(model)``
    to get the engine every agent in this process shares for that model; it starts
    lazily on first use and stops at interpreter exit or on ``await engine.stop()``::

        async with LocalEngine("smollm2-135m") as engine:
            print(engine.base_url)
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
        if self._process is not None:  # it died (or its starting thread ended): start afresh
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
        try:
            model_path, builtin = await anyio.to_thread.run_sync(resolve_model_path, self.model)
        except LocalModelError:
            raise
        self.model_path = model_path
        template = self._chat_template
        if template is None and builtin is not None and builtin.chat_template:
            template = _TEMPLATES / builtin.chat_template
        _remove_stale_workdirs()
        self._workdir = tempfile.TemporaryDirectory(prefix=f"{_WORKDIR_PREFIX}{os.getpid()}-")
        work = Path(self._workdir.name)
        ready = work / "address"
        self._log_path = work / "server.log"
        argv = [
            sys.executable, "-m", "agentsdk_openai.local._server_main",
            "--model", str(model_path), "--alias", self.model, "--ready-file", str(ready),
            "--ctx", str(self.context_window), "--threads", str(self.threads or 0),
            "--batch-threads", str(self.batch_threads or 0),
            "--parallel", str(self.parallel), "--slot-save-path", str(self.kv_cache_dir),
        ]  # fmt: skip
        self.kv_cache_dir.mkdir(parents=True, exist_ok=True)
        if template is not None:
            argv += ["--chat-template", str(template)]
        size_mb = model_path.stat().st_size / 1e6
        logger.info("starting local engine: %s (%.0f MB) on 127.0.0.1", self.model, size_mb)
        with self._log_path.open("wb") as log:
            # Started on the event-loop thread: PR_SET_PDEATHSIG is tied to the spawning thread.
            self._process = start_process(
                argv, stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT,
                env={"AGENTSDK_ENGINE_TOKEN": self._token},
            )  # fmt: skip
        logger.info("local engine pid %d is loading the model", self._process.pid)
        address = await self._wait_for_address(ready)
        await self._wait_for_health(address)
        self._base_url = f"{address}/v1"
        self.launches += 1
        self.prefix_cache = PrefixCache(self.kv_cache_dir, model_path, slots=self.parallel)
        logger.info(
            "local engine ready: %s at %s in %.1f s (threads %s)",
            self.model,
            address,
            time.perf_counter() - started,
            "/".join(map(str, self.threads_used or ())) or "?",
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

    def _cleanup(self) -> None:
        process, self._process = self._process, None
        self._base_url = None
        self.prefix_cache = None
        if process is not None:
            process.kill()  # kills the whole process group and reaps the child
        if self._workdir is not None:
            self._workdir.cleanup()
            self._workdir = None

    async def stop(self) -> None:
        """Stop the server (idempotent). The next request starts it again."""
        if self._process is not None:
            logger.info("stopping local engine for %s (pid %d)", self.model, self._process.pid)
        self._cleanup()

    def stop_now(self) -> None:
        """Synchronous ``stop`` for atexit handlers and finalisers."""
        self._cleanup()


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
    """Stop every shared engine of this process."""
    for engine in list(_ENGINES.values()):
        engine.stop_now()


atexit.register(stop_all_engines)
os.register_at_fork(after_in_child=_ENGINES.clear)
