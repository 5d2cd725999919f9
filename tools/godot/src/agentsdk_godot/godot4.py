"""Godot 4: written from the documented command line, NOT exercised here (no Godot 4 binary).

What is covered by tests without the binary: `format=3` scene text (round trip) and the
command lines below. The GDScript 2 helper scripts in `gdscript/godot4/` have never been run.
"""

from __future__ import annotations

from pathlib import Path

from agentsdk_godot.variant import GODOT4_STYLE
from agentsdk_godot.versions import GodotDialect

__all__ = ["Godot4Dialect"]

_FROM_GODOT3 = {
    "Spatial": "Node3D",
    "MeshInstance": "MeshInstance3D",
    "Camera": "Camera3D",
    "DirectionalLight": "DirectionalLight3D",
    "OmniLight": "OmniLight3D",
    "SpotLight": "SpotLight3D",
    "SpatialMaterial": "StandardMaterial3D",
    "KinematicBody": "CharacterBody3D",
    "KinematicBody2D": "CharacterBody2D",
    "StaticBody": "StaticBody3D",
    "RigidBody": "RigidBody3D",
    "CollisionShape": "CollisionShape3D",
    "Area": "Area3D",
    "CubeMesh": "BoxMesh",
    "Sprite": "Sprite2D",
    "Transform": "Transform3D",
    "Quat": "Quaternion",
    "PoolIntArray": "PackedInt32Array",
    "PoolRealArray": "PackedFloat32Array",
    "PoolStringArray": "PackedStringArray",
    "PoolVector3Array": "PackedVector3Array",
    "PoolVector2Array": "PackedVector2Array",
    "PoolColorArray": "PackedColorArray",
    "PoolByteArray": "PackedByteArray",
}


class Godot4Dialect(GodotDialect):
    """Godot 4: `format=3` resources, GDScript 2, `--headless`, `--script`, `--import`."""

    major = 4
    resource_format = 3
    config_version = 5
    style = GODOT4_STYLE
    capsule_axis = 1
    class_names = _FROM_GODOT3

    def capsule_fields(self, radius: float, length: float) -> dict[str, float]:
        return {"radius": radius, "height": length}  # height: end to end

    def headless_argv(self, binary: str, project: Path, script: Path, *, debug: bool) -> list[str]:
        argv = [binary, "--headless", "--path", str(project)]
        return [*argv, *(["--debug"] if debug else []), "--script", str(script)]

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
        argv = [binary, "--path", str(project), "--resolution", f"{width}x{height}"]
        argv += ["--rendering-driver", "opengl3", "--audio-driver", "Dummy"]
        if renderer:  # "gl_compatibility", "forward_plus" or "mobile"
            argv += ["--rendering-method", renderer]
        argv += ["--debug"] if debug else []
        return [*argv, "--script", str(script)] if script else argv

    def game_argv(self, binary: str, project: Path, *, debug: bool) -> list[str]:
        return [binary, "--headless", "--path", str(project), *(["--debug"] if debug else [])]

    def check_argv(self, binary: str, project: Path, script_res_path: str) -> list[str]:
        return [
            binary,
            "--headless",
            "--path",
            str(project),
            "--check-only",
            "--script",
            script_res_path,
        ]

    def import_argv(self, binary: str, project: Path) -> tuple[list[str], bool]:
        # `--import` (Godot 4.2+) imports and quits by itself
        return [binary, "--headless", "--path", str(project), "--import"], True

    def debugger_answers(self) -> bytes:
        return b"bt\nc\n" * 500 + b"q\n"

    def script_source(self, extends: str, body: str) -> str:
        return f"extends {self.class_name(extends)}\n\n{body.rstrip()}\n"
