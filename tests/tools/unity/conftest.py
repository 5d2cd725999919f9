"""Fixtures: the bridge core compiled with mcs and served by mono."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .monohost import MonoHost, build_host, build_stub_editor, process_gone, start_stub_editor


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


@pytest.fixture(scope="session")
def stub_editor_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The Unity handlers compiled against the stub assemblies, plus the stub editor host."""
    out = tmp_path_factory.mktemp("unity-stub-editor")
    return out / "stub-editor.exe", build_stub_editor(out)


@pytest.fixture
def stub_editor(
    stub_editor_build: tuple[Path, dict[str, str]], tmp_path: Path
) -> Iterator[MonoHost]:
    """The real Unity handlers running on the behavioural stubs under mono, for a fresh project."""
    host = start_stub_editor(stub_editor_build[0], tmp_path / "Project")
    yield host
    host.stop()
    print("stub editor stderr:", host.stderr())
    assert process_gone(host.pid), f"stub editor {host.pid} survived"
