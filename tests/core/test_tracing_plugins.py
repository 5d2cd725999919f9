"""JSONL traces with secrets redacted, and entry-point plugin discovery."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from agentsdk.testing import ScriptedModel
from agentsdk.tracing import REDACTED, read_trace

from agentsdk import Agent, PluginNotFound, ToolCallPart, plugins, tool

pytestmark = pytest.mark.anyio


async def test_trace_round_trip_redacts_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-live-0123456789abcdefXYZ"
    monkeypatch.setenv("ACME_API_KEY", "acme-key-99887766")

    @tool
    def login(api_key: str, user: str) -> str:
        """Log in."""
        return f"logged in {user} with acme-key-99887766"

    model = ScriptedModel(
        [ToolCallPart(name="login", arguments={"api_key": secret, "user": "ann"}), "ok"]
    )
    trace = tmp_path / "run.jsonl"
    await Agent(model, tools=[login], trace=trace).run(f"use {secret}")
    raw = trace.read_text()
    assert secret not in raw and "acme-key-99887766" not in raw
    events = read_trace(trace)
    names = [e["event"] for e in events]
    assert names[0] == "RunStarted" and names[-1] == "RunFinished"
    assert "ToolCallStarted" in names and "TurnFinished" in names
    started = next(e for e in events if e["event"] == "ToolCallStarted")
    assert started["arguments"] == {"api_key": REDACTED, "user": "ann"}
    assert events[-1]["output"] == "ok" and events[-1]["usage"]["requests"] == 2


def _install_fake_distribution(root: Path) -> None:
    """Lay out a package and its dist-info exactly as an installer would."""
    pkg = root / "demo_plugin_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "from agentsdk import ToolCallPart, Toolkit, tool\n"
        "from agentsdk.testing import ScriptedModel\n"
        "class EchoToolkit(Toolkit):\n"
        "    name = 'echo'\n"
        "    @tool\n"
        "    def echo(self, text: str) -> str:\n"
        "        '''Repeat the text.'''\n"
        "        return text\n"
        "def connect(model: str):\n"
        "    steps = [ToolCallPart(name='echo', arguments={'text': model}), 'echoed']\n"
        "    return ScriptedModel(steps, name=model)\n"
    )
    info = root / "demo_plugin_pkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: demo-plugin-pkg\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[agentsdk.toolkits]\necho = demo_plugin_pkg:EchoToolkit\n\n[agentsdk.models]\nechomodel = demo_plugin_pkg:connect\n"
    )


async def test_plugins_are_discovered_from_entry_points(tmp_path: Path) -> None:
    _install_fake_distribution(tmp_path)
    sys.path.insert(0, str(tmp_path))
    plugins.refresh()
    try:
        assert "echo" in plugins.toolkit_names() and "echomodel" in plugins.model_schemes()
        result = await Agent("echomodel:hello", tools=["echo"]).run("go")
        assert result.output == "echoed"
        assert result.messages[-2].tool_results[0].text == "echomodel:hello"
        cli_done = subprocess.run(
            [
                sys.executable,
                "-m",
                "agentsdk.cli",
                "run",
                "go",
                "--model",
                "echomodel:hi",
                "--tools",
                "echo",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "PYTHONPATH": str(tmp_path)},
        )
        assert cli_done.returncode == 0, cli_done.stderr
        assert cli_done.stdout.strip() == "echoed"
        assert "turn 1: asking echomodel:hi" in cli_done.stderr
        assert '→ echo({"text": "echomodel:hi"})' in cli_done.stderr
        assert "← echo ok in" in cli_done.stderr
        with pytest.raises(PluginNotFound, match=r"no toolkit named 'nothere'.*installed: .*echo"):
            Agent("echomodel:x", tools=["nothere"])
        with pytest.raises(PluginNotFound, match="no model connector handles 'nosuch'"):
            await Agent("nosuch:model").run("x")
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("demo_plugin_pkg", None)
        plugins.refresh()
