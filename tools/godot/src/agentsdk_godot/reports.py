"""Typed results of the Godot tools, and how a run or a frame is summarised for a model."""

from __future__ import annotations

import io

from pydantic import BaseModel, Field

from agentsdk_godot.diagnostics import Diagnostic, format_diagnostics
from agentsdk_godot.engine import EngineRun

__all__ = [
    "RunReport",
    "SceneChange",
    "ScriptCheck",
    "blank_frame",
    "describe_report",
    "problems",
    "run_report",
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
