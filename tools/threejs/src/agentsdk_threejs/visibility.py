"""The visibility report of a rendered view, from the page's object-ID pass.

The page (``static/visibility.js``) sends the ID pass as packed integers plus the facts only
the scene knows; the counting, colours, text and hints are ``agentsdk.vision``'s.
"""

from __future__ import annotations

import base64
import io
from typing import Any

import numpy as np
from agentsdk.vision import ObjectFacts, VisibilityReport, visibility_report
from numpy.typing import NDArray


def decode_ids(raw: dict[str, Any]) -> NDArray[np.integer[Any]]:
    """The ``(H, W)`` object numbers of an ID pass (0 = background), rows from the top.

    The page sends run lengths (``[value, length]`` pairs of little-endian 32-bit words) of
    the rows as WebGL reads them, bottom row first.
    """
    width, height = int(raw["width"]), int(raw["height"])
    runs = np.frombuffer(base64.b64decode(raw["runs"]), dtype="<u4").reshape(-1, 2)
    if int(runs[:, 1].sum()) != width * height:
        raise ValueError("the ID pass does not cover the frame (corrupt run lengths)")
    ids = np.repeat(runs[:, 0], runs[:, 1]).reshape(height, width)[::-1]
    return np.ascontiguousarray(ids)


def decode_png(png: bytes) -> NDArray[np.uint8]:
    """The pixels of a PNG frame, RGB or RGBA as stored (the report reads the first three)."""
    from PIL import Image as PILImage

    with PILImage.open(io.BytesIO(png)) as image:
        if image.mode in ("RGB", "RGBA"):
            return np.asarray(image)
        return np.asarray(image.convert("RGB"))


def view_report(raw: dict[str, Any], png: bytes | None, view: str) -> VisibilityReport:
    """The report for one view: the ID pass, the lit frame and the page's facts together."""
    ids = decode_ids(raw)
    names = {index + 1: name for index, name in enumerate(raw["names"])}
    facts = {fact["name"]: ObjectFacts.model_validate(fact) for fact in raw["facts"]}
    beauty = decode_png(png) if png is not None else None
    return visibility_report(ids, names, beauty, facts, view=view, frame_tool="fit_view")
