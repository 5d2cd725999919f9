"""The folder where a run keeps images and large tool outputs.

Run folders in the user cache (``default_runs_dir()``) are pruned when a process
first saves into it: folders beyond the newest ``AGENTSDK_KEEP_RUNS`` (default
200) or older than ``AGENTSDK_KEEP_DAYS`` days (default 30) are deleted; ``0``
turns a limit off. Folders touched in the last hour are never deleted (another
process may be running them), and a folder given as ``artifacts_dir`` is never
pruned: only the default cache is.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import shutil
import threading
import time
from collections.abc import Iterable
from pathlib import Path

from platformdirs import user_cache_path

from .messages import Image, ImagePart

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_log = logging.getLogger("agentsdk.artifacts")

KEEP_RUNS_ENV = "AGENTSDK_KEEP_RUNS"
KEEP_DAYS_ENV = "AGENTSDK_KEEP_DAYS"
DEFAULT_KEEP_RUNS = 200
DEFAULT_KEEP_DAYS = 30.0
GRACE_SECONDS = 3600.0
"""Folders changed more recently than this are never pruned."""


@functools.cache
def default_runs_dir() -> Path:
    """Where run folders go unless the agent is given ``artifacts_dir``."""
    return user_cache_path("agentsdk") / "runs"


def _limit(env: str, default: float) -> float | None:
    raw = os.environ.get(env, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{env}={raw!r} is not a number (0 turns the limit off)") from None
    if value < 0:
        raise ValueError(f"{env}={raw!r} must be 0 (no limit) or more")
    return value or None


def prune_runs(
    root: Path | None = None,
    *,
    keep_runs: int | None = None,
    keep_days: float | None = None,
    protect: Iterable[Path] = (),
    now: float | None = None,
) -> list[Path]:
    """Delete old run folders under ``root`` (default: the user cache's runs folder):
    those beyond the newest ``keep_runs`` and those not changed for ``keep_days``
    days. Limits default to ``AGENTSDK_KEEP_RUNS`` / ``AGENTSDK_KEEP_DAYS`` (200 runs,
    30 days; ``0`` is no limit). Folders changed within the last hour and the
    ``protect`` ones are kept. Returns the folders deleted."""
    root = default_runs_dir() if root is None else Path(root)
    runs = keep_runs if keep_runs is not None else _limit(KEEP_RUNS_ENV, DEFAULT_KEEP_RUNS)
    days = keep_days if keep_days is not None else _limit(KEEP_DAYS_ENV, DEFAULT_KEEP_DAYS)
    now = time.time() if now is None else now
    kept = {Path(p).resolve() for p in protect}
    try:
        entries = [e for e in os.scandir(root) if e.is_dir(follow_symlinks=False)]
    except FileNotFoundError:
        return []
    dated = sorted(((e.stat().st_mtime, Path(e.path)) for e in entries), reverse=True)
    removed: list[Path] = []
    for index, (mtime, path) in enumerate(dated):
        too_many = bool(runs) and index >= int(runs or 0)
        too_old = bool(days) and now - mtime > (days or 0) * 86400
        if not (too_many or too_old) or now - mtime < GRACE_SECONDS:
            continue
        if path.resolve() in kept:
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


_pruned: set[Path] = set()
_prune_lock = threading.Lock()


def _prune_once(root: Path, current: Path) -> None:
    """Prune the default runs folder the first time this process saves into it."""
    with _prune_lock:
        if root in _pruned:
            return
        _pruned.add(root)
    try:
        removed = prune_runs(root, protect=[current])
    except ValueError as exc:  # a bad AGENTSDK_KEEP_* value: say so, keep everything
        _log.warning("agentsdk: run folders not pruned: %s", exc)
        return
    if removed:
        _log.info("agentsdk: pruned %d old run folder(s) in %s", len(removed), root)


class ArtifactStore:
    """Files of one run. The folder is created on first save, so runs that save
    nothing leave nothing behind."""

    def __init__(self, directory: Path, *, numbered: int = 0):
        self.dir = directory if isinstance(directory, Path) else Path(directory)
        self._lock = threading.Lock()
        self._counter = numbered
        self._checked = False  # whether this store's first save looked at pruning

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
        if not self._checked:
            self._checked = True
            if self.dir.parent == default_runs_dir():
                _prune_once(self.dir.parent, self.dir)
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
