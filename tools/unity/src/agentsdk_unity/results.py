"""Typed results of the Unity bridge commands (what the tools return to the model)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, JsonValue


def whole_characters(value: JsonValue) -> JsonValue:
    """The value with every unpaired UTF-16 surrogate replaced by U+FFFD.

    Editor text can hold half a surrogate pair (a name a script set, a log line cut mid-emoji);
    the bridge sends it escaped and the client keeps it, but UTF-8 (and so a tool result, a trace
    or a model request) cannot carry it.
    """
    if isinstance(value, str):
        return _whole_text(value)
    if isinstance(value, list):
        return [whole_characters(item) for item in value]
    if isinstance(value, dict):
        return {_whole_text(k): whole_characters(v) for k, v in value.items()}
    return value


def _whole_text(text: str) -> str:
    if text.isascii():
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class GameObjectInfo(BaseModel):
    """A GameObject as the editor describes it (local transform)."""

    name: str
    path: str = Field(description="hierarchy path, e.g. 'Turret/Barrel'")
    instance_id: int
    active: bool
    position: list[float]
    rotation_euler: list[float]
    scale: list[float]
    components: list[str]
    children: int
    mesh: str | None = Field(
        default=None, description="its MeshFilter's mesh: 'Cube' for a primitive cube"
    )


class GameObjectMatches(BaseModel):
    """Result of gameobject.find."""

    matches: list[GameObjectInfo]


class ScriptWrite(BaseModel):
    """Result of script.write."""

    path: str
    hash: str = Field(
        description="sha256 of the file now; pass it as expected_hash to edit it again"
    )
    previous_hash: str
    changed: bool
    written_unix: float


class ScriptContent(BaseModel):
    """Result of script.read."""

    path: str
    content: str
    hash: str
    compile_errors: list[str] = Field(
        default_factory=list, description="the last compilation's errors in this file"
    )
    next: str = Field("", description="what to do about them")


class CompileMessage(BaseModel):
    """One Unity compiler message."""

    file: str
    line: int
    column: int
    severity: Literal["error", "warning"]
    message: str
    assembly: str = ""

    def __str__(self) -> str:
        return f"{self.file}({self.line},{self.column}): {self.severity}: {self.message}"


class CompileReport(BaseModel):
    """Result of compile.status: the last script compilation."""

    compiling: bool
    started_unix: float
    finished_unix: float
    errors: list[CompileMessage]
    warnings: list[CompileMessage]


class LogEntry(BaseModel):
    """One editor console message."""

    seq: int
    type: str
    message: str
    stack: str = ""
    unix: float = 0.0


class ConsoleLogs(BaseModel):
    """Result of console.logs; pass last_seq as ``since`` to get only newer messages next time."""

    entries: list[LogEntry]
    last_seq: int


class FieldValue(BaseModel):
    """Result of gameobject.set_field: the value read back after writing."""

    path: str
    component: str
    field: str
    value: JsonValue


class PrefabSaved(BaseModel):
    """Result of prefab.save."""

    asset_path: str
    source: str


class SceneInfo(BaseModel):
    """The active scene."""

    name: str
    path: str
    dirty: bool
    roots: list[str]
    is_playing: bool


class PlayModeStatus(BaseModel):
    """Play mode state."""

    is_playing: bool
    will_change: bool
    is_paused: bool


class EditModeTestCase(BaseModel):
    """One EditMode test."""

    name: str
    full_name: str
    status: str
    message: str = ""
    duration_seconds: float = 0.0


class EditModeTestRun(BaseModel):
    """Result of tests.run."""

    passed: int
    failed: int
    skipped: int
    duration_seconds: float
    results: list[EditModeTestCase]


class Screenshot(BaseModel):
    """Result of camera.screenshot (the PNG arrives base64-encoded)."""

    camera: str
    width: int
    height: int
    png_base64: str
