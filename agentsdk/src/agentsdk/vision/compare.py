"""Comparing two renders: structural similarity, what changed where, and how two
visibility reports differ in words."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel

from .report import VisibilityReport

__all__ = ["AssertResult", "ImageComparison", "compare_images", "diff_reports", "load_rgb"]


class AssertResult(BaseModel):
    """The outcome of a measure/assert tool: pass or fail, with the numbers measured,
    so a model (or a verifier) can check its own work."""

    check: str
    passed: bool
    measured: dict[str, float | int | str | bool | list[float]]
    tolerance: float | None = None
    message: str


class ImageComparison(BaseModel):
    """How two images of the same size differ."""

    ssim: float
    """Structural similarity of the grey images (1 = identical)."""
    changed_fraction: float
    """Fraction of pixels whose colour changed by more than the threshold."""
    changed_bbox: tuple[int, int, int, int] | None
    """``(x0, y0, x1, y1)`` around the changed pixels, inclusive, or ``None``."""
    identical: bool

    def to_text(self) -> str:
        """One line for a tool result."""
        if self.identical:
            return "the images are identical"
        where = ""
        if self.changed_bbox is not None:
            x0, y0, x1, y1 = self.changed_bbox
            where = f" in x {x0}-{x1} y {y0}-{y1}"
        return (
            f"similarity (SSIM) {self.ssim:.3f}; {self.changed_fraction * 100:.1f}% of "
            f"pixels changed{where}"
        )


def load_rgb(image: Any) -> NDArray[np.uint8]:
    """An ``(H, W, 3)`` uint8 array from PNG/JPEG bytes, a path, a PIL image, an
    ``agentsdk.Image`` or an array."""
    if isinstance(image, np.ndarray):
        array = image
    else:
        from PIL import Image as PILImage

        data = getattr(image, "data", None)
        if isinstance(data, bytes):  # agentsdk.Image / ImagePart
            image = data
        pil: PILImage.Image
        if isinstance(image, bytes | bytearray):
            pil = PILImage.open(io.BytesIO(image))
        elif isinstance(image, PILImage.Image):
            pil = image
        else:
            pil = PILImage.open(image)
        array = np.asarray(pil.convert("RGB"))
    if array.ndim == 2:
        array = np.repeat(array[..., None], 3, axis=2)
    if array.ndim != 3 or array.shape[2] < 3:
        raise ValueError(f"not an RGB image: array of shape {array.shape}")
    return np.ascontiguousarray(array[..., :3]).astype(np.uint8, copy=False)


def _box_mean(a: NDArray[np.float64], win: int) -> NDArray[np.float64]:
    """Mean over every ``win``x``win`` window that fits ('valid'), by summed-area table."""
    s = np.pad(a, ((1, 0), (1, 0))).cumsum(0).cumsum(1)
    total = s[win:, win:] - s[:-win, win:] - s[win:, :-win] + s[:-win, :-win]
    out: NDArray[np.float64] = total / (win * win)
    return out


def _ssim(x: NDArray[np.float64], y: NDArray[np.float64], win: int = 7) -> float:
    """Mean SSIM (Wang et al. 2004) with a uniform window and sample covariances, the
    same definition as scikit-image's default ``structural_similarity``."""
    win = min(win, x.shape[0], x.shape[1])
    if win % 2 == 0:
        win -= 1
    if win < 1:
        return 1.0 if np.array_equal(x, y) else 0.0
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    n = win * win
    cov_norm = n / (n - 1) if n > 1 else 1.0
    ux, uy = _box_mean(x, win), _box_mean(y, win)
    vx = cov_norm * (_box_mean(x * x, win) - ux * ux)
    vy = cov_norm * (_box_mean(y * y, win) - uy * uy)
    vxy = cov_norm * (_box_mean(x * y, win) - ux * uy)
    num = (2 * ux * uy + c1) * (2 * vxy + c2)
    den = (ux * ux + uy * uy + c1) * (vx + vy + c2)
    return float((num / den).mean())


def compare_images(a: Any, b: Any, *, threshold: int = 16) -> ImageComparison:
    """Compare two images of the same size (e.g. before and after an edit, or a render
    against a reference picture).

    Args:
        a: The first image (bytes, path, PIL image, ``agentsdk.Image`` or array).
        b: The second image, the same size.
        threshold: A pixel counts as changed when a channel moved by more than this.
    """
    x, y = load_rgb(a), load_rgb(b)
    if x.shape != y.shape:
        raise ValueError(
            f"the images differ in size ({x.shape[1]}x{x.shape[0]} vs {y.shape[1]}x{y.shape[0]}); "
            "render both at the same resolution"
        )
    if np.array_equal(x, y):
        return ImageComparison(ssim=1.0, changed_fraction=0.0, changed_bbox=None, identical=True)
    weights = np.array([0.2125, 0.7154, 0.0721])  # ITU-R 709 luma, as rgb2gray does
    gx = x.astype(np.float64) @ weights
    gy = y.astype(np.float64) @ weights
    changed = (np.abs(x.astype(np.int16) - y.astype(np.int16)).max(axis=2)) > threshold
    bbox: tuple[int, int, int, int] | None = None
    if changed.any():
        rows = np.flatnonzero(changed.any(axis=1))
        cols = np.flatnonzero(changed.any(axis=0))
        bbox = (int(cols[0]), int(rows[0]), int(cols[-1]), int(rows[-1]))
    return ImageComparison(
        ssim=_ssim(gx, gy),
        changed_fraction=float(changed.mean()),
        changed_bbox=bbox,
        identical=False,
    )


def _centre(box: tuple[int, int, int, int]) -> tuple[float, float]:
    return (box[0] + box[2]) / 2, (box[1] + box[3]) / 2


def diff_reports(before: VisibilityReport, after: VisibilityReport) -> list[str]:
    """What changed between two visibility reports of the same view, in short lines
    ("box: coverage 12% -> 30%", "ball: now visible")."""
    lines: list[str] = []
    old = {o.name: o for o in before.objects}
    new = {o.name: o for o in after.objects}
    span = max(after.width, after.height, 1)
    for name in sorted(set(old) | set(new)):
        a, b = old.get(name), new.get(name)
        if a is None and b is not None:
            lines.append(f"{name}: new" + (", visible" if b.visible else ", not visible"))
            continue
        if b is None:
            lines.append(f"{name}: removed")
            continue
        assert a is not None
        if a.visible != b.visible:
            lines.append(f"{name}: now {'visible' if b.visible else 'not visible'}")
            continue
        if not b.visible:
            continue
        changes: list[str] = []
        if abs(a.coverage - b.coverage) >= 0.01 or (
            a.coverage > 0 and abs(b.coverage / a.coverage - 1) >= 0.25
        ):
            changes.append(f"coverage {a.coverage * 100:.0f}% -> {b.coverage * 100:.0f}%")
        if (a.cut_off or 0) >= 0.01 and (b.cut_off or 0) < 0.01:
            changes.append("no longer cut off")
        elif (b.cut_off or 0) >= 0.01 and abs((b.cut_off or 0) - (a.cut_off or 0)) >= 0.01:
            changes.append(
                f"cut off {(a.cut_off or 0) * 100:.0f}% -> {(b.cut_off or 0) * 100:.0f}%"
            )
        if a.colour != b.colour and b.colour:
            changes.append(f"colour {a.colour} -> {b.colour}")
        if a.bbox and b.bbox:
            (ax, ay), (bx, by) = _centre(a.bbox), _centre(b.bbox)
            dx, dy = (bx - ax) / span, (by - ay) / span
            moves = []
            if abs(dx) >= 0.05:
                moves.append("right" if dx > 0 else "left")
            if abs(dy) >= 0.05:
                moves.append("down" if dy > 0 else "up")
            if moves:
                changes.append("moved " + " and ".join(moves))
        if (b.occluded or 0) - (a.occluded or 0) >= 0.1:
            changes.append(f"more hidden ({(b.occluded or 0) * 100:.0f}%)")
        elif (a.occluded or 0) - (b.occluded or 0) >= 0.1:
            changes.append(f"less hidden ({(b.occluded or 0) * 100:.0f}%)")
        if changes:
            lines.append(f"{name}: " + ", ".join(changes))
    if before.blank != after.blank:
        lines.append("the frame is now blank" if after.blank else "the frame is no longer blank")
    return lines
