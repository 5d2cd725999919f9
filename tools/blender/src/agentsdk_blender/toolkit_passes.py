"""render_passes (group ``passes``): depth, normals, object IDs and the camera model as
files, as BlenderProc users expect them."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import ClassVar

import numpy as np
from PIL import Image as PILImage
from pydantic import BaseModel

from agentsdk import ToolContext, tool

from . import protocol as p
from .toolkit_base import Size2, build_args
from .toolkit_render import RenderTools


class PassFiles(BaseModel):
    """Where the passes were written, and the camera model they belong to."""

    depth_npy: str
    depth_png: str
    normals_npy: str
    normals_png: str
    ids_png: str
    ids_json: str
    camera_json: str
    width: int
    height: int
    depth_range_m: tuple[float, float] | None
    K: list[list[float]] | None


class PassTools(RenderTools):
    """Extra passes for the ``passes`` group."""

    TOOL_GROUPS: ClassVar[dict[str, str]] = {"render_passes": "passes"}

    @tool(side_effects=True)
    async def render_passes(
        self,
        name: str = "passes",
        resolution: Size2 = (320, 240),
        ctx: ToolContext | None = None,
    ) -> object:
        """Write the scene camera's depth (metres along the view axis; .npy float32 and a
        16-bit PNG in millimetres), world-space normals (.npy and an RGB PNG), the object-ID
        pass (PNG + names) and the camera's intrinsics (K, fov, sensor) and extrinsics
        (world-to-camera 4x4) to files in the output folder.

        Args:
            name: File name prefix inside the output folder.
            resolution: Width and height in pixels.
        """
        policy = self.paths(ctx)
        stem = self.path_or_error(policy.writable, name)
        stem.parent.mkdir(parents=True, exist_ok=True)
        args = build_args(p.PassesArgs, resolution=resolution)
        found = await self.call_engine("passes", args, p.PassesResult, timeout=self.render_timeout)
        height, width = found.height, found.width
        depth = np.frombuffer(base64.b64decode(found.depth_base64), np.float32).reshape(
            height, width
        )
        normals = np.frombuffer(base64.b64decode(found.normals_base64), np.float32).reshape(
            height, width, 3
        )
        files = {key: Path(f"{stem}_{key.replace('_', '.')}") for key in
                 ("depth_npy", "depth_png", "normals_npy", "normals_png", "ids_png", "ids_json", "camera_json")}  # fmt: skip
        np.save(files["depth_npy"], depth)
        np.save(files["normals_npy"], normals)
        finite = np.isfinite(depth)
        millimetres = np.where(finite, np.clip(np.rint(depth * 1000), 0, 65535), 0).astype(
            np.uint16
        )
        PILImage.fromarray(millimetres).save(files["depth_png"])  # 0 = nothing there
        colours = np.where(finite[..., None], np.clip((normals + 1) * 127.5, 0, 255), 0)
        PILImage.fromarray(colours.astype(np.uint8)).save(files["normals_png"])
        [look] = await self.look(resolution=(width, height))
        files["ids_png"].write_bytes(look.ids_png or b"")
        files["ids_json"].write_text(json.dumps({"names": look.id_names or {}}, indent=1))
        files["camera_json"].write_text(json.dumps(found.camera, indent=1))
        depth_range = (
            (float(depth[finite].min()), float(depth[finite].max())) if finite.any() else None
        )
        return self.reply(
            PassFiles(
                **{k: str(v) for k, v in files.items()},
                width=width,
                height=height,
                depth_range_m=depth_range,
                K=found.camera.get("K"),
            )
        )
