"""Colours a model can name: ``"red"``, ``"light grey"``, ``"#ff8800"`` → a linear RGBA base colour.

Names and hex codes are sRGB, as on the web and in three.js's ``add_object`` (the values
below are the CSS colour keywords of the same names, except that dark grey is darker than
grey here); Blender's material colours are
scene-linear, so each channel goes through the sRGB transfer curve before it reaches the
material, and the render shows the colour the name promises.
"""

from __future__ import annotations

import re

from agentsdk import ToolError

__all__ = ["COLOUR_NAMES", "parse_colour", "srgb_to_linear"]

COLOUR_NAMES: dict[str, str] = {
    "black": "000000",
    "white": "ffffff",
    "grey": "808080",
    "lightgrey": "d3d3d3",
    "darkgrey": "404040",  # CSS's darkgrey (a9a9a9) is lighter than its grey
    "dimgrey": "696969",
    "silver": "c0c0c0",
    "red": "ff0000",
    "darkred": "8b0000",
    "maroon": "800000",
    "crimson": "dc143c",
    "pink": "ffc0cb",
    "hotpink": "ff69b4",
    "magenta": "ff00ff",
    "purple": "800080",
    "violet": "ee82ee",
    "indigo": "4b0082",
    "blue": "0000ff",
    "darkblue": "00008b",
    "navy": "000080",
    "lightblue": "add8e6",
    "skyblue": "87ceeb",
    "royalblue": "4169e1",
    "cyan": "00ffff",
    "teal": "008080",
    "turquoise": "40e0d0",
    "green": "008000",
    "darkgreen": "006400",
    "lightgreen": "90ee90",
    "lime": "00ff00",
    "olive": "808000",
    "yellow": "ffff00",
    "gold": "ffd700",
    "orange": "ffa500",
    "darkorange": "ff8c00",
    "coral": "ff7f50",
    "salmon": "fa8072",
    "brown": "a52a2a",
    "saddlebrown": "8b4513",
    "chocolate": "d2691e",
    "tan": "d2b48c",
    "beige": "f5f5dc",
    "wheat": "f5deb3",
    "ivory": "fffff0",
}
"""Plain colour names (spaces, hyphens, underscores and case ignored) and their sRGB hex."""

_ALIASES = {"aqua": "cyan", "fuchsia": "magenta"}
_HEX = re.compile(r"#?([0-9a-f]{3}|[0-9a-f]{6})")


def srgb_to_linear(channel: float) -> float:
    """One sRGB channel (0..1, as in a hex code) to scene-linear light (the sRGB curve)."""
    if channel <= 0.04045:
        return channel / 12.92
    return float(((channel + 0.055) / 1.055) ** 2.4)


def parse_colour(colour: str) -> tuple[float, float, float, float]:
    """A colour name or hex code (``#rgb``/``#rrggbb``) as a linear RGBA tuple (alpha 1).

    Raises ``ToolError`` naming a few valid names and the hex form when it is neither.
    """
    key = re.sub(r"[\s_-]+", "", colour.strip().lower()).replace("gray", "grey")
    key = _ALIASES.get(key, key)
    code = COLOUR_NAMES.get(key)
    if code is None:
        match = _HEX.fullmatch(key)
        if match is None:
            raise ToolError(
                f"unknown colour {colour!r}: use a name (red, green, blue, yellow, orange, "
                "purple, pink, brown, grey, white, black, gold, ...) or hex like #ff8800"
            )
        code = match.group(1)
        if len(code) == 3:
            code = "".join(c * 2 for c in code)
    r, g, b = (srgb_to_linear(int(code[i : i + 2], 16) / 255.0) for i in (0, 2, 4))
    return (round(r, 6), round(g, 6), round(b, 6), 1.0)
