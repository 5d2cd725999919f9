"""Restore points for engine commands (stdlib + bpy; ships inside the add-on too).

Two kinds:

- ``SceneSnapshot``: a one-command restore point. In background mode Blender's undo stack
  is unavailable (``ed.undo`` fails its poll), so the scene is saved to a temporary .blend and
  reopened on failure; with a UI the undo stack is used, so the user's file path is left alone.
- ``SavedScene``: the worker's persistent save. After every mutating command that succeeds the
  scene is written to one .blend that outlives the worker process, so a worker that crashes,
  hangs or is killed can be restarted with the scene as it was after the last command. The same
  file is the restore point of the next command (the state after command N is the state before
  command N+1), so a command costs one save, as before.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from typing import Any

import bpy


def _save_copy(path: str) -> None:
    bpy.ops.wm.save_as_mainfile(filepath=path, copy=True, compress=False)


class SceneSnapshot:
    """Restore point for one mutating command (file snapshot, or undo with a UI)."""

    def __init__(self) -> None:
        self._path: str | None = None
        self._undo = False

    @staticmethod
    def _window_context() -> Any:
        manager = bpy.context.window_manager
        if manager is not None and manager.windows:
            return bpy.context.temp_override(window=manager.windows[0])
        return contextlib.nullcontext()

    def take(self) -> None:
        """Remember the current scene."""
        if not bpy.app.background:
            try:
                with self._window_context():
                    bpy.ops.ed.undo_push(message="agentsdk: before command")
                self._undo = True
                return
            except RuntimeError:
                pass
        handle, path = tempfile.mkstemp(prefix="agentsdk-snapshot-", suffix=".blend")
        os.close(handle)
        os.unlink(path)  # Blender would keep the empty file it overwrites as a .blend1 backup
        _save_copy(path)
        self._path = path

    def restore(self) -> None:
        """Put the remembered scene back."""
        if self._undo:
            with self._window_context():
                bpy.ops.ed.undo()
        elif self._path is not None:
            bpy.ops.wm.open_mainfile(filepath=self._path, load_ui=False)

    def discard(self) -> None:
        """Forget the restore point (removes its file)."""
        if self._path is not None:
            for leftover in (self._path, self._path + "1"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(leftover)
            self._path = None


class SavedScene:
    """The scene as it was after the last successful mutating command, kept in ``path``.

    Used as the restore point of the next command, and by a restarted worker to reload the
    scene. A failed save removes the file: a later restore then reports the scene as lost
    instead of silently going back to an older state.
    """

    def __init__(self, path: str) -> None:
        self.path = path

    @property
    def exists(self) -> bool:
        """Whether a save is there to restore."""
        return os.path.isfile(self.path)

    def take(self) -> None:
        """Save first when nothing is saved yet (the fresh worker's empty scene)."""
        if not self.exists:
            self.save()

    def save(self) -> None:
        """Write the current scene; written to a side file and renamed, so a crash
        mid-save leaves the previous save intact."""
        partial = self.path + ".partial.blend"
        try:
            _save_copy(partial)
            os.replace(partial, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(self.path)
            raise

    def restore(self) -> None:
        """Reopen the last save."""
        bpy.ops.wm.open_mainfile(filepath=self.path, load_ui=False)

    def discard(self) -> None:
        """Nothing to clean up per command: the save is kept for the next one."""
