"""examples/blender_asset.py runs offline end to end with a real bpy worker."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest
from agentsdk_blender import AssetSpec, validate_asset

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "blender_asset.py"


@pytest.mark.slow
def test_example_builds_validates_and_exports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    example = runpy.run_path(str(EXAMPLE))  # its globals; main() is not run
    monkeypatch.setattr(sys, "argv", ["blender_asset.py", "--out", str(tmp_path)])
    example["main"]()
    printed = capsys.readouterr().out
    assert "crate.glb is ready: 108 triangles, 1 m cube" in printed
    assert "validated on attempt 2" in printed  # the over-smoothed first crate was rejected
    # It read "cut off" in the first render's report and reframed, from the text alone.
    assert "Crate: " in printed and "cut off" in printed and printed.count("fit_view: ok") == 1
    assert printed.count("render: ok: rendered with workbench") == 3  # cut off, reframed, rebuilt
    report = validate_asset(tmp_path / "crate.glb", AssetSpec.model_validate(example["SPEC"]))
    assert report.ok and report.triangles == 108
    # The latest images are kept in the transcript (older ones become artifact references).
    assert len(list(tmp_path.glob("seen-*-render.png"))) >= 2


def test_the_artist_reads_only_text() -> None:
    source = EXAMPLE.read_text()
    assert "ImagePart" not in source.split("def artist")[1].split("def build_agent")[0]
    assert "PIL" not in source and "getpixel" not in source
