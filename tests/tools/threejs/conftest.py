"""Shared fixtures for the three.js tests: real Chromium (apt), real WebGL (SwiftShader)."""

from __future__ import annotations

import io
import os
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from agentsdk_threejs import RendererPool
from agentsdk_threejs._browser import command_line, descendant_pids
from PIL import Image as PILImage

ASSIMP_MODELS = Path("/usr/share/assimp/models")


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    # Module scope so one warm pool can serve a whole test module.
    return "asyncio"


@pytest.fixture(scope="session", autouse=True)
def _chromium_present_and_gone_afterwards() -> Iterator[None]:
    if not any(shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome")):
        pytest.fail(
            "Chromium is missing: run scripts/setup.d/threejs.sh (apt-get install chromium)"
        )
    yield
    left = [pid for pid in descendant_pids(os.getpid()) if "chrom" in command_line(pid)]
    assert left == [], f"Chromium processes left behind by the three.js tests: {left}"


@pytest.fixture(scope="module")
async def pool() -> AsyncIterator[RendererPool]:
    async with RendererPool(pages=2, asset_dirs=[ASSIMP_MODELS], timeout=10) as started:
        yield started


def pixel(png: bytes, x: float, y: float) -> tuple[int, int, int]:
    """The RGB colour at a relative position (0..1, 0..1 from the top left)."""
    image = PILImage.open(io.BytesIO(png)).convert("RGB")
    width, height = image.size
    r, g, b = image.getpixel((min(int(x * width), width - 1), min(int(y * height), height - 1)))
    return r, g, b


def close_to(
    color: tuple[int, int, int], expected: tuple[int, int, int], tolerance: int = 12
) -> bool:
    """True when every channel is within ``tolerance``."""
    return all(abs(a - b) <= tolerance for a, b in zip(color, expected, strict=True))


# Red box on the left, green box on the right, blue background; unlit materials.
TWO_BOXES = """scene.background = new THREE.Color(0x0000ff);
const red = new THREE.Mesh(new THREE.BoxGeometry(2, 2, 2), new THREE.MeshBasicMaterial({ color: 0xff0000 }));
red.position.x = -1.5;
red.name = 'red';
const green = new THREE.Mesh(new THREE.BoxGeometry(2, 2, 2), new THREE.MeshBasicMaterial({ color: 0x00ff00 }));
green.position.x = 1.5;
green.name = 'green';
scene.add(red, green);
"""
