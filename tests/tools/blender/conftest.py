"""Fixtures for the Blender tests: real bpy workers, shared per module to keep the suite quick."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from agentsdk_blender import BlenderToolkit, BlenderWorker
from agentsdk_blender.toolkit_base import GROUPS

ASSIMP_MODELS = Path("/usr/share/assimp/models")
sys.path.insert(0, str(Path(__file__).parent))  # blender_calls, under any import mode


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module-scoped so that one warm worker can serve a whole test module."""
    return "asyncio"


@pytest.fixture(scope="module")
async def worker(anyio_backend: str) -> AsyncIterator[BlenderWorker]:
    """A warm bpy worker shared by the tests of one module."""
    async with BlenderWorker(timeout=60) as running:
        yield running
    assert running.pid is None


@pytest.fixture(scope="session")
def assimp_models() -> Path:
    """Debian's assimp-testmodels (installed by scripts/setup.d/blender.sh)."""
    if not (ASSIMP_MODELS / "glTF2").is_dir():
        pytest.fail("assimp-testmodels is missing: run scripts/setup.d/blender.sh as root")
    return ASSIMP_MODELS


@pytest.fixture(scope="session")
def group_members() -> Callable[[int], list[int]]:
    """Lists the live processes of a process group (to prove nothing was left behind)."""
    return process_group_members


def process_group_members(pgid: int) -> list[int]:
    """Pids of live (non-zombie) processes in a process group, read from /proc."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(entry))
    return members


@pytest.fixture(scope="module")
async def toolkit(
    anyio_backend: str, tmp_path_factory: pytest.TempPathFactory, assimp_models: Path
) -> AsyncIterator[BlenderToolkit]:
    """A toolkit with every tool group (execute_python enabled), allowed to read the
    assimp models, exports in a temp folder; one per module (a module that needs another
    set-up defines its own ``toolkit``)."""
    kit = BlenderToolkit(
        BlenderWorker(timeout=120),
        groups=GROUPS,
        output_dir=tmp_path_factory.mktemp("out"),
        read_roots=[assimp_models],
    )
    async with kit:
        yield kit
