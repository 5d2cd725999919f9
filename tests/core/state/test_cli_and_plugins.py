"""``agentsdk run`` asking y/n/edit for real (a subprocess, stdin answers), and a
store plugin found through the ``agentsdk.stores`` entry points."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from agentsdk.state import open_store
from agentsdk.testing import ScriptedModel

from agentsdk import Agent, ToolCallPart, plugins

PACKAGE = '''
import json, os
from agentsdk import Toolkit, ToolCallPart, tool
from agentsdk.state import Checkpoint, StoredCheckpoint, RunInfo, StateConflict, CorruptState
from agentsdk.testing import FunctionModel


class Bank(Toolkit):
    name = "bank"

    @tool(side_effects=True)
    def transfer(self, to: str, cents: int) -> str:
        """Send money."""
        with open(os.environ["BANK_LEDGER"], "a") as f:
            f.write(f"{to} {cents}\\n")
        return f"sent {cents} to {to}"


def connect(model):
    def step(request):
        if sum(m.role == "assistant" for m in request.messages) == 0:
            return ToolCallPart(id="pay1", name="transfer", arguments={"to": "ann", "cents": 700})
        return "Result: " + request.messages[-1].tool_results[0].text
    return FunctionModel(step, name=model)


class MemoryStore:
    """A store that keeps everything in dicts: the loop never knows the difference."""

    def __init__(self, url):
        self.url = url
        self.checkpoints = {}
        self.threads = {}
        self.files = {}

    async def save(self, cp):
        have = max(self.checkpoints.get(cp.key, {0: None}))
        if have != cp.revision - 1:
            raise StateConflict(f"{cp.key} is at {have}")
        thread = self.threads.setdefault(cp.thread, {})
        thread.update(cp.messages)
        self.checkpoints.setdefault(cp.key, {})[cp.revision] = (cp, dict(thread))

    async def load(self, key, revision=None):
        if key not in self.checkpoints:
            return None
        latest = max(self.checkpoints[key])
        cp, thread = self.checkpoints[key][revision or latest]
        messages = [thread[i] for i in range(cp.length)]
        return StoredCheckpoint(key, cp.revision, latest, cp.status, cp.head, cp.thread, messages, 0.0)

    async def scan(self, *, prefix="", session=None):
        return [RunInfo(k, max(v), v[max(v)][0].status, v[max(v)][0].session, v[max(v)][0].length, 0, 0)
                for k, v in self.checkpoints.items() if k.startswith(prefix)
                and (session is None or v[max(v)][0].session == session)]

    async def delete(self, key):
        self.checkpoints.pop(key, None)
        self.threads.pop(key, None)

    async def put_file(self, data, suffix):
        name = f"{len(self.files)}.{suffix}"
        self.files[name] = data
        return name

    async def get_file(self, name):
        return self.files[name]

    async def aclose(self):
        pass


def open_store(url):
    return MemoryStore(url)
'''


@pytest.fixture
def plugin(tmp_path: Path) -> Iterator[Path]:
    """A package and its dist-info laid out as an installer would."""
    root = tmp_path / "site"
    (root / "bank_plugin").mkdir(parents=True)
    (root / "bank_plugin" / "__init__.py").write_text(PACKAGE)
    info = root / "bank_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: bank-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[agentsdk.toolkits]\nbank = bank_plugin:Bank\n\n"
        "[agentsdk.models]\nbankmodel = bank_plugin:connect\n\n"
        "[agentsdk.stores]\nmemo = bank_plugin:open_store\n"
    )
    sys.path.insert(0, str(root))
    plugins.refresh()
    try:
        yield root
    finally:
        sys.path.remove(str(root))
        sys.modules.pop("bank_plugin", None)
        plugins.refresh()


def agentsdk_run(
    site: Path, ledger: Path, answers: str, *args: str
) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "agentsdk.cli", "run", *args]
    command += ["--model", "bankmodel:x", "--tools", "bank", "--ask", "transfer"]
    env = {**os.environ, "PYTHONPATH": str(site), "BANK_LEDGER": str(ledger)}
    return subprocess.run(
        command, input=answers, capture_output=True, text=True, env=env, timeout=120
    )


def test_cli_yes_runs_the_call(plugin: Path, tmp_path: Path) -> None:
    ledger = tmp_path / "ledger"
    done = agentsdk_run(plugin, ledger, "y\n", "pay ann")
    assert done.returncode == 0, done.stderr
    assert 'approve transfer({"to": "ann", "cents": 700})? [y]es / [n]o / [e]dit:' in done.stderr
    assert done.stdout.strip() == "Result: sent 700 to ann"
    assert ledger.read_text() == "ann 700\n"


def test_cli_no_tells_the_model_the_reason(plugin: Path, tmp_path: Path) -> None:
    ledger = tmp_path / "ledger"
    done = agentsdk_run(plugin, ledger, "maybe\nn\nann was paid yesterday\n", "pay ann")
    assert done.returncode == 0, done.stderr
    assert "please answer y, n or e" in done.stderr
    assert "rejected" in done.stdout and "ann was paid yesterday" in done.stdout
    assert not ledger.exists()


def test_cli_edit_reads_json_arguments(plugin: Path, tmp_path: Path) -> None:
    ledger = tmp_path / "ledger"
    done = agentsdk_run(plugin, ledger, 'e\n{broken\n{"to": "bob", "cents": 70}\n', "pay ann")
    assert done.returncode == 0, done.stderr
    assert "not JSON" in done.stderr
    assert ledger.read_text() == "bob 70\n"
    assert done.stdout.strip() == "Result: sent 70 to bob"


def test_cli_without_answers_leaves_the_run_paused_to_resume_later(
    plugin: Path, tmp_path: Path
) -> None:
    ledger, db = tmp_path / "ledger", tmp_path / "runs.db"
    paused = agentsdk_run(plugin, ledger, "", "pay ann", "--store", str(db), "--run-id", "pay")
    assert paused.returncode == 3, paused.stderr
    assert "resume it with: agentsdk run --resume pay --store" in paused.stderr
    assert not ledger.exists()

    resumed = agentsdk_run(plugin, ledger, "y\n", "--resume", "pay", "--store", str(db))
    assert resumed.returncode == 0, resumed.stderr
    assert ledger.read_text() == "ann 700\n"
    assert resumed.stdout.strip() == "Result: sent 700 to ann"


@pytest.mark.anyio
async def test_a_store_plugin_serves_runs_approvals_and_sessions(plugin: Path) -> None:
    store = open_store("memo://anything")
    assert type(store).__name__ == "MemoryStore"
    from bank_plugin import Bank

    model = ScriptedModel(
        [ToolCallPart(id="t", name="transfer", arguments={"to": "ann", "cents": 1}), "ok"]
    )
    os.environ["BANK_LEDGER"] = str(plugin / "ledger")
    try:
        from agentsdk.state import require_approval

        agent = Agent(model, tools=[require_approval(Bank(), "transfer")], store=store)
        paused = await agent.session("s").run("pay", run_id="r")
        assert paused.status == "awaiting_approval"
        done = await agent.resume("r", approvals={"t": True})
        assert done.output == "ok" and (plugin / "ledger").read_text() == "ann 1\n"
        assert len(await agent.session("s").messages()) == len(done.messages)
    finally:
        del os.environ["BANK_LEDGER"]
    with pytest.raises(ValueError, match=r"no run store plugin handles 'nosuch'.*memo"):
        open_store("nosuch://x")
