"""Colours: plain names for RGB values, and the flat ID colours of a segmentation pass."""

from __future__ import annotations

import colorsys
import math

import numpy as np
from numpy.typing import NDArray

__all__ = ["colour_name", "id_colours", "ids_from_colours"]


def colour_name(rgb: tuple[int, int, int] | list[int]) -> str:
    """A plain English name for an 8-bit sRGB colour: ``"red"``, ``"dark blue"``,
    ``"light grey"`` ... (hue, saturation and lightness buckets, not a palette match)."""
    r, g, b = (max(0, min(255, int(c))) / 255.0 for c in rgb)
    h, lightness, s = colorsys.rgb_to_hls(r, g, b)
    value = max(r, g, b)
    chroma = value - min(r, g, b)
    if value < 0.08:
        return "black"
    if chroma < 0.08 or (s < 0.12 and chroma < 0.15):
        if lightness > 0.9:
            return "white"
        if lightness > 0.65:
            return "light grey"
        if lightness < 0.25:
            return "dark grey"
        return "grey"
    deg = h * 360.0
    if deg < 15 or deg >= 335:
        base = "pink" if lightness > 0.7 and deg >= 335 else "red"
    elif deg < 40:
        base = "orange"
    elif deg < 70:
        base = "yellow"
    elif deg < 160:
        base = "green"
    elif deg < 195:
        base = "cyan"
    elif deg < 255:
        base = "blue"
    elif deg < 285 or value < 0.7:
        base = "purple"
    else:
        base = "pink" if lightness > 0.7 else "magenta"
    if base in ("orange", "red") and value < 0.6 and lightness < 0.4:
        return "brown" if base == "orange" else "dark red"
    if base == "yellow" and value < 0.55:
        return "olive"
    if lightness < 0.26 and not (base == "purple" and lightness > 0.2):
        return f"dark {base}"
    if lightness > 0.8:
        return f"light {base}"
    return base


def _levels(count: int) -> int:
    """Steps per channel so that ``count`` objects (plus the background) get colours."""
    root: float = round((count + 1) ** (1 / 3), 9)
    return max(2, math.ceil(root))


def id_colours(count: int) -> NDArray[np.uint8]:
    """Flat colours for objects ``1..count`` of an ID pass, as a ``(count + 1, 3)`` array
    (row 0 is the black background). Colours sit on a grid as coarse as the count allows,
    so :func:`ids_from_colours` still decodes them after small colour shifts (rounding,
    colour management) of up to half a grid step per channel."""
    levels = _levels(count)
    step = 255.0 / (levels - 1)
    index = np.arange(count + 1)
    digits = np.stack([index // (levels * levels), (index // levels) % levels, index % levels], 1)
    colours: NDArray[np.uint8] = np.clip(np.rint(digits * step), 0, 255).astype(np.uint8)
    return colours


def ids_from_colours(image: NDArray[np.uint8], count: int) -> NDArray[np.int32]:
    """Decode an ID pass drawn with :func:`id_colours` into an ``(H, W)`` array of object
    numbers (0 = background; a colour that is no object's, e.g. a blended edge pixel
    outside the grid, also reads as 0)."""
    if image.ndim != 3 or image.shape[2] < 3:
        raise ValueError(f"an ID pass must be an (H, W, 3) image, not shape {image.shape}")
    levels = _levels(count)
    step = 255.0 / (levels - 1)
    digits = np.rint(image[..., :3].astype(np.float32) / step).astype(np.int32)
    ids: NDArray[np.int32] = (digits[..., 0] * levels + digits[..., 1]) * levels + digits[..., 2]
    ids[ids > count] = 0
    return ids
