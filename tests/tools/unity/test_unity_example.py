"""examples/unity_prefab.py: a clean exit without an editor, and a full run against the stub editor."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .monohost import MonoHost

EXAMPLE = Path(__file__).parents[3] / "examples" / "unity_prefab.py"


def run_example(
    *args: str, timeout: float = 180, **extra_env: str
) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/tmp", **extra_env}
    return subprocess.run(
        [sys.executable, str(EXAMPLE), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )


def test_example_exits_cleanly_when_no_editor_listens(tmp_path: Path) -> None:
    done = run_example("--project", str(tmp_path / "NoEditorHere"))
    assert done.returncode == 0
    assert "Traceback" not in done.stderr
    assert "needs a running Unity Editor" in done.stderr
    assert (
        str(tmp_path / "NoEditorHere" / "Library" / "AgentSdkBridge" / "connection.json")
        in done.stderr
    )


def test_example_exits_cleanly_when_the_editor_is_gone(mono_host: MonoHost) -> None:
    mono_host.stop()  # connection.json stays behind, nobody listens: the usual "editor was closed" case
    done = run_example(timeout=60, AGENTSDK_UNITY_BRIDGE_DIR=str(mono_host.bridge_dir))
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert "No Unity editor is listening" in done.stderr


@pytest.mark.slow
def test_example_builds_the_prefab_in_the_stub_editor(
    stub_editor: MonoHost, tmp_path: Path
) -> None:
    project = stub_editor.bridge_dir.parents[1]
    done = run_example("--project", str(project), "--artifacts", str(tmp_path / "runs"))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "Connected to unity-stub (editor state: ready)"
    assert "- write_script: ERROR Written Assets/Scripts/Spinner.cs" in done.stdout
    assert "Assets/Scripts/Spinner.cs(9,20): error: CS0266" in done.stdout
    assert "- set_field: " in done.stdout and '"value":180' in done.stdout
    assert "and the screenshot shows it" in done.stdout
    assert "component Spinner" in (project / "Assets" / "Prefabs" / "Turret.prefab").read_text()
    assert list((tmp_path / "runs").rglob("*.png")), "the screenshot is saved as a run artifact"
