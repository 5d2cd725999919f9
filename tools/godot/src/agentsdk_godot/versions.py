"""Which Godot is installed, and the one place that knows how each generation differs.

Everything that differs between Godot 3 and Godot 4 (command-line flags, text resource
`format=`, class names, GDScript syntax of the helper scripts) lives in `godot3.py` or
`godot4.py` as a `GodotDialect`; the rest of the package asks the dialect.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from importlib import resources
from pathlib import Path

from pydantic import BaseModel

from agentsdk_godot.variant import TextStyle

__all__ = ["GodotDialect", "GodotVersion", "dialect_for", "parse_version"]


class GodotVersion(BaseModel):
    """A parsed `godot --version` line such as `3.2.3.stable.custom_build`."""

    major: int
    minor: int
    patch: int = 0
    text: str


def parse_version(text: str) -> GodotVersion:
    """Parse the first `X.Y[.Z]` of `--version` output."""
    for line in text.splitlines():
        match = re.match(r"^\s*(\d+)\.(\d+)(?:\.(\d+))?", line)
        if match:
            return GodotVersion(
                major=int(match.group(1)),
                minor=int(match.group(2)),
                patch=int(match.group(3) or 0),
                text=line.strip(),
            )
    raise ValueError(f"not a Godot version string: {text.strip()[:200]!r}")


class GodotDialect(ABC):
    """What one engine generation needs: flags, file format, names, helper scripts."""

    major: int
    resource_format: int
    config_version: int
    style: TextStyle
    # generation-neutral names used by the toolkit -> this generation's class names
    class_names: dict[str, str]
    capsule_axis: int  # the axis a CapsuleMesh lies along: 2 (z) in Godot 3, 1 (y) in Godot 4

    def class_name(self, name: str) -> str:
        """Translate a class name of the other generation (e.g. `Node3D` <-> `Spatial`)."""
        return self.class_names.get(name, name)

    def helper_script(self, name: str) -> str:
        """Source of a bundled helper script (`run.gd`, `bridge.gd`) for this generation."""
        folder = resources.files("agentsdk_godot") / "gdscript" / f"godot{self.major}"
        return (folder / name).read_text(encoding="utf-8")

    @abstractmethod
    def capsule_fields(self, radius: float, length: float) -> dict[str, float]:
        """A CapsuleMesh's fields for this radius and end-to-end length."""

    @abstractmethod
    def headless_argv(self, binary: str, project: Path, script: Path, *, debug: bool) -> list[str]:
        """Run a SceneTree script without a window."""

    @abstractmethod
    def window_argv(
        self,
        binary: str,
        project: Path,
        script: Path | None,
        width: int,
        height: int,
        *,
        debug: bool,
        renderer: str | None = None,
    ) -> list[str]:
        """Run with a window (screenshots) on a virtual display; `renderer` overrides the project's."""

    @abstractmethod
    def game_argv(self, binary: str, project: Path, *, debug: bool) -> list[str]:
        """Run the project's main scene headless (no rendering)."""

    @abstractmethod
    def check_argv(self, binary: str, project: Path, script_res_path: str) -> list[str]:
        """Parse one GDScript file and exit (non-zero on a parse error)."""

    @abstractmethod
    def import_argv(self, binary: str, project: Path) -> tuple[list[str], bool]:
        """Import new assets. Returns (argv, exits_by_itself)."""

    @abstractmethod
    def debugger_answers(self) -> bytes:
        """stdin for the local debugger: print a backtrace at each script error, then go on."""

    @abstractmethod
    def script_source(self, extends: str, body: str) -> str:
        """A minimal script file for this generation."""


def dialect_for(major: int) -> GodotDialect:
    """The dialect of an engine generation (3 or 4)."""
    if major == 3:
        from agentsdk_godot.godot3 import Godot3Dialect

        return Godot3Dialect()
    if major == 4:
        from agentsdk_godot.godot4 import Godot4Dialect

        return Godot4Dialect()
    raise ValueError(f"Godot {major} is not supported (3 and 4 are)")
