"""examples/godot_game.py runs offline against the real engine and tells the story it should."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image as PILImage

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "godot_game.py"


@pytest.mark.slow
def test_godot_game_example(tmp_path: Path) -> None:
    project = tmp_path / "demo"
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--project", str(project)],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    # attaching the script ran the scene for a few frames: the error came back then
    assert (
        "attach_script: error: res://bounce.gd is saved and it is attached to Ball, "
        "but it fails when res://main.tscn runs (10 frames)"
    ) in lines
    assert any(line.startswith("write_script: ok:") for line in lines)
    assert any(line.startswith("run_project: ok:") for line in lines)
    assert "failed at res://bounce.gd:7" in lines[-1]
    # it decided from the report's text: cut off at first, camera moved back, fully in view
    shots = [line for line in lines if line.startswith("screenshot: ok:")]
    assert len(shots) == 2 and "set_property: ok:" in "\n".join(lines)
    assert "covers" in lines[-1] and "fully in view" in lines[-1]
    picture = PILImage.open(project / "screenshot.png").convert("RGB")
    raw = picture.tobytes()
    pixels = zip(raw[0::3], raw[1::3], raw[2::3], strict=True)
    red = sum(1 for r, g, b in pixels if r > 150 and g < 80 and b < 80)
    assert red > 0.02 * picture.width * picture.height  # the red ball is in view
    assert not (project / "addons").exists()
