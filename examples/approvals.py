"""Approvals and resuming: an agent cleans a release folder, a person decides.

The agent lists the folder, deletes what it thinks is junk and publishes. Deleting
outside ``build/`` and publishing wait for a person: the run stops, the program
shows the waiting calls, and the run is resumed with a decision for each. The
second pause is resumed by another process (this file started again with
``--resume``), from the SQLite store alone, as a job that waited hours would be.

    uv run python examples/approvals.py                        # offline, scripted
    uv run python examples/approvals.py --model openai:gpt-4.1 # a real planner

Offline, a scripted model plays the planner (its answers follow the transcript,
so the resumed process continues where the first one stopped).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from agentsdk.state import Reject
from agentsdk.testing import FunctionModel

from agentsdk import Agent, ModelRequest, ToolCallPart, ToolContext, Toolkit, tool

INSTRUCTIONS = (
    "You tidy a release folder: list it, delete build leftovers, then publish the release. "
    "If a person rejects a call, respect the reason."
)


class ReleaseFolder(Toolkit):
    """Files of one release, and the act of publishing it."""

    name = "release"

    def __init__(self, root: Path):
        super().__init__()
        self.root = root

    @tool
    def list_files(self) -> list[str]:
        """Every file of the release, relative to its folder."""
        return sorted(str(p.relative_to(self.root)) for p in self.root.rglob("*") if p.is_file())

    @tool(
        needs_approval=lambda args: not str(args["path"]).startswith("build/"),
        side_effects=True,
    )
    def delete_file(self, path: str) -> str:
        """Delete one file of the release.

        Args:
            path: The file, relative to the release folder.
        """
        (self.root / path).unlink()
        return f"deleted {path}"

    @tool(needs_approval=True, side_effects=True)
    def publish(self, version: str, ctx: ToolContext) -> str:
        """Publish the release.

        Args:
            version: The version to publish, like "1.2.0".
        """
        stamp = self.root / "PUBLISHED"
        stamp.write_text(f"{version} {ctx.idempotency_key}\n")  # the key survives resumes
        return f"published {version}"


def scripted(request: ModelRequest) -> str | ToolCallPart | list[ToolCallPart]:
    """The planner offline: the answer for each turn, read off the transcript."""
    turn = sum(m.role == "assistant" for m in request.messages)
    if turn == 0:
        return ToolCallPart(id="list", name="list_files")
    if turn == 1:
        return [
            ToolCallPart(id="rm-obj", name="delete_file", arguments={"path": "build/app.o"}),
            ToolCallPart(id="rm-notes", name="delete_file", arguments={"path": "notes.txt"}),
        ]
    if turn == 2:
        return ToolCallPart(id="pub", name="publish", arguments={"version": "1.2.0"})
    results = [r for m in request.messages for r in m.tool_results]
    return f"Done: {results[-1].text}; kept notes.txt as asked."


def make_agent(root: Path, store: Path, model: str | None) -> Agent:
    planner = model or FunctionModel(scripted, name="scripted-planner")
    return Agent(planner, INSTRUCTIONS, tools=[ReleaseFolder(root)], store=store)


def first_process(root: Path, store: Path, model: str | None) -> None:
    agent = make_agent(root, store, model)
    result = agent.run_sync("Tidy and publish release 1.2.0.", run_id="release-1.2.0")
    while result.status == "awaiting_approval":
        for call in result.pending:
            print(f"waiting: {call.tool}({call.arguments})")
        if any(call.tool == "publish" for call in result.pending):
            print("leaving the publish decision to another process ...")
            break
        decisions = {
            call.call_id: Reject("notes.txt holds the release notes; keep it")
            for call in result.pending
        }
        print("decided: reject (keep notes.txt)")
        result = agent.resume_sync(result.run_id, approvals=decisions)
    # a new process picks the run up from the store alone
    resumed = subprocess.run(
        [sys.executable, __file__, "--root", str(root), "--store", str(store), "--resume"]
        + (["--model", model] if model else []),
        capture_output=True,
        text=True,
        check=True,
    )
    print(resumed.stdout, end="")


def second_process(root: Path, store: Path, model: str | None) -> None:
    import anyio
    from agentsdk.state import SQLiteStore, load_state

    agent = make_agent(root, store, model)
    state = anyio.run(load_state, SQLiteStore(store), "release-1.2.0")
    for call in state.waiting:
        print(f"[process 2] waiting: {call.tool}({call.arguments}) -> approve")
    result = agent.resume_sync("release-1.2.0", approvals={c.call_id: True for c in state.waiting})
    print(f"[process 2] {result.output}")
    print(f"[process 2] files left: {sorted(p.name for p in root.rglob('*') if p.is_file())}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="a model string; offline by default")
    parser.add_argument("--root", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--store", type=Path, default=None, help="the SQLite file for runs")
    parser.add_argument("--resume", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.resume:
        second_process(args.root, args.store, args.model)
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "release"
        (root / "build").mkdir(parents=True)
        (root / "build" / "app.o").write_bytes(b"\x7fELF")
        (root / "notes.txt").write_text("What is new in 1.2.0\n")
        (root / "app.tar.gz").write_bytes(b"release")
        first_process(root, args.store or Path(tmp) / "runs.db", args.model)


if __name__ == "__main__":
    main()
