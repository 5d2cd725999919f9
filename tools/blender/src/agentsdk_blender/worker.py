"""BlenderWorker: a warm bpy child process driven over length-prefixed JSON frames."""

from __future__ import annotations

import collections
import os
import shutil
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, Any, Protocol, TypeVar

import anyio
from agentsdk.sandbox import ManagedProcess, start_process
from pydantic import BaseModel, ValidationError

from .framing import PROTOCOL_VERSION, SYNC_MARKER, FrameError, encode_frame, read_frame
from .protocol import CommandFailure, Hello, NoArgs, Response

ResultT = TypeVar("ResultT", bound=BaseModel)

PACKAGE_PARENT = Path(__file__).resolve().parent.parent


class BlenderError(Exception):
    """Base class of the errors a Blender connection raises."""


class CommandFailed(BlenderError):
    """Blender ran the command and it failed; ``failure.rolled_back`` says if the scene was restored."""

    def __init__(self, command: str, failure: CommandFailure) -> None:
        state = (
            "the scene was restored to its state before the command"
            if failure.rolled_back
            else "the scene was not modified by a rollback"
        )
        super().__init__(f"{command} failed: {failure.type}: {failure.message} ({state})")
        self.command = command
        self.failure = failure


class SceneLostError(BlenderError):
    """The Blender process crashed or hung; it was restarted and the scene is empty."""


class ProtocolMismatchError(BlenderError):
    """The other end speaks a different protocol version."""


class BlenderConnection(Protocol):
    """What the toolkit needs from a Blender: a worker process or a live-Blender bridge."""

    async def start(self) -> None: ...
    async def close(self) -> None: ...
    async def call(
        self,
        command: str,
        args: BaseModel | None,
        result_type: type[ResultT],
        *,
        timeout: float | None = None,
    ) -> ResultT: ...


def check_hello(frame: dict[str, Any] | None, where: str) -> Hello:
    """Validate the server's first frame and its protocol version."""
    if frame is None:
        raise BlenderError(f"{where} closed the connection before greeting")
    try:
        hello = Hello.model_validate(frame)
    except ValidationError as exc:
        raise ProtocolMismatchError(f"{where} sent an unexpected greeting: {exc}") from None
    if hello.protocol_version != PROTOCOL_VERSION:
        raise ProtocolMismatchError(
            f"{where} speaks protocol {hello.protocol_version}, this client {PROTOCOL_VERSION}"
        )
    return hello


def parse_response(
    command: str, request_id: int, frame: dict[str, Any] | None, result_type: type[ResultT]
) -> ResultT:
    """Turn a response frame into the typed result, or raise CommandFailed."""
    if frame is None:
        raise FrameError("connection closed before the response")
    response = Response.model_validate(frame)
    if response.id not in (request_id, None):
        raise FrameError(f"response id {response.id} does not match request {request_id}")
    if not response.ok:
        raise CommandFailed(command, response.error or CommandFailure(type="?", message="?"))
    return result_type.model_validate(response.result or {})


def _skip_to_marker(stream: IO[bytes]) -> None:
    # An external `blender` binary prints its banner on stdout before our code runs.
    window = b""
    while not window.endswith(SYNC_MARKER):
        byte = stream.read(1)
        if not byte:
            raise FrameError("worker exited before its greeting")
        window = (window + byte)[-len(SYNC_MARKER) :]


class BlenderWorker:
    """A Blender child process kept warm across commands.

    Uses the ``bpy`` module of the current interpreter by default, or an external
    ``blender`` executable (run as ``blender -b --python-expr``) when
    ``blender_binary`` is given. A command that exceeds its timeout, or a worker
    that dies, kills the process group, starts a fresh worker and raises
    ``SceneLostError``. The worker dies with the agent's process (PR_SET_PDEATHSIG).
    """

    def __init__(
        self,
        *,
        blender_binary: str | None = None,
        timeout: float = 120.0,
        startup_timeout: float = 90.0,
        cache_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self.blender_binary = blender_binary
        self.timeout = timeout
        self.startup_timeout = startup_timeout
        self.cache_dir = Path(cache_dir or Path(tempfile.gettempdir()) / "agentsdk-blender-cache")
        self.restarts = 0
        self.hello: Hello | None = None
        self._process: ManagedProcess | None = None
        self._scratch: str | None = None
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=40)
        self._lock = anyio.Lock()
        self._next_id = 0

    @property
    def pid(self) -> int | None:
        """Process id of the running worker (also its process group id)."""
        return self._process.pid if self._process is not None and self._process.alive else None

    def _argv(self) -> list[str]:
        entry = "from agentsdk_blender.worker_main import main; main()"
        if self.blender_binary is None:
            return [sys.executable, "-c", entry]
        path_setup = f"import sys; sys.path.insert(0, {str(PACKAGE_PARENT)!r}); "
        return [self.blender_binary, "-b", "--factory-startup", "--python-expr", path_setup + entry]

    async def start(self) -> None:
        """Start the worker (if not running) and wait for its greeting."""
        async with self._lock:
            await self._ensure_started()

    async def _ensure_started(self) -> None:
        if self._process is not None and self._process.alive:
            return
        self._kill()
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        # Scene snapshots and renders go to a private folder removed with the process.
        self._scratch = tempfile.mkdtemp(prefix="agentsdk-blender-")
        env = {"XDG_CACHE_HOME": str(self.cache_dir), "TMPDIR": self._scratch}
        # Started from the event-loop thread: PR_SET_PDEATHSIG follows the forking thread.
        try:
            process = start_process(self._argv(), env=env)
        except OSError as exc:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None
            raise BlenderError(f"cannot start Blender ({self._argv()[0]}): {exc}") from None
        self._process = process
        self._stderr_tail.clear()
        threading.Thread(target=self._drain_stderr, args=(process,), daemon=True).start()
        try:
            with anyio.fail_after(self.startup_timeout):
                frame = await anyio.to_thread.run_sync(
                    self._read_greeting, process, abandon_on_cancel=True
                )
            self.hello = check_hello(frame, "the Blender worker")
        except BaseException as exc:
            self._kill()
            if isinstance(exc, TimeoutError | FrameError):
                raise BlenderError(
                    f"the Blender worker did not start within {self.startup_timeout} s: "
                    f"{exc}\n{self.stderr_tail()}"
                ) from None
            raise

    @staticmethod
    def _read_greeting(process: ManagedProcess) -> dict[str, Any] | None:
        stdout = process.popen.stdout
        assert stdout is not None
        _skip_to_marker(stdout)
        return read_frame(stdout.read)

    def _drain_stderr(self, process: ManagedProcess) -> None:
        stream = process.popen.stderr
        if stream is None:
            return
        for raw in iter(stream.readline, b""):
            self._stderr_tail.append(raw.decode("utf-8", "replace").rstrip())

    def stderr_tail(self, lines: int = 10) -> str:
        """The last lines the worker wrote to stderr (Blender's log, minus snapshot chatter)."""
        useful = [line for line in self._stderr_tail if "agentsdk-snapshot-" not in line]
        return "\n".join(useful[-lines:])

    @staticmethod
    def _roundtrip(process: ManagedProcess, frame: bytes) -> dict[str, Any]:
        stdin, stdout = process.popen.stdin, process.popen.stdout
        assert stdin is not None and stdout is not None
        stdin.write(frame)
        stdin.flush()
        reply = read_frame(stdout.read)
        if reply is None:
            raise FrameError("the worker closed its output")
        return reply

    async def call(
        self,
        command: str,
        args: BaseModel | None,
        result_type: type[ResultT],
        *,
        timeout: float | None = None,
    ) -> ResultT:
        """Run one command and return its typed result.

        Raises CommandFailed (scene restored), SceneLostError (worker restarted) or
        BlenderError (the worker cannot start).
        """
        limit = self.timeout if timeout is None else timeout
        async with self._lock:
            await self._ensure_started()
            process = self._process
            assert process is not None
            self._next_id += 1
            request_id = self._next_id
            payload = (args or NoArgs()).model_dump(mode="json")
            frame = encode_frame({"id": request_id, "command": command, "args": payload})
            finished = False
            try:
                with anyio.fail_after(limit):
                    reply = await anyio.to_thread.run_sync(
                        self._roundtrip, process, frame, abandon_on_cancel=True
                    )
                finished = True
            except TimeoutError:
                await self._restart()
                raise SceneLostError(
                    f"{command} did not finish within {limit} s; the Blender worker was killed "
                    "and restarted, and the scene was lost (it is now empty)"
                ) from None
            except (FrameError, OSError) as exc:
                code = await process.wait(timeout=2)
                tail = self.stderr_tail(5)
                await self._restart()
                raise SceneLostError(
                    f"the Blender worker died (exit code {code}) while running {command}: {exc}; "
                    "it was restarted and the scene was lost (it is now empty)"
                    + (f"\nlast worker output:\n{tail}" if tail else "")
                ) from None
            finally:
                if not finished and self._process is process:
                    self._kill()  # cancelled mid-command: the stream is out of step
            return parse_response(command, request_id, reply, result_type)

    async def _restart(self) -> None:
        self._kill()
        self.restarts += 1
        await self._ensure_started()

    def _kill(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process = None
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    async def close(self) -> None:
        """Kill the worker's process group. Idempotent."""
        self._kill()

    async def __aenter__(self) -> BlenderWorker:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
