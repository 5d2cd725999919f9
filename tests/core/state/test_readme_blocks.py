"""The README sections of issue #17 (agentsdk/README.md, for the top-level README):
every Python block runs as it stands and prints what its comments say."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[3] / "agentsdk" / "README.md"


def blocks() -> list[str]:
    text = README.read_text()
    section = text.split("<!-- for-top-level-readme:begin", 1)[1].split(
        "<!-- for-top-level-readme:end", 1
    )[0]
    return re.findall(r"```python\n(.*?)```", section, re.DOTALL)


def run(code: str, cwd: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=cwd
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_the_sections_have_their_three_examples() -> None:
    found = blocks()
    assert len(found) == 3
    assert "class Sketchpad(Toolkit)" in found[0] and "Image.from_pil" in found[0]
    assert "async with agent" in found[1] and "with agent:" in found[1]
    assert "needs_approval" in found[2] and "resume_sync" in found[2]


def test_the_toolkit_example_prints_every_result_field(tmp_path: Path) -> None:
    lines = run(blocks()[0], tmp_path).splitlines()
    assert lines[:4] == ["It is teal.", "finished", "2", "['fill', 'look']"]
    assert lines[4].startswith("input_tokens=") and "requests=2" in lines[4]
    assert lines[-1] == "[] None"


def test_the_lifetime_example_keeps_one_toolkit_across_runs(tmp_path: Path) -> None:
    assert run(blocks()[1], tmp_path).split() == ["2", "2"]


def test_the_approvals_example_pauses_and_resumes_from_the_store(tmp_path: Path) -> None:
    lines = run(blocks()[2], tmp_path).splitlines()
    assert lines == ["refund {'order': 'A-17', 'cents': 25000}", "I could not refund it."]
    assert (tmp_path / "runs.db").exists()
