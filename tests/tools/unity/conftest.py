"""Fixtures: the bridge core compiled with mcs and served by mono."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .monohost import MonoHost, build_host, process_gone


@pytest.fixture(scope="session")
def host_exe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """host.exe built once per test session."""
    return build_host(tmp_path_factory.mktemp("unity-host"))


@pytest.fixture
def mono_host(host_exe: Path, tmp_path: Path) -> Iterator[MonoHost]:
    """A bridge core under mono with the test commands; checked dead afterwards."""
    host = MonoHost(host_exe, tmp_path / "bridge")
    yield host
    host.stop()
    print("mono host stderr:", host.stderr())
    assert process_gone(host.pid), f"mono host {host.pid} survived"
