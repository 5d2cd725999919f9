"""What a render shows, measured: visibility reports from an engine's object-ID pass,
image comparison, and the result shape of measure/assert tools.

Engine-independent; the three.js, Blender and Godot toolkits render the passes and
call these functions. Needs numpy and pillow (``pip install 'agentsdk[vision]'``).
"""

from .colours import colour_name, id_colours, ids_from_colours
from .compare import AssertResult, ImageComparison, compare_images, diff_reports, load_rgb
from .pixels import ObjectPixels, flat_colour, pixel_stats
from .report import (
    FLAT_FRAME_HINT,
    ObjectFacts,
    ObjectVisibility,
    VisibilityReport,
    report_from_pixels,
    visibility_report,
)

__all__ = [
    "FLAT_FRAME_HINT",
    "AssertResult",
    "ImageComparison",
    "ObjectFacts",
    "ObjectPixels",
    "ObjectVisibility",
    "VisibilityReport",
    "colour_name",
    "compare_images",
    "diff_reports",
    "flat_colour",
    "id_colours",
    "ids_from_colours",
    "load_rgb",
    "pixel_stats",
    "report_from_pixels",
    "visibility_report",
]
