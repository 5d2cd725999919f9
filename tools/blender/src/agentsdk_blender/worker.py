"""BlenderWorker: a warm bpy child process driven over length-prefixed JSON frames."""

from __future__ import annotations

import collections
import os
import shutil
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, Any, NoReturn, Protocol, TypeVar

import anyio
from agentsdk.sandbox import ManagedProcess, start_process
from pydantic import BaseModel, ValidationError

from .framing import PROTOCOL_VERSION, SYNC_MARKER, FrameError, encode_frame, read_frame
from .protocol import CommandFailure, Hello, NoArgs, Response
from .worker_main import SAVED_SCENE_ENV

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


class WorkerRestartedError(BlenderError):
    """The Blender process crashed or hung while running a command and was restarted.

    ``scene_restored`` is True when the new worker reloaded the scene as it was after the
    last command that succeeded (the failed command had no effect); False for
    ``SceneLostError``.
    """

    scene_restored = True


class SceneLostError(WorkerRestartedError):
    """The Blender process stopped, was restarted, and its scene could not be restored: it
    is now empty."""

    scene_restored = False


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
    def take_notice(self) -> str | None:
        """A message for the model about something that happened outside the last call
        (e.g. the worker restarted and the scene was restored); None when nothing did."""
        ...


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
            f"{where} speaks protocol {hello.protocol_version}, this client {PROTOCOL_VERSION}: "
            "install the add-on built by this agentsdk-blender (python -m "
            "agentsdk_blender.addon_zip) into that Blender"
        )
    return hello


def parse_response(
    command: str, request_id: int, frame: dict[str, Any] | None, result_type: type[ResultT]
) -> tuple[ResultT, Response]:
    """Turn a response frame into the typed result (and the response), or raise CommandFailed."""
    if frame is None:
        raise FrameError("connection closed before the response")
    response = Response.model_validate(frame)
    if response.id not in (request_id, None):
        raise FrameError(f"response id {response.id} does not match request {request_id}")
    if not response.ok:
        raise CommandFailed(command, response.error or CommandFailure(type="?", message="?"))
    return result_type.model_validate(response.result or {}), response


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
    ``blender_binary`` is given. The worker saves the scene after every command that
    changes it, to a folder that outlives the process. A command that exceeds its timeout,
    or a worker that dies, kills the process group and starts a fresh worker that reloads
    that save: the command raises ``WorkerRestartedError`` (scene restored to its state
    before the command), or ``SceneLostError`` when the save could not be reloaded. A worker
    that died between commands is restarted the same way on the next call, which then says
    so through ``take_notice()`` (or raises ``SceneLostError``). The worker dies with the
    agent's process (PR_SET_PDEATHSIG).
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
        # The saved scene lives outside the per-process scratch folder: it must survive a restart.
        self._state_dir: str | None = None
        self._notices: list[str] = []
        self._unsaved = False

    @property
    def saved_scene(self) -> Path | None:
        """The .blend the worker keeps the scene in between commands (None before start)."""
        return Path(self._state_dir) / "scene.blend" if self._state_dir else None

    def take_notice(self) -> str | None:
        """What happened since the last call that the model should know (a restart and
        whether the scene was restored, a scene that could not be saved), once."""
        notices, self._notices = self._notices, []
        return "; ".join(notices) or None

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
        if self._process is not None:  # died between commands: restart and say what happened
            code = await self._process.wait(timeout=2)
            tail = self.stderr_tail(5)
            had_scene = self._has_saved_scene()
            self._kill()
            self.restarts += 1
            self._unsaved = False
            await self._launch()
            where = f"the Blender worker had stopped (exit code {code}) and was restarted"
            if had_scene:
                self._after_restart(where, tail)
                self._notices.append(f"{where}; the scene was restored from the last save")
            return
        await self._launch()

    def _has_saved_scene(self) -> bool:
        # True also when the last save failed: then the restart must report the loss.
        scene = self.saved_scene
        return self._unsaved or (scene is not None and scene.is_file())

    def _after_restart(self, what: str, tail: str) -> None:
        """Raise SceneLostError unless the restarted worker reloaded the saved scene."""
        hello = self.hello
        if hello is not None and hello.scene_restored:
            return
        why = hello.restore_error if hello is not None and hello.restore_error else "no save"
        why = " ".join(why.split())
        raise SceneLostError(
            f"{what}, and the scene could not be restored ({why}): the scene is now empty"
            + (f"\nlast worker output:\n{tail}" if tail else "")
        )

    async def _launch(self) -> None:
        self._kill()
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        # Scene snapshots and renders go to a private folder removed with the process.
        self._scratch = tempfile.mkdtemp(prefix="agentsdk-blender-")
        if self._state_dir is None:
            self._state_dir = tempfile.mkdtemp(prefix="agentsdk-blender-scene-")
        env = {
            "XDG_CACHE_HOME": str(self.cache_dir),
            "TMPDIR": self._scratch,
            SAVED_SCENE_ENV: str(self.saved_scene),
        }
        # Started from the event-loop thread: PR_SET_PDEATHSIG follows the forking thread.
        try:
            process = start_process(self._argv(), env=env)
        except OSError as exc:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None
            if not self._has_saved_scene() and self._state_dir is not None:
                shutil.rmtree(self._state_dir, ignore_errors=True)  # nothing to keep
                self._state_dir = None
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
        chatter = ("agentsdk-snapshot-", ".partial.blend", "Read blend:")  # our own saves
        useful = [line for line in self._stderr_tail if not any(c in line for c in chatter)]
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

        Raises CommandFailed (the command failed; scene restored), WorkerRestartedError
        (the worker crashed or hung and was restarted with the scene as before the
        command), SceneLostError (restarted, scene lost) or BlenderError (cannot start).
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
                what = (
                    f"{command} did not finish within {limit} s; the Blender worker was killed "
                    "and restarted"
                )
                await self._restart(what, "")
            except (FrameError, OSError) as exc:
                code = await process.wait(timeout=2)
                what = (
                    f"the Blender worker died (exit code {code}) while running {command}: {exc}; "
                    "it was restarted"
                )
                await self._restart(what, self.stderr_tail(5))
            finally:
                if not finished and self._process is process:
                    self._kill()  # cancelled mid-command: the stream is out of step
            result, response = parse_response(command, request_id, reply, result_type)
            if response.notice:
                self._notices.append(response.notice)
            self._unsaved = response.scene_unsaved
            return result

    async def _restart(self, what: str, tail: str) -> NoReturn:
        """Restart after a crash or hang mid-command and raise what the caller must know."""
        had_scene = self._has_saved_scene()
        self._kill()
        self.restarts += 1
        self._unsaved = False
        await self._launch()
        if had_scene:
            self._after_restart(what, tail)
            raise WorkerRestartedError(
                f"{what}; the scene was restored from the last save (its state before "
                f"this command, which had no effect)"
            )
        raise WorkerRestartedError(f"{what}; the scene was empty before this command and still is")

    def _kill(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process = None
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    async def close(self) -> None:
        """Kill the worker's process group and remove its saved scene. Idempotent."""
        self._kill()
        if self._state_dir is not None:
            shutil.rmtree(self._state_dir, ignore_errors=True)
            self._state_dir = None
        self._notices.clear()

    async def __aenter__(self) -> BlenderWorker:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
