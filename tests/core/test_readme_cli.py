"""The README's code blocks run as they stand; the CLI works."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from agentsdk.cli import main

ROOT = Path(__file__).resolve().parents[2]


def python_blocks() -> list[str]:
    text = (ROOT / "README.md").read_text()
    return re.findall(r"```python\n(.*?)```", text, re.DOTALL)


def run_block(code: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, cwd=ROOT
    )


def test_every_offline_readme_block_runs_and_prints_what_its_comments_say(
    tmp_path: Path,
) -> None:
    offline = [b for b in python_blocks() if '"local:' not in b]
    assert len(offline) >= 5
    outputs = {}
    for n, block in enumerate(offline):
        folder = tmp_path / str(n)  # runs.db and run folders land here, not in the repo
        folder.mkdir()
        done = subprocess.run(
            [sys.executable, "-c", block], capture_output=True, text=True, timeout=120, cwd=folder
        )
        assert done.returncode == 0, f"block {n}:\n{block[:300]}\n{done.stderr[-2000:]}"
        outputs[block.splitlines()[0] + str(n)] = done.stdout
    printed = "\n".join(outputs.values())
    assert "It is teal." in printed and "['fill', 'look']" in printed  # the toolkit example
    assert "refund {'order': 'A-17', 'cents': 25000}" in printed  # the approval example
    assert printed.count("\n2\n") >= 1  # the toolkit served both runs


def test_readme_has_the_two_commands_and_ci_runs_the_test_one() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "./scripts/demo" in readme and "./scripts/test" in readme
    ci = (ROOT / ".ci" / "run").read_text()
    assert "./scripts/test" in [line.strip() for line in ci.splitlines()]


def test_readme_testing_example_runs() -> None:
    block = next(b for b in python_blocks() if "ScriptedModel" in b)
    done = run_block(block, timeout=60)
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_readme_quickstart_runs_on_the_local_engine() -> None:
    block = python_blocks()[0]
    assert '"local:default"' in block and len(block.splitlines()) <= 25
    done = run_block(block, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    assert len(lines) >= 2 and lines[0].strip()
    assert "requests=" in lines[-1]


def test_cli_tools_lists_installed_toolkits(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    names = {entry["toolkit"] for entry in listing}
    assert names, "the workspace installs first-party toolkits"
    for entry in listing:
        assert "error" not in entry, entry
        for spec in entry["tools"]:
            assert spec["parameters"]["type"] == "object" and spec["description"]


def test_cli_reports_unknown_model_clearly(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "hi", "--model", "nosuchscheme:x"]) == 1
    err = capsys.readouterr().err
    assert "no model connector handles 'nosuchscheme'" in err
