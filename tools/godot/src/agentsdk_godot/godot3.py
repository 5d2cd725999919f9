"""Godot 3 (3.2+): tested for real with the Debian `godot3-server` / `godot3-runner` 3.2.3."""

from __future__ import annotations

from pathlib import Path

from agentsdk_godot.variant import GODOT3_STYLE
from agentsdk_godot.versions import GodotDialect

__all__ = ["Godot3Dialect"]

# Godot 4 names the toolkit accepts -> Godot 3 names
_FROM_GODOT4 = {
    "Node3D": "Spatial",
    "MeshInstance3D": "MeshInstance",
    "Camera3D": "Camera",
    "DirectionalLight3D": "DirectionalLight",
    "OmniLight3D": "OmniLight",
    "SpotLight3D": "SpotLight",
    "StandardMaterial3D": "SpatialMaterial",
    "CharacterBody3D": "KinematicBody",
    "CharacterBody2D": "KinematicBody2D",
    "StaticBody3D": "StaticBody",
    "RigidBody3D": "RigidBody",
    "CollisionShape3D": "CollisionShape",
    "Area3D": "Area",
    "BoxMesh": "CubeMesh",
    "Sprite2D": "Sprite",
    "Transform3D": "Transform",
    "Quaternion": "Quat",
    "PackedInt32Array": "PoolIntArray",
    "PackedFloat32Array": "PoolRealArray",
    "PackedStringArray": "PoolStringArray",
    "PackedVector3Array": "PoolVector3Array",
    "PackedVector2Array": "PoolVector2Array",
    "PackedColorArray": "PoolColorArray",
    "PackedByteArray": "PoolByteArray",
}


class Godot3Dialect(GodotDialect):
    """Godot 3: `format=2` resources, GDScript 1, `-s` scripts, `-d` local debugger."""

    major = 3
    resource_format = 2
    config_version = 4
    style = GODOT3_STYLE
    capsule_axis = 2
    class_names = _FROM_GODOT4

    def capsule_fields(self, radius: float, length: float) -> dict[str, float]:
        return {"radius": radius, "mid_height": length - 2 * radius}  # mid_height: without the ends

    def headless_argv(self, binary: str, project: Path, script: Path, *, debug: bool) -> list[str]:
        argv = [binary, "--path", str(project), "--audio-driver", "Dummy"]
        return [*argv, *(["-d"] if debug else []), "-s", str(script)]

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
        argv += ["--audio-driver", "Dummy", *(["-d"] if debug else [])]
        if renderer:  # "GLES2" or "GLES3"; default: the project's rendering/quality/driver
            argv += ["--video-driver", renderer]
        return [*argv, "-s", str(script)] if script else argv

    def game_argv(self, binary: str, project: Path, *, debug: bool) -> list[str]:
        return [
            binary,
            "--path",
            str(project),
            "--audio-driver",
            "Dummy",
            *(["-d"] if debug else []),
        ]

    def check_argv(self, binary: str, project: Path, script_res_path: str) -> list[str]:
        return [binary, "--path", str(project), "--check-only", "-s", script_res_path]

    def import_argv(self, binary: str, project: Path) -> tuple[list[str], bool]:
        # 3.2 has no --import; the editor imports on its first scan but `--quit` does not
        # end it reliably, so the caller waits for the imported files and then stops it.
        return [binary, "--path", str(project), "--editor", "--audio-driver", "Dummy"], False

    def debugger_answers(self) -> bytes:
        # 500 script errors get a backtrace each; after that the game is stopped ("q").
        return b"bt\nc\n" * 500 + b"q\n"

    def script_source(self, extends: str, body: str) -> str:
        return f"extends {self.class_name(extends)}\n\n{body.rstrip()}\n"
