"""Sessions: one conversation across runs and processes, listed, forked, deleted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from agentsdk.state import SessionBusy, SQLiteStore, list_sessions
from agentsdk.testing import FunctionModel, ScriptedModel

from agentsdk import Agent, ModelRequest, ToolCallPart, tool

pytestmark = pytest.mark.anyio


def echo_history(request: ModelRequest) -> str:
    """Answers with what it remembers: the user messages so far."""
    return " | ".join(m.text for m in request.messages if m.role == "user")


async def test_a_session_remembers_across_runs_and_processes(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    agent = Agent(FunctionModel(echo_history), "Remember.", store=db)
    first = await agent.session("chat").run("my name is Ada")
    assert first.output == "my name is Ada"
    await agent.aclose()

    script = f"""
from agentsdk import Agent
from agentsdk.testing import FunctionModel
agent = Agent(FunctionModel(lambda r: " | ".join(m.text for m in r.messages if m.role == "user")),
              "Remember.", store={str(db)!r})
print(agent.session("chat").run_sync("what is my name?").output)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "my name is Ada | what is my name?"

    messages = await agent.session("chat").messages()
    assert [m.role for m in messages] == ["system", "user", "assistant", "user", "assistant"]
    assert messages[0].text == "Remember."  # one system prompt, not one per run
    # the conversation is stored once: each run extends the session's thread in place
    store = SQLiteStore(db)
    assert len((await store.load("session:chat")).messages) == 5  # type: ignore[union-attr]


async def test_sessions_list_fork_and_delete(tmp_path: Path) -> None:
    agent = Agent(FunctionModel(echo_history), store=tmp_path / "runs.db")
    await agent.session("a").run("one")
    await agent.session("a").run("two")
    fork = await agent.session("a").fork("b")
    await fork.run("three")

    listed = {s.id: s.messages for s in await list_sessions(agent.store)}  # type: ignore[arg-type]
    assert listed == {"a": 4, "b": 6}
    assert [m.text for m in await agent.session("a").messages()][-1] == "one | two"
    assert [m.text for m in await fork.messages()][-1] == "one | two | three"

    await agent.session("a").delete()
    assert [s.id for s in await list_sessions(agent.store)] == ["b"]  # type: ignore[arg-type]
    assert await agent.session("a").messages() == []
    assert len(await agent.store.scan(session="a")) == 0  # type: ignore[union-attr]
    with pytest.raises(SessionBusy, match="exists already"):
        await fork.fork("b")


@tool(needs_approval=True)
def publish(text: str) -> str:
    """Publish a post."""
    return "published"


async def test_a_paused_run_holds_its_session_until_resumed_or_abandoned(tmp_path: Path) -> None:
    model = ScriptedModel(
        [ToolCallPart(id="p", name="publish", arguments={"text": "hi"}), "Posted.", "fresh"]
    )
    agent = Agent(model, tools=[publish], store=tmp_path / "runs.db")
    session = agent.session("blog")
    paused = await session.run("post hi", run_id="post")
    assert paused.status == "awaiting_approval"

    with pytest.raises(SessionBusy, match=r"agent\.resume\('post'"):
        await session.run("something else")

    done = await agent.resume("post", approvals={"p": True})
    assert done.output == "Posted."
    info = await session.info()
    assert info is not None and info.active_run is None and info.last_run == "post"
    assert info.messages == len(done.messages)
    again = await session.run("next")
    assert again.output == "fresh" and len(again.messages) == len(done.messages) + 2


async def test_abandoning_drops_the_unfinished_run(tmp_path: Path) -> None:
    model = ScriptedModel([ToolCallPart(id="p", name="publish", arguments={"text": "x"}), "after"])
    agent = Agent(model, tools=[publish], store=tmp_path / "runs.db")
    session = agent.session("blog")
    await session.run("post x")
    await session.abandon()
    result = await session.run("never mind")
    assert [m.text for m in result.messages if m.role == "user"] == ["never mind"]
