"""A loopback server script in its own process: it prints ``PORT <n>`` once it listens."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


class ServerProcess:
    """``with ServerProcess(script, *args) as url:``: the server's base URL (``path``
    appended); terminated (killed after 10 s) on the way out."""

    def __init__(self, script: Path, *args: str, path: str = "", what: str = "the server"):
        self.argv = [sys.executable, str(script), "--port", "0", *args]
        self.path = path
        self.what = what
        self.pid: int | None = None

    def __enter__(self) -> str:
        self.process = subprocess.Popen(self.argv, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        self.pid = self.process.pid
        line = self.process.stdout.readline()
        if not line.startswith("PORT "):
            self.process.kill()
            raise RuntimeError(f"{self.what} did not start: {line!r}")
        return f"http://127.0.0.1:{int(line.split()[1])}{self.path}"

    def __exit__(self, *exc: object) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
