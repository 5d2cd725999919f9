"""examples/threejs_scene.py runs offline end to end, corrects itself from the reports, and leaves
no browser behind."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import trimesh
from PIL import Image as PILImage

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.slow
def test_example_corrects_from_the_reports_and_exports(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "threejs_scene.py"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    out = completed.stdout
    # The corrections followed what the reports said.
    assert "the image is flat black: add lights" in out
    assert "box is cut off on the right" in out
    assert out.index("flat black") < out.index("== add_light: ok") < out.index("== fit_view: ok")
    assert '"check":"rests_on","passed":true' in out
    assert "== render_views: ok" in out and "== export_glb: ok" in out
    assert "Exported 2 meshes" in out
    [glb] = list(tmp_path.rglob("red_box.glb"))
    assert len(trimesh.load(glb, force="scene").graph.nodes_geometry) == 2
    # The test (not the example) looks at the pixels: the last framed view shows a red box.
    framed = sorted(tmp_path.rglob("seen-*-fit_view.png"))[-1]
    image = PILImage.open(framed).convert("RGB")
    r, g, b = image.getpixel((image.width // 2, image.height // 2))
    assert r > 120 and g < 80 and b < 80, (r, g, b)
