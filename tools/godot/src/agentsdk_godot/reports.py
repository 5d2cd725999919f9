"""Typed results of the Godot tools, and how a run or a frame is summarised for a model."""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Collection

from pydantic import BaseModel, Field

from agentsdk_godot.diagnostics import Diagnostic, format_diagnostics
from agentsdk_godot.engine import EngineRun
from agentsdk_godot.project import GodotProject, ProjectPathError

WHOLE_SCRIPT_LINES = 40  # a script this short is shown whole with its error: it is what to fix

__all__ = [
    "RunReport",
    "SceneChange",
    "ScriptCheck",
    "blank_frame",
    "describe_report",
    "problems",
    "run_report",
    "script_hints",
    "source_lines",
]


class SceneChange(BaseModel):
    """What an authoring tool changed."""

    scene: str
    node: str
    detail: str
    nodes: list[str] = Field(default_factory=list, description="all node paths of the scene")


class ScriptCheck(BaseModel):
    """A GDScript file written and parsed by the engine."""

    path: str
    ok: bool
    warnings: list[str] = Field(default_factory=list)
    next: str = Field("", description="what to do for the script to run, when something is")
    ran: str = Field("", description="what a short run of the scene that uses it showed")


class RunReport(BaseModel):
    """What happened when the game ran."""

    scene: str
    ok: bool
    frames: int | None
    duration_s: float
    timed_out: bool
    diagnostics: list[Diagnostic]
    output_tail: str


def blank_frame(png: bytes) -> str | None:
    """`rgb(r, g, b)` when every pixel has (almost) the same colour, else None."""
    from PIL import Image as PILImage

    with PILImage.open(io.BytesIO(png)) as img:
        rgb = img.convert("RGB")
        low, high = zip(*rgb.getextrema(), strict=True)
        if max(h - lo for lo, h in zip(low, high, strict=True)) <= 3:
            r, g, b = rgb.getpixel((0, 0))  # type: ignore[misc]
            return f"rgb({r}, {g}, {b})"
    return None


def problems(run: EngineRun) -> str:
    """The errors of a run as text (or the tail of stderr when none were parsed)."""
    text = format_diagnostics(run.errors)
    if run.timed_out:
        text += "\nthe engine did not finish in time and was stopped"
    return text or run.stderr[-1500:]


def run_report(scene: str, run: EngineRun) -> RunReport:
    """A run as the model sees it."""
    return RunReport(
        scene=scene,
        ok=not run.errors and not run.timed_out and run.exit_code == 0,
        frames=run.frames,
        duration_s=round(run.duration_s, 3),
        timed_out=run.timed_out,
        diagnostics=run.diagnostics,
        output_tail=run.stdout[-1500:],
    )


def describe_report(report: RunReport) -> str:
    """The error text for a failed run."""
    head = f"running {report.scene} failed"
    if report.timed_out:
        head += " (it did not finish in time: an endless loop? it was stopped)"
    body = format_diagnostics([d for d in report.diagnostics if d.severity == "error"])
    return head + (":\n" + body if body else "")


def source_lines(project: GodotProject, diagnostics: list[Diagnostic], *, whole: bool) -> str:
    """The script lines errors point at, numbered, the error lines marked with `>`: the whole
    script when `whole` and it is short (the model may never have seen it), else the lines
    around each error. Empty when no error is in a script of the project."""
    wanted: dict[str, set[int]] = {}
    for diag in diagnostics:
        if diag.severity == "error" and diag.file and diag.file.startswith("res://"):
            if diag.line is not None:
                wanted.setdefault(diag.file, set()).add(diag.line)
    blocks: list[str] = []
    shown_paths: list[str] = []
    for path, marked in list(wanted.items())[:2]:
        try:
            lines = project.read_text(path).splitlines()
        except (OSError, ProjectPathError, UnicodeDecodeError):
            continue
        if whole and len(lines) <= WHOLE_SCRIPT_LINES:
            shown = set(range(1, len(lines) + 1))
        else:
            shown = {n for m in marked for n in range(m - 2, m + 3) if 1 <= n <= len(lines)}
        width = len(str(max(shown, default=1)))
        rows, last = [], 0
        for number in sorted(shown):
            if last and number > last + 1:
                rows.append("  ...")
            mark = ">" if number in marked else " "
            rows.append(f"{mark} {number:>{width}} | {lines[number - 1]}")
            last = number
        if rows:
            blocks.append(f"{path} (error lines marked >):\n" + "\n".join(rows))
            shown_paths.append(path)
    if blocks:
        # The call that fixes a script, said outright: after a failed run the 1.5B model
        # tried set_property on the scene instead (godot/fix-parse-error).
        blocks.append(
            f'To fix it, call write_script(path="{shown_paths[0]}", source="...") with the whole '
            "corrected script."
        )
    return "".join("\n" + block for block in blocks)


_SHADOWING = re.compile(r"^\s*var\s+(\w+)\s*(?::\s*\w*\s*)?=(.*)$")


def shadowing_hints(project: GodotProject, diagnostics: list[Diagnostic]) -> str:
    """A hint line for each error on a line like ``var rotation = rotation + ...``: the
    ``var`` makes a new local that hides the node's own property and reads itself before it
    has a value (Nil). Small models write it for "turn this node" scripts."""
    hints: list[str] = []
    for diag in diagnostics:
        if diag.severity != "error" or not diag.file or diag.line is None:
            continue
        try:
            lines = project.read_text(diag.file).splitlines()
        except (OSError, ProjectPathError, UnicodeDecodeError):
            continue
        if not 0 < diag.line <= len(lines):
            continue
        found = _SHADOWING.match(lines[diag.line - 1])
        if found and re.search(rf"\b{found.group(1)}\b", found.group(2)):
            name = found.group(1)
            # The line as it should read: the same assignment to the node's own property.
            fixed = f"{name} ={found.group(2)}".strip()
            hints.append(
                f"hint: {diag.file}:{diag.line} `var {name} = ...{name}...` makes a new, empty "
                f"variable that hides the node's own {name}; without `var` the line reads "
                f"`{fixed}`"
            )
    return "".join(f"\n{h}" for h in dict.fromkeys(hints))


def script_hints(
    diagnostics: list[Diagnostic], classes: Collection[str], class_name: Callable[[str], str]
) -> str:
    """What a script error usually means, in a line each: a class called like a function
    (`SpatialMaterial()` -> `SpatialMaterial.new()`), the other generation's class names
    (`Node3D` on Godot 3) and annotations (`@export` on Godot 3). `classes` are the engine's
    class names, `class_name` the dialect's translation."""
    hints: list[str] = []
    for diag in diagnostics:
        if diag.severity != "error":
            continue
        called = re.search(r'The method "(\w+)" isn\'t declared', diag.message)
        if called and called.group(1) in classes:
            name = called.group(1)
            hints.append(f"hint: {name} is a class: make one with {name}.new()")
        for quoted in re.findall(r'class[^"]*"(\w+)"', diag.message):
            if class_name(quoted) != quoted:
                hints.append(f"hint: {quoted} is {class_name(quoted)} in this Godot version")
        if "Unexpected '@'" in diag.message:
            hints.append(
                "hint: Godot 3 has no @ annotations: write `export var x = 1.0`, `onready var n = $N`"
            )
    return "".join(f"\n{h}" for h in dict.fromkeys(hints))
