"""The SQLite store's faults, for real: a damaged row, two processes resuming one
run at once, a changed tool set, a decision for a call that does not wait."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from agentsdk.state import (
    ApprovalError,
    CorruptState,
    Reject,
    RunNotFound,
    SQLiteStore,
    StateConflict,
    StateError,
    load_state,
)
from agentsdk.testing import ScriptedModel

from agentsdk import Agent, ToolCallPart, ToolContext, tool

pytestmark = pytest.mark.anyio
RACER = Path(__file__).with_name("racer.py")


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool(needs_approval=True, side_effects=True)
def transfer(cents: int, ctx: ToolContext) -> str:
    """Move money."""
    return f"moved {cents}"


def _adding(turns: int) -> ScriptedModel:
    steps: list[object] = [
        ToolCallPart(id=f"c{i}", name="add", arguments={"a": i, "b": 1}) for i in range(turns)
    ]
    return ScriptedModel([*steps, "done"])  # type: ignore[list-item]


async def _interrupted_run(store: SQLiteStore, turns: int = 3) -> None:
    """A run that stopped (its model failed) after ``turns`` tool turns."""
    model = _adding(turns)
    model.steps[-1] = RuntimeError("the model went away")
    with pytest.raises(RuntimeError):
        await Agent(model, "Add.", tools=[add], store=store).run("add", run_id="adding")


async def test_the_file_is_one_wal_database_with_the_documented_tables(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.db")
    await _interrupted_run(store)
    db = sqlite3.connect(tmp_path / "runs.db")
    assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"meta", "runs", "checkpoints", "messages"} <= tables
    (status,) = db.execute("SELECT status FROM runs WHERE key='adding'").fetchone()
    assert status == "failed"
    # each message is written once, however many saves there were
    (rows,) = db.execute("SELECT count(*) FROM messages WHERE thread='adding'").fetchone()
    (length,) = db.execute("SELECT length FROM runs WHERE key='adding'").fetchone()
    assert rows == length == 2 + 3 * 2  # system, user, then an answer and a result per turn


async def test_a_truncated_checkpoint_is_a_clear_error_and_the_previous_one_resumes(
    tmp_path: Path,
) -> None:
    store = SQLiteStore(tmp_path / "runs.db")
    await _interrupted_run(store)
    db = sqlite3.connect(tmp_path / "runs.db")
    (latest,) = db.execute("SELECT revision FROM runs WHERE key='adding'").fetchone()
    db.execute(
        "UPDATE checkpoints SET head = substr(head, 1, length(head) / 2) "
        "WHERE key='adding' AND revision=?",
        (latest,),
    )
    db.commit()

    with pytest.raises(CorruptState) as caught:
        await load_state(store, "adding")
    assert caught.value.revision == latest and caught.value.previous == latest - 1
    assert "fails its checksum" in str(caught.value)
    assert f"resume with revision={latest - 1}" in str(caught.value)

    # the previous good checkpoint carries on, and saves on top of the damaged one
    agent = Agent(ScriptedModel(["done"]), "Add.", tools=[add], store=store)
    result = await agent.resume("adding", revision=caught.value.previous)
    assert result.output == "done" and result.turns == 4
    assert (await load_state(store, "adding")).status == "finished"


async def test_an_altered_message_row_is_caught_by_its_checksum(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.db")
    await _interrupted_run(store)
    db = sqlite3.connect(tmp_path / "runs.db")
    (last,) = db.execute("SELECT max(id) FROM messages").fetchone()
    db.execute(
        'UPDATE messages SET body = replace(body, \'"text":"\', \'"text":"!\') WHERE id=?', (last,)
    )
    db.commit()
    with pytest.raises(CorruptState, match="fails its checksum") as caught:
        await load_state(store, "adding")
    assert caught.value.previous is not None  # the revision before that message was readable
    state = await load_state(store, "adding", caught.value.previous)
    assert len(state.messages) < 8


async def test_a_file_that_is_not_a_database_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    path.write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(StateError, match="not a usable run store"):
        await SQLiteStore(path).scan()


def test_two_processes_resuming_one_run_at_once_one_wins(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.db")
    model = ScriptedModel([ToolCallPart(id="t1", name="transfer", arguments={"cents": 500})])
    paused = Agent(model, tools=[transfer], store=store).run_sync("pay", run_id="pay")
    assert paused.status == "awaiting_approval"
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    journal = tmp_path / "journal"
    racers = [
        subprocess.Popen(
            [
                sys.executable,
                str(RACER),
                str(tmp_path / "runs.db"),
                "pay",
                str(journal),
                str(barrier),
                name,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("first", "second")
    ]
    outputs = [r.communicate(timeout=120) for r in racers]
    said = sorted(out.strip() for out, _ in outputs)
    assert [r.returncode for r in racers] == [0, 0], [err for _, err in outputs]
    assert said[0] == "LOST StateConflict: " + said[0].split(": ", 1)[1]
    assert "another process" in said[0] and said[1] == "WON Moved it."
    assert len(journal.read_text().splitlines()) == 1  # the money moved once


async def test_resuming_without_a_tool_the_run_used_names_it(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.db")
    await _interrupted_run(store)
    agent = Agent(ScriptedModel(["done"]), tools=[transfer], store=store)
    with pytest.raises(StateError, match=r"used tool\(s\) 'add' that this agent does not have"):
        await agent.resume("adding")
    assert (await load_state(store, "adding")).status == "failed"  # nothing was changed


async def test_deciding_a_call_that_does_not_wait_is_an_error(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.db")
    model = ScriptedModel([ToolCallPart(id="t1", name="transfer", arguments={"cents": 5}), "ok"])
    agent = Agent(model, tools=[transfer], store=store)
    await agent.run("pay", run_id="pay")
    with pytest.raises(ApprovalError, match="no call 'gone' waits for approval") as caught:
        await agent.resume("pay", approvals={"gone": True})
    assert "waiting: t1 (transfer)" in str(caught.value)
    with pytest.raises(ApprovalError, match="none given for t1"):
        await agent.resume("pay", approvals={})
    # decided once, the call no longer waits: deciding it again is the same clear error
    await agent.resume("pay", approvals={"t1": Reject("not today")})
    with pytest.raises(ApprovalError, match="no calls waiting"):
        await agent.resume("pay", approvals={"t1": True})


async def test_an_unknown_run_is_not_found(tmp_path: Path) -> None:
    agent = Agent(ScriptedModel(["x"]), store=tmp_path / "runs.db")
    with pytest.raises(RunNotFound, match="no run 'nope'"):
        await agent.resume("nope")


async def test_a_new_run_under_a_stored_name_says_to_resume_or_rename(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.db")
    await _interrupted_run(store)
    agent = Agent(ScriptedModel(["x"]), tools=[add], store=store)
    with pytest.raises(StateConflict, match=r"a run named 'adding' is in the store already"):
        await agent.run("again", run_id="adding")
    assert (await load_state(store, "adding")).status == "failed"  # untouched
