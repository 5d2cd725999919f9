"""Toolkits across runs (``async with agent``, ``with agent``), ``run_sync`` inside a
running loop, a sync tool that times out, and images kept as files by the store."""

from __future__ import annotations

import asyncio
import base64
import io
import sqlite3
import threading
import time
from pathlib import Path

import anyio
import pytest
from agentsdk.state import SQLiteStore, load_state
from agentsdk.testing import ScriptedModel
from agentsdk.tracing import read_trace
from PIL import Image as PILImage

from agentsdk import Agent, Image, ToolCallPart, ToolContext, Toolkit, tool

pytestmark = pytest.mark.anyio


class Scene(Toolkit):
    """A toolkit whose world lives as long as it is open (like a browser's scene)."""

    name = "scene"

    def __init__(self) -> None:
        super().__init__()
        self.starts = 0
        self.objects: list[str] | None = None
        self.loop_thread: int | None = None

    async def start(self) -> None:
        self.starts += 1
        self.objects = []
        self.loop_thread = threading.get_ident()

    async def close(self) -> None:
        self.objects = None

    @tool
    async def add_object(self, name: str) -> str:
        """Add an object to the scene."""
        assert self.objects is not None, "the scene is not open"
        assert threading.get_ident() == self.loop_thread, "a tool ran on another loop"
        self.objects.append(name)
        return f"scene has {', '.join(self.objects)}"


def adding(*names: str) -> ScriptedModel:
    steps: list[object] = []
    for n in names:
        steps += [ToolCallPart(name="add_object", arguments={"name": n}), f"added {n}"]
    return ScriptedModel(steps)  # type: ignore[arg-type]


async def test_per_run_by_default_each_run_starts_a_fresh_toolkit() -> None:
    scene = Scene()
    agent = Agent(adding("box", "ball"), tools=[scene])
    await agent.run("add a box")
    second = await agent.run("add a ball")
    assert scene.starts == 2 and scene.objects is None
    assert "scene has ball" in second.messages[-2].tool_results[0].text  # the box was lost


async def test_async_with_agent_keeps_the_toolkit_and_its_world_across_runs() -> None:
    scene = Scene()
    agent = Agent(adding("box", "ball"), tools=[scene])
    async with agent:
        await agent.run("add a box")
        second = await agent.run("add a ball")
        assert scene.objects == ["box", "ball"]
    assert scene.starts == 1 and scene.objects is None
    assert "scene has box, ball" in second.messages[-2].tool_results[0].text


def test_with_agent_keeps_the_toolkit_open_across_run_sync_calls() -> None:
    scene = Scene()
    agent = Agent(adding("box", "ball"), tools=[scene])
    with agent:
        agent.run_sync("add a box")
        agent.run_sync("add a ball")
        assert scene.objects == ["box", "ball"]
    assert scene.starts == 1 and scene.objects is None


async def test_run_sync_inside_a_running_loop_runs_on_a_helper_thread() -> None:
    """What a notebook cell does: a loop is running in this thread."""
    scene = Scene()
    agent = Agent(adding("box"), tools=[scene])
    result = agent.run_sync("add a box")
    assert result.output == "added box" and scene.loop_thread != threading.get_ident()


async def test_run_sync_under_async_with_says_to_await() -> None:
    agent = Agent(adding("box"), tools=[Scene()])
    async with agent:
        with pytest.raises(RuntimeError, match=r"await agent\.run\(\.\.\.\)"):
            agent.run_sync("add a box")


async def test_a_timed_out_sync_tool_is_asked_to_stop_and_its_late_end_is_traced(
    tmp_path: Path,
) -> None:
    polled = threading.Event()
    release = threading.Event()

    @tool(timeout=0.2)
    def crunch(ctx: ToolContext) -> str:
        """Work for a long time, polling the cancellation flag."""
        while not ctx.cancelled:
            time.sleep(0.01)
        polled.set()
        return "stopped"

    @tool(timeout=0.2)
    def stubborn() -> str:
        """Never looks at the flag; returns when the test lets it."""
        release.wait(60)
        return "finally"

    trace = tmp_path / "trace.jsonl"
    model = ScriptedModel([ToolCallPart(name="crunch"), ToolCallPart(name="stubborn"), "gave up"])
    agent = Agent(model, tools=[crunch, stubborn], trace=trace, loop_guard=None)
    result = await agent.run("crunch")

    assert await anyio.to_thread.run_sync(polled.wait, 30)  # it saw ctx.cancelled
    first = result.messages[2].tool_results[0]
    assert first.is_error and "timed out after 0.2 s" in first.text
    assert "thread keeps running" in first.text
    release.set()  # the stubborn one returns after its run ended: the trace still hears of it
    traced: list[dict[str, object]] = []
    for _ in range(3000):
        traced = [e for e in read_trace(trace) if e["event"] == "ToolFinishedLate"]
        if len(traced) == 2:
            break
        await anyio.sleep(0.01)
    assert sorted(str(e["name"]) for e in traced) == ["crunch", "stubborn"]
    assert all(float(str(e["late_by"])) >= 0 for e in traced)
    assert [e["event"] for e in read_trace(trace)].count("RunFinished") == 1


def _png(colour: tuple[int, int, int]) -> bytes:
    buf = io.BytesIO()
    PILImage.new("RGB", (8, 8), colour).save(buf, "PNG")
    return buf.getvalue()


async def test_images_are_stored_as_files_and_come_back_on_resume(tmp_path: Path) -> None:
    red, blue = _png((255, 0, 0)), _png((0, 0, 255))

    @tool
    def render(colour: str) -> Image:
        """Render the scene."""
        return Image(red if colour == "red" else blue)

    steps = [ToolCallPart(name="render", arguments={"colour": c}) for c in ("red", "blue", "red")]
    model = ScriptedModel([*steps, RuntimeError("model down")])
    store = SQLiteStore(tmp_path / "runs.db")
    agent = Agent(model, tools=[render], store=store, keep_images=2, loop_guard=None)
    with pytest.raises(RuntimeError):
        await agent.run("render", run_id="img")

    db = sqlite3.connect(tmp_path / "runs.db")
    bodies = [b for (b,) in db.execute("SELECT body FROM messages")]
    heads = [h for (h,) in db.execute("SELECT head FROM checkpoints")]
    encoded = base64.b64encode(red).decode()[:40]
    assert not any(encoded in text for text in bodies + heads)  # never inlined
    files = sorted(p.name for p in (tmp_path / "runs.db-files").rglob("*.png"))
    assert len(files) == 2  # one file per distinct image, however often it was saved

    state = await load_state(store, "img")
    images = [
        p for m in state.messages for r in m.tool_results for p in r.parts if p.kind == "image"
    ]
    assert [i.data for i in images] == [blue, red]  # the oldest was dropped by keep_images=2
    resumed = Agent(ScriptedModel(["done"]), tools=[render], store=store, keep_images=2)
    result = await resumed.resume("img")
    assert result.output == "done" and len(result.messages) == len(state.messages) + 1


async def test_run_sync_works_from_a_plain_thread_without_a_loop() -> None:
    agent = Agent(adding("box"), tools=[Scene()])
    result = await asyncio.to_thread(agent.run_sync, "add a box")
    assert result.output == "added box"
