"""render_passes: depth, normals, IDs and the camera model, checked against known geometry."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from agentsdk_blender import BlenderToolkit, BlenderWorker
from PIL import Image as PILImage

pytestmark = pytest.mark.anyio


async def test_passes_of_a_known_cube(tmp_path: Path) -> None:
    kit = BlenderToolkit(BlenderWorker(timeout=120), groups=["core", "passes"], output_dir=tmp_path)
    tools = {t.name: t for t in kit.tools()}
    async with kit:
        for name, args in (
            (
                "create_primitive",
                {"kind": "cube", "name": "Crate", "size": 1.0, "location": [0.5, 0, 0.5]},
            ),
            ("place_camera", {"location": [0, -10, 0.5], "look_at": [0, 0, 0.5], "lens_mm": 50}),
        ):
            assert not (await tools[name].call(args)).is_error
        outcome = await tools["render_passes"].call({"name": "shot", "resolution": [160, 120]})
        escape = await tools["render_passes"].call({"name": "../shot"})
    assert not outcome.is_error, outcome.text
    assert escape.is_error and "outside the output folder" in escape.text
    files = json.loads(outcome.text)
    camera = json.loads(Path(files["camera_json"]).read_text())
    fx = 50 / 36 * 160  # focal length in pixels: lens / sensor width * image width
    assert np.allclose(camera["K"], [[fx, 0, 80], [0, fx, 60], [0, 0, 1]])
    assert camera["fov_x_deg"] == pytest.approx(np.degrees(2 * np.arctan(18 / 50)))
    depth = np.load(files["depth_npy"])
    normals = np.load(files["normals_npy"])
    assert depth.shape == (120, 160) and normals.shape == (120, 160, 3)
    # The cube's front face (y = -0.5) seen from y = -10: 9.5 m away, facing -Y.
    hits = np.isfinite(depth)
    assert np.allclose(depth[hits], 9.5, atol=1e-4)
    assert np.allclose(normals[hits], [0, -1, 0], atol=1e-5)
    assert not np.isfinite(depth[0, 0]) and (normals[0, 0] == 0).all()
    # The face's corners, projected with K and the OpenCV extrinsics, bound the hit pixels.
    world_to_camera = np.array(camera["world_to_camera_opencv"])
    corners = np.array([[0, -0.5, 0, 1], [1, -0.5, 1, 1]], float) @ world_to_camera.T
    pixels = (np.array(camera["K"]) @ (corners[:, :3] / corners[:, 2:3]).T).T[:, :2]
    rows, cols = np.nonzero(hits)
    assert cols.min() == pytest.approx(pixels[:, 0].min(), abs=1)
    assert cols.max() + 1 == pytest.approx(pixels[:, 0].max(), abs=1)
    assert rows.min() == pytest.approx(pixels[:, 1].min(), abs=1)
    assert rows.max() + 1 == pytest.approx(pixels[:, 1].max(), abs=1)
    millimetres = np.asarray(PILImage.open(files["depth_png"]))
    assert millimetres.dtype == np.uint16 and set(np.unique(millimetres[hits])) == {9500}
    ids = np.asarray(PILImage.open(files["ids_png"]).convert("RGBA"))
    assert ids.shape == (120, 160, 4) and (ids[..., 3] > 0).sum() == pytest.approx(
        hits.sum(), rel=0.1
    )
    assert json.loads(Path(files["ids_json"]).read_text())["names"] == {"1": "Crate"}
