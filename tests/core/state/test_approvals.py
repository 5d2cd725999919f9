"""Tool calls that wait for a person: approve, reject (the model is told), edit;
rules per call; raise instead of return; toolkit, schema and MCP tools."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from agentsdk.events import RunPaused, ToolCallStarted
from agentsdk.state import (
    ApprovalRequired,
    Edit,
    Reject,
    RunState,
    load_state,
    require_approval,
)
from agentsdk.testing import ScriptedModel

from agentsdk import Agent, Tool, ToolCallPart, Toolkit, tool

pytestmark = pytest.mark.anyio
MCP_BIN = Path(__file__).resolve().parents[2] / "mcp" / ".venv" / "bin"


class Ledger:
    """A real side effect the tests can look at."""

    def __init__(self) -> None:
        self.moves: list[tuple[str, int]] = []


def make_tools(ledger: Ledger) -> list[Tool]:
    @tool(needs_approval=lambda args: args["cents"] > 1000, side_effects=True)
    def transfer(to: str, cents: int) -> str:
        """Send money to someone.

        Args:
            to: Who gets it.
            cents: How much, in cents.
        """
        ledger.moves.append((to, cents))
        return f"sent {cents} to {to}"

    @tool(needs_approval=True)
    def close_account(reason: str) -> str:
        """Close the account."""
        ledger.moves.append(("closed", 0))
        return "closed"

    return [transfer, close_account]


def pay(cents: int, id: str = "p1", to: str = "bob") -> ToolCallPart:
    return ToolCallPart(id=id, name="transfer", arguments={"to": to, "cents": cents})


async def test_a_small_payment_runs_a_large_one_waits_and_runs_once_approved(
    tmp_path: Path,
) -> None:
    ledger = Ledger()
    model = ScriptedModel([pay(500, "small"), pay(5000, "large"), "Paid both."])
    agent = Agent(model, tools=make_tools(ledger), store=tmp_path / "runs.db")

    paused = await agent.run("pay bob twice", run_id="pay")

    assert paused.status == "awaiting_approval" and paused.output is None
    assert ledger.moves == [("bob", 500)]  # the rule let the small one through
    assert [(p.call_id, p.tool, p.arguments) for p in paused.pending] == [
        ("large", "transfer", {"to": "bob", "cents": 5000})
    ]
    assert isinstance(paused.state, RunState) and paused.state.status == "awaiting_approval"
    assert (await load_state(agent.store, "pay")).waiting == paused.pending  # type: ignore[arg-type]

    done = await agent.resume("pay", approvals={"large": True})

    assert done.status == "finished" and done.output == "Paid both."
    assert ledger.moves == [("bob", 500), ("bob", 5000)]
    assert done.tool_calls == ["transfer", "transfer"] and done.turns == 3


async def test_a_rejected_call_does_not_run_and_the_model_is_told_why() -> None:
    ledger = Ledger()
    model = ScriptedModel([pay(9000), "I did not send it."])
    agent = Agent(model, tools=make_tools(ledger))  # no store: the state comes back in memory

    paused = await agent.run("pay")
    result = await agent.resume(paused.state, approvals={"p1": Reject("over the daily limit")})  # type: ignore[arg-type]

    assert ledger.moves == []
    seen = model.requests[-1].messages[-1].tool_results[0]
    assert seen.is_error and "rejected" in seen.text and "over the daily limit" in seen.text
    assert result.output == "I did not send it."


async def test_edited_arguments_run_and_the_transcript_shows_them() -> None:
    ledger = Ledger()
    model = ScriptedModel([pay(9000, to="mallory"), "Sent."])
    events: list[object] = []
    agent = Agent(model, tools=make_tools(ledger))

    paused = await agent.run("pay")
    await agent.resume(
        paused.state,  # type: ignore[arg-type]
        approvals={"p1": Edit({"to": "bob", "cents": 900})},
        on_event=events.append,
    )

    assert ledger.moves == [("bob", 900)]
    call = model.requests[-1].messages[-2].tool_calls[0]
    assert call.id == "p1" and call.arguments == {"to": "bob", "cents": 900}
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert [e.arguments for e in started] == [{"to": "bob", "cents": 900}]


async def test_invalid_arguments_get_their_error_without_asking_anyone() -> None:
    ledger = Ledger()
    bad = ToolCallPart(id="b", name="close_account", arguments={"why": "x"})
    model = ScriptedModel([bad, "ok"])
    result = await Agent(model, tools=make_tools(ledger)).run("close it")
    assert result.status == "finished"
    assert "Invalid arguments" in model.requests[-1].messages[-1].tool_results[0].text


async def test_raise_mode_gives_the_pending_calls_and_the_state() -> None:
    model = ScriptedModel([ToolCallPart(id="c", name="close_account", arguments={"reason": "r"})])
    agent = Agent(model, tools=make_tools(Ledger()), on_approval="raise")
    with pytest.raises(ApprovalRequired, match=r"close_account\(c\)") as caught:
        await agent.run("close")
    assert [p.call_id for p in caught.value.pending] == ["c"]
    assert caught.value.state is not None and caught.value.state.waiting[0].tool == "close_account"


async def test_a_streamed_run_ends_with_run_paused() -> None:
    model = ScriptedModel([ToolCallPart(id="c", name="close_account", arguments={"reason": "r"})])
    agent = Agent(model, tools=make_tools(Ledger()))
    events = [e async for e in agent.stream("close")]
    assert isinstance(events[-1], RunPaused)
    assert [c.call_id for c in events[-1].calls] == ["c"]
    assert events[-1].result is not None and events[-1].result.status == "awaiting_approval"


def test_a_state_resumes_in_another_process_from_its_json(tmp_path: Path) -> None:
    """No store: the paused state is plain JSON another process can pick up."""
    model = ScriptedModel([pay(5000)])
    agent = Agent(model, tools=make_tools(Ledger()))
    paused = agent.run_sync("pay")
    assert paused.state is not None
    (tmp_path / "state.json").write_text(paused.state.model_dump_json())
    script = f"""
import sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
from test_approvals import Ledger, make_tools
from agentsdk import Agent
from agentsdk.state import RunState
from agentsdk.testing import ScriptedModel
ledger = Ledger()
state = RunState.model_validate_json(open({str(tmp_path / "state.json")!r}).read())
result = Agent(ScriptedModel(["Sent."]), tools=make_tools(ledger)).resume_sync(
    state, approvals={{"p1": True}})
print(result.output, ledger.moves)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Sent. [('bob', 5000)]"


class Files(Toolkit):
    """A toolkit with one harmless and one destructive tool."""

    name = "files"

    @tool
    def read(self, path: str) -> str:
        """Read a file."""
        return Path(path).read_text()

    @tool
    def remove(self, path: str) -> str:
        """Delete a file."""
        Path(path).unlink()
        return "removed"


async def test_require_approval_marks_chosen_tools_of_a_toolkit(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("keep me")
    model = ScriptedModel(
        [
            ToolCallPart(id="r", name="read", arguments={"path": str(target)}),
            ToolCallPart(id="d", name="remove", arguments={"path": str(target)}),
            "Kept it.",
        ]
    )
    agent = Agent(model, tools=[require_approval(Files(), "remove")])
    paused = await agent.run("clean up")
    assert [p.tool for p in paused.pending] == ["remove"] and target.exists()
    await agent.resume(paused.state, approvals={"d": Reject("no")})  # type: ignore[arg-type]
    assert target.read_text() == "keep me"
    with pytest.raises(ValueError, match="has no tool 'rm'"):
        require_approval(Files(), "rm")


async def test_a_schema_tool_takes_the_flag() -> None:
    calls: list[dict[str, object]] = []
    launch = Tool.from_schema(
        "launch",
        "Launch the rocket.",
        {"type": "object", "properties": {"when": {"type": "string"}}, "required": ["when"]},
        calls.append,
        needs_approval=True,
    )
    model = ScriptedModel([ToolCallPart(id="l", name="launch", arguments={"when": "now"}), "ok"])
    agent = Agent(model, tools=[launch])
    paused = await agent.run("go")
    assert paused.pending[0].tool == "launch" and calls == []
    await agent.resume(paused.state, approvals={"l": True})  # type: ignore[arg-type]
    assert calls == [{"when": "now"}]


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=T", "-c", "user.email=t@example.com", *args],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


async def test_mcp_git_commit_waits_for_approval(tmp_path: Path) -> None:
    """mcp-server-git (PyPI) for real: the commit happens only once approved."""
    from agentsdk.mcp import MCPToolkit

    server = MCP_BIN / "mcp-server-git"
    if not server.exists():
        pytest.fail(f"{server} is missing: run ./scripts/setup")
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "a.txt").write_text("one\n")
    _git(repo, "add", "a.txt")
    _git(repo, "commit", "-q", "-m", "first")
    (repo / "a.txt").write_text("two\n")
    git = MCPToolkit.stdio(str(server), ["--repository", str(repo)])
    args = {"repo_path": str(repo)}
    model = ScriptedModel(
        [
            ToolCallPart(id="add", name="git_add", arguments={**args, "files": ["a.txt"]}),
            ToolCallPart(id="commit", name="git_commit", arguments={**args, "message": "second"}),
            "Committed.",
        ]
    )
    agent = Agent(model, tools=[require_approval(git, "git_commit")], store=tmp_path / "runs.db")

    paused = await agent.run("commit my change", run_id="git")
    assert [(p.tool, p.arguments["message"]) for p in paused.pending] == [("git_commit", "second")]
    assert _git(repo, "log", "--format=%s") == "first\n"  # staged, not committed
    assert _git(repo, "diff", "--cached", "--name-only") == "a.txt\n"

    done = await agent.resume("git", approvals={"commit": True})

    assert done.output == "Committed."
    assert _git(repo, "log", "--format=%s") == "second\nfirst\n"


async def test_an_mcp_toolkit_takes_needs_approval_for_named_server_tools() -> None:
    """mcp-server-time (PyPI) for real, the flag given to MCPToolkit itself."""
    from agentsdk.mcp import MCPToolkit

    server = MCP_BIN / "mcp-server-time"
    if not server.exists():
        pytest.fail(f"{server} is missing: run ./scripts/setup")
    clock = MCPToolkit.stdio(str(server), needs_approval=["get_current_time"])
    model = ScriptedModel(
        [
            ToolCallPart(id="now", name="get_current_time", arguments={"timezone": "UTC"}),
            "No time for you.",
        ]
    )
    agent = Agent(model, tools=[clock])
    paused = await agent.run("what time is it?")
    assert [p.tool for p in paused.pending] == ["get_current_time"]
    assert paused.state is not None and "get_current_time" in paused.state.tools
    done = await agent.resume(paused.state, approvals={"now": Reject("no clocks today")})
    told = model.requests[-1].messages[-1].tool_results[0]
    assert told.is_error and "no clocks today" in told.text and done.output == "No time for you."
