"""Resident engines (``keep_alive``): the next process uses the loaded server, which exits
by itself once nobody has used it for ``keep_alive`` seconds. Real servers (SmolLM2, the
smallest model), real processes; each test has its own cache folder, so its own records."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from agentsdk.sandbox import pid_alive
from agentsdk_openai.local import (
    KEEP_ALIVE_ENV,
    LocalEngine,
    resident_engines,
    stop_resident_engines,
)

pytestmark = pytest.mark.slow

# One process using an engine: starts (or finds) it, makes one chat request, says what it
# found, then holds it for argv[2] seconds and exits normally.
_USER = """
import json, os, sys, time
import anyio, httpx
from agentsdk_openai.local import LocalEngine

async def main():
    engine = LocalEngine("smollm2-135m", keep_alive=float(sys.argv[1]))
    started = time.perf_counter()
    await engine.start()
    seconds = time.perf_counter() - started
    answer = httpx.post(
        engine.base_url + "/chat/completions",
        headers={"Authorization": f"Bearer {engine.token}"},
        json={"messages": [{"role": "user", "content": "Say hi"}], "max_tokens": 4},
        timeout=120,
    )
    print(json.dumps({"pid": engine.pid, "attached": engine.attached, "launches": engine.launches,
                      "status": answer.status_code, "seconds": seconds, "me": os.getpid()}), flush=True)
    time.sleep(float(sys.argv[2]))

anyio.run(main)
"""


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A cache folder of this test's own (records, KV files); its engines stop at the end."""
    monkeypatch.setenv("AGENTSDK_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(KEEP_ALIVE_ENV, raising=False)
    yield tmp_path
    stop_resident_engines()


def _user(cache: Path, keep_alive: float, hold: float = 0.0) -> subprocess.Popen[str]:
    env = {**os.environ, "AGENTSDK_CACHE_DIR": str(cache)}
    return subprocess.Popen(
        [sys.executable, "-c", _USER, str(keep_alive), str(hold)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _report(process: subprocess.Popen[str]) -> dict[str, object]:
    out, err = process.communicate(timeout=240)
    assert process.returncode == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _wait(condition: object, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.1)
    return False


def test_the_next_process_uses_the_loaded_server(cache: Path) -> None:
    first = _report(_user(cache, keep_alive=120))
    assert first["attached"] is False and first["launches"] == 1 and first["status"] == 200
    pid = first["pid"]
    assert isinstance(pid, int) and pid_alive(pid), "the server died with its first user"
    second = _report(_user(cache, keep_alive=120))
    assert second["attached"] is True and second["launches"] == 0 and second["status"] == 200
    assert second["pid"] == pid  # the same server: no model load
    assert second["me"] != first["me"]
    assert [record["pid"] for record in resident_engines()] == [pid]
    assert [record["pid"] for record in stop_resident_engines()] == [pid]
    assert _wait(lambda: not pid_alive(pid), 10) and resident_engines() == []


def test_it_exits_keep_alive_seconds_after_its_last_user(cache: Path) -> None:
    holder = _user(cache, keep_alive=2, hold=6)  # holds it three times keep_alive
    line = holder.stdout.readline() if holder.stdout else ""
    pid = json.loads(line)["pid"]
    time.sleep(4)
    assert holder.poll() is None and pid_alive(pid), "the server left a process still using it"
    assert holder.wait(timeout=60) == 0
    gone_by = time.monotonic()
    assert _wait(lambda: not pid_alive(pid), 20), "the server outlived keep_alive"
    assert time.monotonic() - gone_by >= 1.0  # it waited for keep_alive, not less
    assert not list((cache / "engines").glob("*.json")), "the server left its record behind"
    # With the record gone, the next user starts a new server.
    assert _report(_user(cache, keep_alive=2))["attached"] is False


def test_the_record_is_private_and_the_server_wants_its_token(cache: Path) -> None:
    report = _report(_user(cache, keep_alive=60))
    folder = cache / "engines"
    (record_file,) = folder.glob("*.json")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(record_file.stat().st_mode) == 0o600
    record = json.loads(record_file.read_text())
    assert record["pid"] == report["pid"] and record["address"].startswith("http://127.0.0.1:")
    no_token = httpx.get(f"{record['address']}/slots", timeout=10)
    wrong = httpx.get(
        f"{record['address']}/slots", headers={"Authorization": "Bearer nope"}, timeout=10
    )
    right = httpx.get(
        f"{record['address']}/slots",
        headers={"Authorization": f"Bearer {record['token']}"},
        timeout=10,
    )
    assert (no_token.status_code, wrong.status_code, right.status_code) == (401, 401, 200)


def test_a_record_of_a_dead_or_foreign_server_is_not_trusted(cache: Path) -> None:
    first = _report(_user(cache, keep_alive=60))
    (record_file,) = (cache / "engines").glob("*.json")
    record = json.loads(record_file.read_text())
    # A wrong token (as if another server had the port now): a new server is started.
    record_file.write_text(json.dumps({**record, "token": "forged"}))
    second = _report(_user(cache, keep_alive=60))
    assert second["attached"] is False and second["pid"] != first["pid"]
    # A dead pid: likewise.
    stop_resident_engines()
    record_file.write_text(json.dumps({**record, "pid": 999_999_999}))
    third = _report(_user(cache, keep_alive=60))
    assert third["attached"] is False and third["status"] == 200
    # A damaged record is as good as none.
    stop_resident_engines()
    record_file.write_text("{not json")
    assert _report(_user(cache, keep_alive=60))["attached"] is False


def test_processes_starting_at_once_load_the_model_once(cache: Path) -> None:
    users = [_user(cache, keep_alive=60) for _ in range(3)]
    reports = [_report(user) for user in users]
    assert len({report["pid"] for report in reports}) == 1
    assert sorted(report["launches"] for report in reports) == [0, 0, 1]


def test_stop_ends_a_resident_engine_and_a_plain_engine_ignores_the_records(
    cache: Path,
) -> None:
    import anyio

    async def scenario() -> None:
        kept = LocalEngine("smollm2-135m", keep_alive=60)
        await kept.start()
        pid = kept.pid
        assert pid is not None and kept.keep_alive == 60
        plain = LocalEngine("smollm2-135m")  # keep_alive 0: its own child, as before
        await plain.start()
        try:
            assert plain.pid != pid and not plain.attached
        finally:
            await plain.stop()
        await kept.stop()
        assert _wait(lambda: not pid_alive(pid), 10) and resident_engines() == []

    anyio.run(scenario)


def test_the_keep_alive_comes_from_the_environment_when_not_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(KEEP_ALIVE_ENV, "42")
    assert LocalEngine("smollm2-135m").keep_alive == 42
    assert LocalEngine("smollm2-135m", keep_alive=0).keep_alive == 0
    monkeypatch.setenv(KEEP_ALIVE_ENV, "five minutes")
    with pytest.raises(ValueError, match="AGENTSDK_ENGINE_KEEP_ALIVE='five minutes' is not a"):
        LocalEngine("smollm2-135m")
    monkeypatch.delenv(KEEP_ALIVE_ENV)
    assert LocalEngine("smollm2-135m").keep_alive == 0


def test_the_module_command_lists_and_stops_them(cache: Path) -> None:
    pid = _report(_user(cache, keep_alive=60))["pid"]
    env = {**os.environ, "AGENTSDK_CACHE_DIR": str(cache)}
    command = [sys.executable, "-m", "agentsdk_openai.local"]
    listed = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    (row,) = listed.stdout.splitlines()[1:]
    assert listed.returncode == 0 and row.split()[:2] == ["smollm2-135m", str(pid)]
    stopped = subprocess.run(
        [*command, "stop"], env=env, capture_output=True, text=True, timeout=60
    )
    assert stopped.stdout.strip() == f"stopped smollm2-135m (pid {pid})"
    assert _wait(lambda: not pid_alive(pid), 10)
    again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert again.stdout.startswith("no resident engines")


def test_a_server_started_on_a_busy_machine_is_restarted_when_idle_and_unused(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import anyio
    from agentsdk_openai.local import engine as engine_module

    cores = len(os.sched_getaffinity(0))
    if cores < 2:
        pytest.skip("one core: every server gets every core")
    pid = _report(_user(cache, keep_alive=60))["pid"]
    (record_file,) = (cache / "engines").glob("*.json")
    # As if it had started while other work kept the cores busy: one thread.
    record_file.write_text(json.dumps({**json.loads(record_file.read_text()), "threads": [1, 1]}))

    def attach(busy: float) -> tuple[bool, int | None, tuple[int, int] | None]:
        monkeypatch.setattr(engine_module, "busy_cores", lambda *args: busy)
        engine = LocalEngine("smollm2-135m", keep_alive=60)
        anyio.run(engine.start)
        found = (engine.attached, engine.pid, engine.threads_used)
        engine.release()
        return found

    assert attach(busy=float(cores))[:2] == (True, pid)  # no better now: kept
    attached, new_pid, threads = attach(busy=0.0)
    assert not attached and new_pid != pid and _wait(lambda: not pid_alive(pid), 10)
    assert threads is not None and threads[0] == min(cores, 8)
