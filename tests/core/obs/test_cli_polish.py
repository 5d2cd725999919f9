"""CLI polish: every option explains itself, `run --help` names the default model,
`agentsdk tools` wraps instead of cutting, runs report their cost, and the runs
folder in the user cache is pruned."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from agentsdk.artifacts import ArtifactStore, _pruned, default_runs_dir, prune_runs
from agentsdk.cli import build_parser
from agentsdk.cli.run import DEFAULT_MODEL, _wrapped


def every_option(parser: argparse.ArgumentParser, path: str = "agentsdk"):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from every_option(sub, f"{path} {name}")
        elif not isinstance(action, argparse._HelpAction):
            yield path, action


def test_every_option_of_every_command_has_a_description() -> None:
    missing = [
        f"{path} {'/'.join(a.option_strings) or a.dest}"
        for path, a in every_option(build_parser())
        if not (a.help and a.help.strip())
    ]
    assert missing == []


def test_run_help_shows_the_default_model() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "agentsdk.cli", "run", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "100"},
    )
    assert done.returncode == 0
    assert f"(default: {DEFAULT_MODEL}" in " ".join(done.stdout.split())


def test_tool_descriptions_wrap_at_word_boundaries_without_losing_words() -> None:
    description = (
        "Render the scene; each view comes with a short report of what it shows (per "
        "object: share of the frame, box in pixels, colour, cut off by the frame, hidden "
        "behind others) and framing hints, plus the image.\n\nArgs:\n    engine: which one"
    )
    text = _wrapped("render(engine, resolution)", description, width=72)
    lines = text.splitlines()
    assert all(len(line) <= 72 for line in lines) and len(lines) > 2
    first_paragraph = description.split("\n\n")[0]
    assert " ".join(" ".join(lines).replace("render(engine, resolution) - ", "").split()) == (
        " ".join(first_paragraph.split())
    )
    assert "Args" not in text  # only the summary paragraph
    long = _wrapped("f(" + ", ".join(f"argument_{i}" for i in range(12)) + ")", "Do it.", 60)
    assert long.splitlines()[1].strip() == "Do it."  # a long signature gets its own line


def test_the_tools_command_wraps_to_the_terminal() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "agentsdk.cli", "tools"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "72"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    described = [line for line in lines if line.startswith("      ") or ") - " in line]
    assert len(described) > 10 and all(len(line) <= 72 for line in described)
    assert any(line.startswith("      ") for line in lines)  # something was wrapped


def age(path: Path, days: float, now: float) -> None:
    stamp = now - days * 86400
    os.utime(path, (stamp, stamp))


def test_prune_keeps_the_newest_runs_and_drops_old_ones(tmp_path: Path) -> None:
    now = time.time()
    for i in range(6):
        folder = tmp_path / f"run-{i}"
        folder.mkdir()
        (folder / "001-image.png").write_bytes(b"x")
        age(folder, days=1 + i, now=now)  # run-0 newest
    fresh = tmp_path / "run-now"
    fresh.mkdir()  # changed just now: a run in progress elsewhere
    removed = prune_runs(tmp_path, keep_runs=3, keep_days=0, now=now)
    assert sorted(p.name for p in removed) == ["run-2", "run-3", "run-4", "run-5"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run-0", "run-1", "run-now"]
    # by age: more than 1.5 days old goes, whatever the count
    removed = prune_runs(tmp_path, keep_runs=0, keep_days=1.5, now=now)
    assert [p.name for p in removed] == ["run-1"]
    # a folder in its grace hour keeps its place among the newest
    assert prune_runs(tmp_path, keep_runs=1, keep_days=0, now=now) == [tmp_path / "run-0"]
    assert prune_runs(tmp_path / "missing") == []


def test_the_default_runs_folder_is_pruned_on_first_save(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.setenv("AGENTSDK_KEEP_RUNS", "2")
    monkeypatch.setenv("AGENTSDK_KEEP_DAYS", "0")
    default_runs_dir.cache_clear()
    _pruned.clear()
    try:
        root = default_runs_dir()
        assert root.is_relative_to(cache)
        now = time.time()
        for i in range(4):
            (root / f"old-{i}").mkdir(parents=True)
            age(root / f"old-{i}", days=2 + i, now=now)
        ArtifactStore(root / "new-run").save_text("note.txt", "hello")
        assert sorted(p.name for p in root.iterdir()) == ["new-run", "old-0"]
        # a folder the user chose is never pruned
        mine = tmp_path / "mine"
        for i in range(4):
            (mine / f"r{i}").mkdir(parents=True)
            age(mine / f"r{i}", days=50, now=now)
        ArtifactStore(mine / "r9").save_text("note.txt", "hi")
        assert len(list(mine.iterdir())) == 5
    finally:
        default_runs_dir.cache_clear()
        _pruned.clear()


def test_a_bad_limit_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTSDK_KEEP_DAYS", "a month")
    with pytest.raises(ValueError, match="AGENTSDK_KEEP_DAYS='a month' is not a number"):
        prune_runs(tmp_path)


PRICED_PLUGIN = """
from agentsdk import ModelResponse, TextPart, Usage
from agentsdk.testing import ScriptedModel

def connect(model: str):
    usage = Usage(input_tokens=20_000, output_tokens=1_000, requests=1)
    reply = ModelResponse(parts=[TextPart(text="hello there")], usage=usage,
                          model_name="openai:gpt-4o", finish_reason="stop")
    return ScriptedModel([reply], name="openai:gpt-4o")
"""


def test_agentsdk_run_reports_the_cost_and_its_trace_can_be_viewed(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "priced_plugin").mkdir(parents=True)
    (site / "priced_plugin" / "__init__.py").write_text(PRICED_PLUGIN)
    info = site / "priced_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: priced-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[agentsdk.models]\npriced = priced_plugin:connect\n")
    env = {**os.environ, "PYTHONPATH": str(site), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    trace = tmp_path / "run.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "agentsdk.cli", "run", "hi", "--model=priced:x", f"--trace={trace}"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "hello there"
    expected = (20_000 * 2.50 + 1_000 * 10.00) / 1e6  # gpt-4o: $2.50 in, $10 out per M
    assert f"cost: ${expected:.4f}" in done.stderr
    viewed = subprocess.run(
        [sys.executable, "-m", "agentsdk.cli", "trace", "view", str(trace)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert viewed.returncode == 0 and viewed.stdout.strip() == str(trace.with_suffix(".html"))
    assert f"${expected:.4f}" in trace.with_suffix(".html").read_text()
    missing = subprocess.run(
        [sys.executable, "-m", "agentsdk.cli", "trace", "view", str(tmp_path / "nope.jsonl")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert missing.returncode == 1 and "no trace file at" in missing.stderr
