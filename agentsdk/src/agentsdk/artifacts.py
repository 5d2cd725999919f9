"""The folder where a run keeps images and large tool outputs."""

from __future__ import annotations

import functools
import re
import threading
from pathlib import Path

from platformdirs import user_cache_path

from .messages import Image, ImagePart

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@functools.cache
def default_runs_dir() -> Path:
    """Where run folders go unless the agent is given ``artifacts_dir``."""
    return user_cache_path("agentsdk") / "runs"


class ArtifactStore:
    """Files of one run. The folder is created on first save, so runs that save
    nothing leave nothing behind."""

    def __init__(self, directory: Path, *, numbered: int = 0):
        self.dir = directory if isinstance(directory, Path) else Path(directory)
        self._lock = threading.Lock()
        self._counter = numbered

    @property
    def numbered(self) -> int:
        """Files numbered so far (a resumed run's store starts from the saved count)."""
        return self._counter

    def _path_for(self, name: str) -> Path:
        safe = _UNSAFE.sub("_", name).strip("._") or "artifact"
        with self._lock:
            self._counter += 1
            n = self._counter
        self.dir.mkdir(parents=True, exist_ok=True)
        return self.dir / f"{n:03d}-{safe}"

    def save_bytes(self, name: str, data: bytes) -> Path:
        """Write ``data`` under a unique name derived from ``name``."""
        path = self._path_for(name)
        path.write_bytes(data)
        return path

    def save_text(self, name: str, text: str) -> Path:
        """Write UTF-8 text under a unique name derived from ``name``."""
        return self.save_bytes(name, text.encode("utf-8"))

    def save_image(self, image: Image | ImagePart, name: str | None = None) -> Path:
        """Write an image; the extension follows its media type."""
        ext = image.media_type.split("/")[-1].replace("jpeg", "jpg")
        base = name or image.label or "image"
        if not base.lower().endswith("." + ext):
            base = f"{base}.{ext}"
        return self.save_bytes(base, image.data)
