"""Exceptions raised by engine commands inside Blender (stdlib only)."""

from __future__ import annotations

from typing import Any


class CommandError(Exception):
    """A command failed for a reason the caller can fix (unknown object, bad value...)."""


class ScriptFailed(Exception):
    """``execute_python`` code raised or hit a limit; carries its captured output."""

    def __init__(self, message: str, details: dict[str, Any]) -> None:
        super().__init__(message)
        self.details = details
