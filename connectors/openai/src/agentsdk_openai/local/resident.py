"""Resident engines: a server that stays loaded between processes for ``keep_alive`` seconds.

Loading a model and restoring its prompt prefix costs seconds on every start, and a script
or a CLI command starts the engine anew each time it runs. With ``keep_alive`` set, the
server is started in a session of its own and recorded in the engines folder
(``<cache>/engines``, private to the user): ``<key>.json`` says where it listens and with
which token, ``<key>.holders/`` has one file per process using it. The next process that
wants the same engine (same model file, context, slots, template, KV folder and llama.cpp
build: the key) finds the record and uses the running server. The server exits by itself
``keep_alive`` seconds after its last holder has gone, and removes its record.

Everything here is standard library only: the server process imports it too.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TypedDict

__all__ = [
    "Record",
    "add_holder",
    "engine_key",
    "live_holders",
    "locked",
    "read_record",
    "records",
    "remove_holder",
    "remove_record",
    "try_locked",
    "write_record",
]


class Record(TypedDict):
    """What a process needs to use a resident server (the file is private to the user)."""

    pid: int
    address: str
    token: str
    model: str
    model_path: str
    keep_alive: float
    threads: list[int]
    kv_cache_dir: str
    log: str
    started: float


def engine_key(**identity: object) -> str:
    """A short stable name for everything a running server was started with."""
    text = json.dumps(identity, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def _private_dir(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.suppress(OSError):
        os.chmod(folder, 0o700)  # the records hold bearer tokens
    return folder


def read_record(folder: Path, key: str) -> Record | None:
    """The record of ``key``, or None when there is none or it cannot be read."""
    try:
        record = json.loads((folder / f"{key}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or not all(name in record for name in Record.__annotations__):
        return None  # another version's record, or damaged: as if there were none
    return record  # type: ignore[return-value]


def write_record(folder: Path, key: str, record: Record) -> Path:
    """Write ``record`` atomically, readable by this user only."""
    _private_dir(folder)
    path = folder / f"{key}.json"
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(record, out)
    temporary.replace(path)
    return path


def remove_record(folder: Path, key: str, pid: int | None = None) -> None:
    """Delete the record of ``key`` (only if it still names ``pid``, when given)."""
    record = read_record(folder, key)
    if record is not None and pid is not None and record["pid"] != pid:
        return
    with contextlib.suppress(OSError):
        (folder / f"{key}.json").unlink()


def records(folder: Path) -> dict[str, Record]:
    """Every record in ``folder`` by key (live or not: check ``pid`` before trusting one)."""
    found: dict[str, Record] = {}
    if folder.is_dir():
        for path in sorted(folder.glob("*.json")):
            record = read_record(folder, path.stem)
            if record is not None:
                found[path.stem] = record
    return found


def _start_time(pid: int) -> str | None:
    """The kernel's start time of ``pid`` (tells a live holder from a recycled pid), None
    when it has exited (a zombie counts as exited)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            fields = stat.read().rpartition(")")[2].split()
    except OSError:
        return None
    return None if fields[0] in ("Z", "X") else fields[19]


def add_holder(folder: Path, key: str, pid: int | None = None) -> None:
    """Say that process ``pid`` (this one by default) uses the server of ``key``."""
    pid = pid or os.getpid()
    holders = _private_dir(folder / f"{key}.holders")
    (holders / str(pid)).write_text(_start_time(pid) or "", encoding="ascii")


def remove_holder(folder: Path, key: str, pid: int | None = None) -> None:
    """This process (or ``pid``) no longer uses the server of ``key``."""
    with contextlib.suppress(OSError):
        (folder / f"{key}.holders" / str(pid or os.getpid())).unlink()


def live_holders(folder: Path, key: str) -> list[int]:
    """The processes still using the server of ``key``; files of exited ones are removed."""
    live: list[int] = []
    holders = folder / f"{key}.holders"
    with contextlib.suppress(OSError):
        for entry in os.scandir(holders):
            if not entry.name.isdigit():
                continue
            pid = int(entry.name)
            try:
                started = Path(entry.path).read_text(encoding="ascii")
            except OSError:
                continue
            now = _start_time(pid)
            if now is not None and (not started or started == now):
                live.append(pid)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
    return live


def try_locked(folder: Path, key: str) -> int | None:
    """Take the lock of ``key`` without waiting: its file descriptor, or None if held.

    The lock makes "read the record, then add a holder" and "see no holder, then remove
    the record" exclusive, so a server never exits under a process that just found it.
    Closing the descriptor releases it.
    """
    import fcntl  # POSIX only: on Windows resident engines fail here, plain ones work

    _private_dir(folder)
    fd = os.open(folder / f"{key}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


@contextlib.contextmanager
def locked(folder: Path, key: str, timeout: float = 5.0) -> Iterator[bool]:
    """Hold the lock of ``key`` (blocking, for short sections); yields whether it was got."""
    deadline = time.monotonic() + timeout
    fd = try_locked(folder, key)
    while fd is None and time.monotonic() < deadline:
        time.sleep(0.05)
        fd = try_locked(folder, key)
    try:
        yield fd is not None
    finally:
        if fd is not None:
            os.close(fd)
