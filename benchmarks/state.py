"""Durable runs, side by side: what saving a run's state to SQLite costs per step.

Run from the repository root::

    uv run python benchmarks/state.py            # builds/uses .venv-bench (see overhead.py)
    uv run python benchmarks/state.py --quick    # a tiny configuration (smoke test)

Every framework runs the same task in its own child process: ``turns`` model calls
that each ask for ``add(a=i, b=1)``, then an answer; the model is canned, so what is
measured is the framework and its persistence. Each is run without and with its
SQLite persistence, a fresh database file per run:

* agentsdk: ``Agent(store=SQLiteStore(path))`` (a save at every step boundary);
* openai-agents: ``Runner.run(..., session=SQLiteSession(id, path))``;
* LangGraph: a two-node graph (model, ``ToolNode``) compiled with
  ``AsyncSqliteSaver`` (a checkpoint at every super-step).

Reported: wall time per turn with and without, the added time per turn and per save
(agentsdk), and flatness (the added time of the last three turns over the first
three, from a clock the tool reads). Resume latency: after a 40-turn run, a fresh
process opens the database and reads the state (agentsdk: ``load_state`` and a full
``resume`` that runs the last turn; openai-agents: ``session.get_items()``; LangGraph:
``graph.aget_state``). Prints markdown tables, writes ``benchmarks/results/state.json``
and refreshes the state section of ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
README = HERE / "README.md"
README_BEGIN, README_END = "<!-- state:begin -->", "<!-- state:end -->"
FRAMEWORKS = ["agentsdk", "openai-agents", "langgraph"]
CLOCK: list[float] = []
SAVES: list[int] = []  # the saves (writes of state) each run made, for the peers


async def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first number.
        b: The second number.
    """
    CLOCK.append(time.perf_counter())
    return a + b


# --- one run of each framework -------------------------------------------------------------

Go = Callable[[], Awaitable[Any]]
Run = Callable[[Path | None, str], Awaitable[tuple[Go, Go]]]
"""Given the database file (None: no persistence) and a run id, set up untimed (open
the database, create its tables) and return the timed run and an untimed close
(closing a SQLite file checkpoints its WAL: once per process, not per step)."""


def agentsdk_run(turns: int, fail_last: bool = False) -> Run:
    from agentsdk.state import SQLiteStore
    from agentsdk.testing import ScriptedModel

    from agentsdk import Agent, ToolCallPart, tool

    add_tool = tool(add)

    async def setup(db: Path | None, run_id: str) -> tuple[Go, Go]:
        store = SQLiteStore(db) if db is not None else None
        if store is not None:
            await store.scan()  # opens the file and creates the tables
        steps: list[Any] = [
            ToolCallPart(name="add", arguments={"a": i, "b": 1}) for i in range(turns)
        ]
        last: Any = RuntimeError("stop before the answer") if fail_last else "done"
        agent = Agent(
            ScriptedModel([*steps, last]),
            "Add.",
            tools=[add_tool],
            max_turns=turns + 5,
            store=store,
            artifacts_dir=db.parent if db is not None else None,
        )

        async def go() -> Any:
            return await agent.run("add things", run_id=run_id)

        async def close() -> None:
            if store is not None:
                await store.aclose()

        return go, close

    return setup


def openai_agents_run(turns: int) -> Run:
    from agents import Agent, Runner, SQLiteSession, function_tool, set_tracing_disabled
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.testing import assistant_message, function_call
    from agents.usage import Usage

    set_tracing_disabled(True)
    calls = [[function_call("add", {"a": i, "b": 1}, call_id=f"call_{i}")] for i in range(turns)]
    outputs = [*calls, [assistant_message("done")]]

    class CannedModel(Model):  # type: ignore[misc]
        def __init__(self) -> None:
            self.position = 0

        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            output = outputs[self.position]
            self.position += 1
            return ModelResponse(output=output, usage=Usage(requests=1), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    tools = [function_tool(add)]
    add_items = SQLiteSession.add_items

    async def counted(self: Any, items: Any) -> None:
        SAVES.append(1)
        await add_items(self, items)

    SQLiteSession.add_items = counted  # type: ignore[method-assign]

    async def setup(db: Path | None, run_id: str) -> tuple[Go, Go]:
        agent = Agent(name="bench", instructions="Add.", tools=tools, model=CannedModel())
        session = SQLiteSession(run_id, db) if db is not None else None  # creates the tables

        async def go() -> Any:
            return await Runner.run(agent, "add things", max_turns=turns + 5, session=session)

        async def close() -> None:
            if session is not None:
                session.close()

        return go, close

    return setup


def langgraph_graph(turns: int, checkpointer: Any) -> Any:
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_core.tools import tool as lc_tool
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode

    async def model(state):  # type: ignore[no-untyped-def]  # LangGraph reads hints
        done = sum(isinstance(m, ToolMessage) for m in state["messages"])
        if done >= turns:
            return {"messages": [AIMessage(content="done")]}
        call = {"name": "add", "args": {"a": done, "b": 1}, "id": f"call_{done}"}
        return {"messages": [AIMessage(content="", tool_calls=[call])]}

    def route(state):  # type: ignore[no-untyped-def]
        last = state["messages"][-1]
        return "tools" if getattr(last, "tool_calls", None) else END

    graph = StateGraph(MessagesState)
    graph.add_node("model", model)
    graph.add_node("tools", ToolNode([lc_tool(add)]))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", route, ["tools", END])
    graph.add_edge("tools", "model")
    return graph.compile(checkpointer=checkpointer)


def langgraph_run(turns: int) -> Run:
    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    plain = langgraph_graph(turns, None)

    async def setup(db: Path | None, run_id: str) -> tuple[Go, Go]:
        config = {"configurable": {"thread_id": run_id}, "recursion_limit": 2 * turns + 10}
        graph, conn = plain, None
        if db is not None:
            conn = await aiosqlite.connect(db)
            saver = AsyncSqliteSaver(conn)
            await saver.setup()  # creates the tables
            graph = langgraph_graph(turns, saver)

        async def go() -> Any:
            return await graph.ainvoke({"messages": [("user", "add things")]}, config)

        async def close() -> None:
            if conn is not None:
                rows = await conn.execute(
                    "SELECT count(*) FROM checkpoints WHERE thread_id = ?", (run_id,)
                )
                SAVES.extend([1] * (await rows.fetchone())[0])  # type: ignore[index]
                await conn.close()

        return go, close

    return setup


RUNS: dict[str, Callable[[int], Run]] = {
    "agentsdk": agentsdk_run,
    "openai-agents": openai_agents_run,
    "langgraph": langgraph_run,
}


# --- measuring -----------------------------------------------------------------------------


def _gaps(clock: list[float]) -> list[float]:
    return [(b - a) * 1e3 for a, b in itertools.pairwise(clock)]


async def _measure(name: str, turns: int, repeats: int, warmup: int) -> dict[str, Any]:
    run = RUNS[name](turns)
    saves: list[float] = []
    if name == "agentsdk":
        from agentsdk.state import SQLiteStore

        original = SQLiteStore.save

        async def timed(self: Any, checkpoint: Any) -> None:
            started = time.perf_counter()
            await original(self, checkpoint)
            saves.append((time.perf_counter() - started) * 1e3)

        SQLiteStore.save = timed  # type: ignore[method-assign]
    out: dict[str, Any] = {"turns": turns, "repeats": repeats}
    modes = ("plain", "sqlite")
    walls: dict[str, list[float]] = {m: [] for m in modes}
    firsts: dict[str, list[float]] = {m: [] for m in modes}
    lasts: dict[str, list[float]] = {m: [] for m in modes}
    middles: dict[str, list[float]] = {m: [] for m in modes}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(warmup + repeats):
            for mode in modes:  # interleaved: a change in the machine's load hits both
                db = Path(tmp) / f"{mode}-{i}.db" if mode == "sqlite" else None
                go, close = await run(db, f"run-{i}")
                CLOCK.clear()
                saves.clear()
                SAVES.clear()
                started = time.perf_counter()
                await go()
                wall = (time.perf_counter() - started) * 1e3
                await close()
                if i < warmup:
                    continue
                walls[mode].append(wall / (turns + 1))
                gaps = _gaps(CLOCK)
                middles[mode].append(statistics.median(gaps))
                firsts[mode].append(statistics.median(gaps[1:4]))
                lasts[mode].append(statistics.median(gaps[-3:]))
                if mode == "sqlite" and not saves and SAVES:
                    out.setdefault("saves_per_run", len(SAVES))
                if mode == "sqlite" and saves:
                    out.setdefault("saves_per_run", len(saves))
                    out.setdefault("save_ms", []).append(statistics.median(saves))
                    out.setdefault("save_first_ms", []).append(statistics.median(saves[2:8]))
                    out.setdefault("save_last_ms", []).append(statistics.median(saves[-6:]))
    for mode in modes:
        out[mode] = {
            "ms_per_turn": round(statistics.median(walls[mode]), 3),
            "median_turn_ms": round(statistics.median(middles[mode]), 3),
            "turn_first_ms": round(statistics.median(firsts[mode]), 3),
            "turn_last_ms": round(statistics.median(lasts[mode]), 3),
        }
    for key in ("save_ms", "save_first_ms", "save_last_ms"):
        if key in out:
            out[key] = round(statistics.median(out[key]), 3)
    plain, sqlite = out["plain"], out["sqlite"]
    out["added_ms_per_turn"] = round(sqlite["ms_per_turn"] - plain["ms_per_turn"], 3)
    first = sqlite["turn_first_ms"] - plain["turn_first_ms"]
    last = sqlite["turn_last_ms"] - plain["turn_last_ms"]
    out["added_first_ms"], out["added_last_ms"] = round(first, 3), round(last, 3)
    # the steady state: a median turn (a loaded machine preempts any process now and
    # then for a few ms; the run's mean shows those stalls, the median does not)
    out["added_median_turn_ms"] = round(sqlite["median_turn_ms"] - plain["median_turn_ms"], 3)
    if "saves_per_run" in out:
        per_turn = out["saves_per_run"] / (turns + 1)
        out["saves_per_turn"] = round(per_turn, 2)
        out["added_ms_per_save"] = round(out["added_median_turn_ms"] / per_turn, 3)
    return out


async def _resume(name: str, turns: int, repeats: int) -> dict[str, Any]:
    """Write a ``turns``-turn run, then time reading it back with fresh connections."""
    times: list[float] = []
    resumes: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(repeats):
            db = Path(tmp) / f"resume-{i}.db"
            run_id = f"long-{i}"
            if name == "agentsdk":
                from agentsdk.state import SQLiteStore, load_state
                from agentsdk.testing import ScriptedModel

                from agentsdk import Agent, tool

                go, close = await agentsdk_run(turns, fail_last=True)(db, run_id)
                try:
                    await go()
                except RuntimeError:
                    pass
                await close()
                started = time.perf_counter()
                store = SQLiteStore(db)
                state = await load_state(store, run_id)
                times.append((time.perf_counter() - started) * 1e3)
                assert state.turn == turns and state.status == "failed"
                add_tool = tool(add)  # building a tool's schema is not resuming
                started = time.perf_counter()
                agent = Agent(ScriptedModel(["done"]), tools=[add_tool], store=store)
                result = await agent.resume(run_id)
                resumes.append((time.perf_counter() - started) * 1e3)
                assert result.output == "done" and result.turns == turns + 1
                await store.aclose()
            elif name == "openai-agents":
                from agents import SQLiteSession

                go, close = await openai_agents_run(turns)(db, run_id)
                await go()
                await close()
                started = time.perf_counter()
                session = SQLiteSession(run_id, db)
                items = await session.get_items()
                times.append((time.perf_counter() - started) * 1e3)
                assert len(items) >= 2 * turns
                session.close()
            else:
                import aiosqlite
                from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

                go, close = await langgraph_run(turns)(db, run_id)
                await go()
                await close()
                started = time.perf_counter()
                async with aiosqlite.connect(db) as conn:
                    graph = langgraph_graph(turns, AsyncSqliteSaver(conn))
                    snapshot = await graph.aget_state({"configurable": {"thread_id": run_id}})
                times.append((time.perf_counter() - started) * 1e3)
                assert len(snapshot.values["messages"]) >= 2 * turns
    out = {"turns": turns, "read_state_ms": round(statistics.median(times), 2)}
    if resumes:
        out["resume_to_answer_ms"] = round(statistics.median(resumes), 2)
    return out


def worker(kind: str, name: str, config: dict[str, Any]) -> None:
    """Measure one framework in this process; print the result as the last line."""
    if kind == "steps":
        result = asyncio.run(_measure(name, **config))
    else:
        result = asyncio.run(_resume(name, **config))
    print(json.dumps(result))


def run_worker(kind: str, name: str, config: dict[str, Any], python: str) -> dict[str, Any]:
    argv = [python, str(Path(__file__).resolve()), "--worker", kind, name, json.dumps(config)]
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=1800, cwd=ROOT)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"exit {done.returncode}: {tail}"}
    result: dict[str, Any] = json.loads(lines[-1])
    print(f"  {kind:7} {name:14} {time.perf_counter() - started:6.1f} s  {result}", flush=True)
    return result


# --- report --------------------------------------------------------------------------------


def _cell(result: dict[str, Any], *path: str) -> str:
    value: Any = result
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return "—"
        value = value[key]
    return f"{value:g}" if isinstance(value, int | float) else str(value)


def tables(report: dict[str, Any]) -> str:
    lines = [
        "| framework (SQLite persistence) | turns | median turn without (ms) | median turn "
        "with (ms) | added per turn (ms) | saves per turn | added per save (ms) | added, "
        "first 3 → last 3 turns (ms) | whole run, added per turn (mean ms) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    names = {
        "agentsdk": "agentsdk (`SQLiteStore`)",
        "openai-agents": "openai-agents (`SQLiteSession`)",
        "langgraph": "LangGraph (`AsyncSqliteSaver`)",
    }
    for key in ("steps_40", "steps_20"):
        for name in FRAMEWORKS:
            r = report.get(key, {}).get(name)
            if not r:
                continue
            if "error" in r:
                lines.append(f"| {names[name]} | — | {r['error']} | | | | | | |")
                continue
            lines.append(
                f"| {names[name]} | {r['turns']} | {_cell(r, 'plain', 'median_turn_ms')} | "
                f"{_cell(r, 'sqlite', 'median_turn_ms')} | {_cell(r, 'added_median_turn_ms')} | "
                f"{_cell(r, 'saves_per_turn')} | {_cell(r, 'added_ms_per_save')} | "
                f"{_cell(r, 'added_first_ms')} → {_cell(r, 'added_last_ms')} | "
                f"{_cell(r, 'added_ms_per_turn')} |"
            )
    lines += [
        "",
        "| after a 40-turn run, a fresh process ... | ms |",
        "|---|---|",
    ]
    resume = report.get("resume", {})
    for name, what in (
        ("agentsdk", "agentsdk: `load_state` (the whole RunState, 82 messages)"),
        ("openai-agents", "openai-agents: `SQLiteSession.get_items()`"),
        ("langgraph", "LangGraph: `graph.aget_state(...)`"),
    ):
        r = resume.get(name, {})
        lines.append(
            f"| {what} | {_cell(r, 'read_state_ms') if 'error' not in r else r['error']} |"
        )
    agentsdk = resume.get("agentsdk", {})
    lines.append(
        f"| agentsdk: `resume(run_id)` to its answer (open, check, claim, one more turn) | "
        f"{_cell(agentsdk, 'resume_to_answer_ms')} |"
    )
    return "\n".join(lines)


def update_readme(text: str, machine: str) -> None:
    readme = README.read_text()
    block = f"{README_BEGIN}\n{machine}\n\n{text}\n{README_END}"
    if README_BEGIN in readme:
        head, rest = readme.split(README_BEGIN, 1)
        readme = head + block + rest.split(README_END, 1)[1]
    else:
        readme = readme.rstrip() + "\n\n" + block + "\n"
    README.write_text(readme)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="tiny configuration (smoke test)")
    parser.add_argument("--no-bench-venv", action="store_true", help="run in this interpreter")
    parser.add_argument("--frameworks", nargs="+", default=FRAMEWORKS)
    parser.add_argument("--output", type=Path, default=HERE / "results" / "state.json")
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if sys.path and Path(sys.path[0]).resolve() == HERE:
        sys.path.pop(0)  # benchmarks/mcp.py would shadow the mcp package openai-agents imports
    if args.worker:
        kind, name, config = args.worker
        worker(kind, name, json.loads(config))
        return
    python = sys.executable
    if not args.no_bench_venv:
        sys.path.append(str(HERE))
        from overhead import ensure_bench_venv

        python = str(ensure_bench_venv())
    frameworks = ["agentsdk"] if args.no_bench_venv else args.frameworks
    plan = (
        {"steps_40": (3, 2, 1), "steps_20": (3, 2, 1), "resume": (3, 2)}
        if args.quick
        else {"steps_40": (40, 20, 3), "steps_20": (20, 25, 3), "resume": (40, 10)}
    )
    sys.path.append(str(HERE))
    from _overhead_report import machine, machine_line

    info = machine()
    report: dict[str, Any] = {"plan": plan}
    for key in ("steps_40", "steps_20"):
        turns, repeats, warmup = plan[key]
        names = ["agentsdk"] if key == "steps_40" else frameworks
        report[key] = {
            n: run_worker(
                "steps", n, {"turns": turns, "repeats": repeats, "warmup": warmup}, python
            )
            for n in names
        }
    turns, repeats = plan["resume"]
    report["resume"] = {
        n: run_worker("resume", n, {"turns": turns, "repeats": repeats}, python) for n in frameworks
    }
    text = tables(report)
    print(text)
    if args.quick:
        return
    info["load_average_at_end"] = [round(x, 2) for x in __import__("os").getloadavg()]
    report["machine"] = machine_line(info)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2) + "\n")
    update_readme(text, report["machine"])


if __name__ == "__main__":
    main()
