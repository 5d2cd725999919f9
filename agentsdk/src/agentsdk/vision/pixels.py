"""Counting an object-ID pass: pixels, screen boxes and dominant colours per object,
and whether the lit frame is one flat colour. Engines that count on their side (a
page's JavaScript over its own buffers) skip this and hand ``ObjectPixels`` over."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel

__all__ = ["ObjectPixels", "flat_colour", "pixel_stats"]

_COLOUR_SAMPLE = 65_536  # labelled pixels above which colours are read from every 2nd row/column


class ObjectPixels(BaseModel):
    """What an ID pass says about one object: how many pixels, where, in which colour."""

    name: str
    pixels: int
    bbox: tuple[int, int, int, int] | None = None
    """``(x0, y0, x1, y1)``, inclusive pixels, origin at the top left."""
    colour_rgb: tuple[int, int, int] | None = None


def _rgb(values: Any) -> tuple[int, int, int]:
    r, g, b = np.rint(np.asarray(values, dtype=np.float64)[:3]).astype(int).tolist()
    return int(r), int(g), int(b)


def _runs(
    ids: NDArray[np.int64],
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """The horizontal runs of equal labels: label, row, first and last column of each
    (one compare over the frame; a scene has far fewer runs than pixels)."""
    h, w = ids.shape
    start = np.ones((h, w), dtype=bool)
    np.not_equal(ids[:, 1:], ids[:, :-1], out=start[:, 1:])
    first = np.flatnonzero(start)
    last = np.empty_like(first)
    last[:-1] = first[1:] - 1  # every row opens a run, so a run never crosses a row
    last[-1] = h * w - 1
    labels = ids.ravel()[first]
    rows, x0 = np.divmod(first, w)
    return labels, rows, x0, last - rows * w


def _count_and_box(
    ids: NDArray[np.int64], top: int
) -> tuple[NDArray[np.int64], dict[int, tuple[int, int, int, int]]]:
    """Pixels per label (0 = background) and each label's box, from the runs."""
    labels, rows, x0, x1 = _runs(ids)
    counts = np.bincount(labels, weights=x1 - x0 + 1, minlength=top + 1).astype(np.int64)
    keep = labels > 0
    labels, rows, x0, x1 = labels[keep], rows[keep], x0[keep], x1[keep]
    if labels.size == 0:
        return counts, {}
    big = np.iinfo(np.int64).max
    lo_x = np.full(top + 1, big, dtype=np.int64)
    lo_y = np.full(top + 1, big, dtype=np.int64)
    hi_x = np.full(top + 1, -1, dtype=np.int64)
    hi_y = np.full(top + 1, -1, dtype=np.int64)
    np.minimum.at(lo_x, labels, x0)
    np.maximum.at(hi_x, labels, x1)
    np.minimum.at(lo_y, labels, rows)
    np.maximum.at(hi_y, labels, rows)
    present = np.flatnonzero(hi_x >= 0)
    return counts, {
        int(k): (int(lo_x[k]), int(lo_y[k]), int(hi_x[k]), int(hi_y[k])) for k in present.tolist()
    }


def _colours(
    labels: NDArray[np.int64], rgb: NDArray[np.uint8], top: int
) -> dict[int, tuple[int, int, int]]:
    """Per label, the mean colour of its most common colour bin (3 bits per channel)."""
    if labels.size == 0:
        return {}
    bins = (
        (rgb[:, 0] >> 5).astype(np.int64) << 6
        | (rgb[:, 1] >> 5).astype(np.int64) << 3
        | (rgb[:, 2] >> 5).astype(np.int64)
    )
    keys = labels << 9 | bins
    if (top + 1) << 9 <= 2_000_000:  # a dense table is cheaper than sorting
        counts = np.bincount(keys, minlength=(top + 1) << 9).reshape(top + 1, 512)
        best = counts.argmax(axis=1)
        chosen = bins == best[labels]
    else:
        uniq, n = np.unique(keys, return_counts=True)
        owner = uniq >> 9
        order = np.lexsort((n, owner))
        last = order[np.flatnonzero(np.r_[owner[order][1:] != owner[order][:-1], True])]
        best_key = np.zeros(top + 1, dtype=np.int64) - 1
        best_key[owner[last]] = uniq[last]
        chosen = keys == best_key[labels]
    sel = labels[chosen]
    picked = rgb[chosen].astype(np.float64)
    n_sel = np.bincount(sel, minlength=top + 1)
    sums = np.stack(
        [np.bincount(sel, weights=picked[:, c], minlength=top + 1) for c in range(3)], 1
    )
    return {int(k): _rgb(sums[k] / n_sel[k]) for k in np.flatnonzero(n_sel).tolist() if k}


def flat_colour(beauty: NDArray[np.uint8]) -> tuple[bool, tuple[int, int, int]]:
    """Whether (nearly, 99.9% of a sample) every pixel of ``beauty`` has one colour, and
    the colour that most pixels have."""
    rgb = beauty[..., :3].reshape(-1, 3)
    sample = rgb[::7]
    bins = (
        (sample[:, 0] >> 4).astype(np.int64) << 8
        | (sample[:, 1] >> 4).astype(np.int64) << 4
        | (sample[:, 2] >> 4).astype(np.int64)
    )
    counts = np.bincount(bins, minlength=4096)
    top = int(counts.argmax())
    colour = _rgb(sample[bins == top].mean(axis=0))
    if counts[top] < 0.999 * len(sample):
        return False, colour
    first = rgb[0]
    if bool((rgb == first).all()):  # exactly one colour
        return True, (int(first[0]), int(first[1]), int(first[2]))
    return True, colour


def pixel_stats(
    ids: NDArray[np.integer[Any]],
    names: dict[int, str] | Iterable[tuple[int, str]],
    beauty: NDArray[np.uint8] | None = None,
) -> tuple[list[ObjectPixels], int]:
    """Count an ID pass: one ``ObjectPixels`` per named object number (in number order),
    and the background's pixel count."""
    named = dict(names)
    labels64 = ids.astype(np.int64, copy=False)
    flat = labels64.ravel()
    top = max(int(flat.max()) if flat.size else 0, max(named, default=0))
    counts, boxes = _count_and_box(labels64, top)
    colours: dict[int, tuple[int, int, int]] = {}
    if beauty is not None:
        labelled = int(flat.size - counts[0])
        if labelled > _COLOUR_SAMPLE:  # a quarter of the pixels give the same colours
            sub_ids = labels64[::2, ::2].ravel()
            sub_rgb = beauty[::2, ::2, :3].reshape(-1, 3)
            mask = sub_ids > 0
            colours = _colours(sub_ids[mask], sub_rgb[mask], top)
            missing = [k for k in named if counts[k] and k not in colours]
            if missing:  # objects too small to land on the sampled grid
                sel = np.isin(flat, missing)
                colours.update(_colours(flat[sel], beauty[..., :3].reshape(-1, 3)[sel], top))
        else:
            mask = flat > 0
            colours = _colours(flat[mask], beauty[..., :3].reshape(-1, 3)[mask], top)
    objects = [
        ObjectPixels(
            name=named[k],
            pixels=int(counts[k]) if k < counts.size else 0,
            bbox=boxes.get(k),
            colour_rgb=colours.get(k),
        )
        for k in sorted(named)
    ]
    return objects, int(counts[0])
