"""Shared fixtures: the real Godot 3 engine, a fresh project, and a check that no engine survives."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from agentsdk_godot import GodotEngine, GodotProject

ENGINE_NAMES = ("godot3-server", "godot3-runner", "Xvfb")
sys.path.insert(0, str(Path(__file__).parent))  # godot_calls, under any import mode


@pytest.fixture(scope="session", autouse=True)
def no_engine_survives() -> Iterator[None]:
    """Fail the session if any Godot or Xvfb process started by the tests is still alive."""
    for binary in ("godot3-server", "godot3-runner", "Xvfb"):
        if not shutil.which(binary):
            pytest.fail(
                f"{binary} is not installed: run scripts/setup.d/godot.sh (apt godot3-server godot3-runner xvfb)"
            )
    before = _all_engine_pids()
    yield
    survivors = _all_engine_pids() - before
    assert not survivors, f"Godot processes survived the test session: {sorted(survivors)}"


def _all_engine_pids() -> set[int]:
    pids: set[int] = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                name = Path(f"/proc/{entry}/comm").read_text().strip()
                state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if state != "Z" and any(name.startswith(n[:15]) for n in ENGINE_NAMES):
                pids.add(int(entry))
    return pids


@pytest.fixture(scope="session")
def engine() -> Iterator[GodotEngine]:
    """The installed Godot 3."""
    eng = GodotEngine()
    yield eng
    eng.close()


@pytest.fixture
def project(tmp_path: Path) -> GodotProject:
    """An empty project."""
    return GodotProject.create(tmp_path / "game")
