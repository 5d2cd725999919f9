"""examples/threejs_scene.py runs offline end to end and leaves no browser behind."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image as PILImage

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.slow
def test_example_fixes_the_blank_scene_and_exports(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "threejs_scene.py"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    out = completed.stdout
    assert "render_scene: error: The frame is blank" in out
    assert "render_views: ok" in out and "export_glb: ok" in out
    assert "Exported 2 meshes" in out
    [glb] = list(tmp_path.rglob("red_box.glb"))
    assert glb.stat().st_size > 1000
    lit = next(tmp_path.rglob("seen-1-render_scene.png"))
    r, g, b = PILImage.open(lit).convert("RGB").getpixel((256, 256))
    assert r > 150 and g < 80 and b < 80
