"""Turning a rendered view and its ID pass into an ``agentsdk.vision`` visibility report."""

from __future__ import annotations

import base64
import io

import numpy as np
from agentsdk.vision import ObjectFacts, VisibilityReport, ids_from_colours, visibility_report
from numpy.typing import NDArray
from PIL import Image as PILImage

from .protocol import RenderedView


def _rgba(png: bytes) -> NDArray[np.uint8]:
    return np.asarray(PILImage.open(io.BytesIO(png)).convert("RGBA"))


def report_for(view: RenderedView, beauty_png: bytes) -> VisibilityReport | None:
    """The visibility report of one rendered view (None when no ID pass came with it)."""
    if view.report is None:
        return None
    passed = view.report
    rgba = _rgba(base64.b64decode(passed.id_png_base64))
    ids = ids_from_colours(rgba, passed.count)
    ids[rgba[..., 3] < 128] = 0  # transparent film: nothing there
    names = {int(k): v for k, v in passed.names.items()}
    facts = {
        f.name: ObjectFacts(
            name=f.name,
            pixels_alone=f.pixels_alone,
            pixels_unclipped=f.pixels_unclipped,
            cut_sides=list(f.cut_sides),
            behind_camera=f.behind_camera,
            outside_frustum=f.outside_frustum,
        )
        for f in passed.facts
    }
    beauty = _rgba(beauty_png)[..., :3]
    # Two hints at most: a 5-object report stays near 100 tokens (benchmarks/blender.py).
    return visibility_report(
        ids, names, beauty, facts, view=view.view, max_hints=2, frame_tool="fit_view"
    )
