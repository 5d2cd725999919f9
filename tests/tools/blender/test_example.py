"""examples/blender_asset.py runs offline end to end with a real bpy worker."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from agentsdk_blender import AssetSpec, validate_asset

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "blender_asset.py"


def _load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("blender_asset_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_example_builds_validates_and_exports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    example = _load_example()
    monkeypatch.setattr(sys, "argv", ["blender_asset.py", "--out", str(tmp_path)])
    example.main()
    printed = capsys.readouterr().out
    assert "crate.glb is ready: 108 triangles, 1 m cube" in printed
    assert "validated on attempt 2" in printed  # the over-smoothed first crate was rejected
    assert printed.count("image ") == 4  # two views per render, two renders
    report = validate_asset(tmp_path / "crate.glb", AssetSpec.model_validate(example.SPEC))
    assert report.ok and report.triangles == 108
    assert len(list(tmp_path.glob("seen-*-render.png"))) == 4
