"""Build the installable Blender add-on zip: ``python -m agentsdk_blender.addon_zip [out.zip]``."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

ADDON_PACKAGE = "agentsdk_blender_bridge"
_SOURCES = (
    "engine.py",
    "engine_aim.py",
    "engine_delete.py",
    "engine_errors.py",
    "engine_io.py",
    "engine_measure.py",
    "engine_names.py",
    "engine_passes.py",
    "engine_place.py",
    "engine_render.py",
    "engine_sight.py",
    "engine_settings.py",
    "engine_state.py",
    "engine_unknown.py",
    "engine_vision.py",
    "framing.py",
    "primitive_size.py",
)


def build_addon_zip(destination: str | Path) -> Path:
    """Write a zip holding the add-on package (addon.py as its __init__ plus the engine
    modules it imports) and return its path."""
    here = Path(__file__).resolve().parent
    target = Path(destination)
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.write(here / "addon.py", f"{ADDON_PACKAGE}/__init__.py")
        for name in _SOURCES:
            archive.write(here / name, f"{ADDON_PACKAGE}/{name}")
    return target


if __name__ == "__main__":
    print(build_addon_zip(sys.argv[1] if len(sys.argv) > 1 else "agentsdk_blender_bridge.zip"))
