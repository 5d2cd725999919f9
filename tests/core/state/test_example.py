"""examples/approvals.py runs offline, as a user would run it."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "approvals.py"


def test_the_approvals_example_pauses_rejects_and_resumes_in_another_process(
    tmp_path: Path,
) -> None:
    store = tmp_path / "runs.db"
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--store", str(store)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "waiting: delete_file({'path': 'notes.txt'})"  # build/ needs no one
    assert "[process 2] waiting: publish({'version': '1.2.0'}) -> approve" in lines
    assert lines[-2] == "[process 2] Done: published 1.2.0; kept notes.txt as asked."
    assert lines[-1] == "[process 2] files left: ['PUBLISHED', 'app.tar.gz', 'notes.txt']"
    db = sqlite3.connect(store)
    assert db.execute("SELECT status FROM runs WHERE key='release-1.2.0'").fetchone() == (
        "finished",
    )
