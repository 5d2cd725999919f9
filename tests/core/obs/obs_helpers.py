"""Helpers of the observability tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def kill_when_marked(script: str, args: list[str], marker: Path, wait: float = 120) -> int:
    """Run ``python -c script *args``; once it has written ``marker``, SIGKILL it by pid.
    Returns its exit status (``-SIGKILL``)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", script, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + wait
        while not marker.exists():
            if proc.poll() is not None:
                raise AssertionError(f"it ended early: {proc.communicate()[1].decode()[-2000:]}")
            if time.monotonic() > deadline:
                raise AssertionError(f"it never wrote {marker} in {wait:g} s")
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        return proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
