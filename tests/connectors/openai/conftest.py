"""Fixtures: the real llama.cpp engines (one start per session) and MockTransport helpers."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

# pytest runs with --import-mode=importlib, which does not put test folders on sys.path;
# the helper module's name is unique to this folder, so adding the folder is safe.
sys.path.insert(0, str(Path(__file__).parent))

from agentsdk.sandbox import pid_alive
from agentsdk_openai import LocalEngine
from agentsdk_openai.local import stop_all_engines


@pytest.fixture(scope="session")
def engine_pids() -> Iterator[list[int]]:
    """Every engine pid started in the session; asserts at the end that none survives."""
    pids: list[int] = []
    yield pids
    stop_all_engines()
    survivors = [pid for pid in pids if pid_alive(pid)]
    assert survivors == [], f"engine processes survived the session: {survivors}"


def _started(model: str, pids: list[int]) -> LocalEngine:
    engine = LocalEngine.shared(model)
    anyio.run(engine.start)
    assert engine.pid is not None, f"the {model} engine did not start"
    pids.append(engine.pid)
    return engine


@pytest.fixture(scope="session")
def qwen_engine(engine_pids: list[int]) -> LocalEngine:
    """The shared Qwen2.5-Coder-0.5B engine (standard tier), started once per session."""
    return _started("qwen2.5-coder-0.5b", engine_pids)


@pytest.fixture(scope="session")
def smollm_engine(engine_pids: list[int]) -> LocalEngine:
    """The shared SmolLM2-135M engine (fast tier), started once per session."""
    return _started("smollm2-135m", engine_pids)
