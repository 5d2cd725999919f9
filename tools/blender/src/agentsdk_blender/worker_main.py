"""Entry point of the Blender worker process (started by ``BlenderWorker``).

Speaks frames on stdin (requests) and on a private copy of fd 1 (responses); fd 1
itself is pointed at stderr first, so whatever Blender prints cannot corrupt a frame.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, BinaryIO

Validator = Callable[[dict[str, Any]], tuple[str, dict[str, Any]]]

SAVED_SCENE_ENV = "AGENTSDK_BLENDER_SAVED_SCENE"
"""Where the worker keeps the scene between commands (set by ``BlenderWorker``)."""


def _open_saved_scene(bpy: Any, path: str | None) -> tuple[bool, str | None]:
    """Reload the scene a previous worker saved; else start from an empty scene."""
    if path and os.path.isfile(path):
        try:
            bpy.ops.wm.open_mainfile(filepath=path, load_ui=False)
            return True, None
        except Exception as exc:  # a broken save: start empty and say so in the greeting
            os.unlink(path)
            bpy.ops.wm.read_factory_settings(use_empty=True)
            return False, f"{type(exc).__name__}: {exc}"
    bpy.ops.wm.read_factory_settings(use_empty=True)
    return False, None


def _protocol_streams() -> tuple[BinaryIO, BinaryIO]:
    responses = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    return sys.stdin.buffer, responses


def _structural(frame: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    args = frame.get("args") or {}
    if not isinstance(frame.get("command"), str) or not isinstance(args, dict):
        raise ValueError("a request needs a string 'command' and an object 'args'")
    return frame["command"], args


def request_validator() -> Validator:
    """Pydantic validation of requests and their arguments when pydantic is importable
    (always with the PyPI bpy); plain structural checks inside a stock Blender."""
    try:
        from .protocol import COMMAND_ARGS, Request
    except ImportError:
        return _structural

    def validate(frame: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        request = Request.model_validate(frame)
        model = COMMAND_ARGS.get(request.command)
        args = model.model_validate(request.args).model_dump() if model else request.args
        return request.command, args

    return validate


def main() -> None:
    """Import bpy once, greet the host, then serve requests until stdin closes."""
    requests, responses = _protocol_streams()
    import bpy

    from .engine import error_response, handle, hello_frame, keep_saved_scene
    from .framing import SYNC_MARKER, FrameError, read_frame, write_frame

    validate = request_validator()
    restored, restore_error = _open_saved_scene(bpy, os.environ.get(SAVED_SCENE_ENV))
    keep_saved_scene(os.environ.get(SAVED_SCENE_ENV))
    responses.write(SYNC_MARKER)
    write_frame(responses, hello_frame(scene_restored=restored, restore_error=restore_error))
    while True:
        try:
            frame = read_frame(requests.read)
        except FrameError as exc:
            write_frame(responses, {"id": None, **error_response("FrameError", str(exc))})
            return  # the stream is out of step; the host restarts us
        if frame is None:
            return
        try:
            command, args = validate(frame)
        except Exception as exc:
            reply = error_response("InvalidRequest", str(exc))
            write_frame(responses, {"id": frame.get("id"), **reply})
            continue
        write_frame(responses, {"id": frame.get("id"), **handle(command, args)})


if __name__ == "__main__":
    main()
