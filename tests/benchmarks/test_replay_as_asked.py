"""benchmarks/replay_as_asked.py reads both kinds of recorded runs (an eval's trajectories,
new_user_prompts.py's results with their traces) and counts the maker calls the local
model's mends would change."""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "replay_as_asked.py"


def _call(name: str, arguments: dict[str, object]) -> dict[str, object]:
    return {"kind": "tool_call", "name": name, "arguments": arguments, "id": "c1"}


def test_both_kinds_of_record_are_replayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # An eval folder: the light named after the cone loses the name; the cone is left.
    ask = "Add a green cone named tree, 2 tall, and a directional light."
    trajectory = {
        "task_id": "threejs/x",
        "messages": [
            {"role": "user", "parts": [{"kind": "text", "text": ask}]},
            {"role": "assistant", "parts": [_call("add_light", {"kind": "directional", "name": "tree"})]},
            {"role": "assistant", "parts": [_call("add_object", {"name": "tree", "shape": "cone", "color": "green"})]},
        ],
    }  # fmt: skip
    (tmp_path / "eval" / "trajectories").mkdir(parents=True)
    (tmp_path / "eval" / "trajectories" / "x.json").write_text(json.dumps(trajectory))
    # new_user_prompts.py's results: Godot's add_node without shape or colour gets both.
    results = {
        "runs": [{"prompt_id": 1, "prompt": "Make a main scene with a red sphere named Ball."}]
    }
    (tmp_path / "nup").mkdir()
    started = {"event": "ToolCallStarted", "name": "add_node",
               "arguments": {"scene": "res://main.tscn", "name": "Ball", "type": "MeshInstance"}}  # fmt: skip
    (tmp_path / "nup" / "p1_on.jsonl").write_text(json.dumps(started) + "\n")
    (tmp_path / "nup.json").write_text(json.dumps(results))
    monkeypatch.setattr(sys, "argv", ["replay", str(tmp_path / "eval"), str(tmp_path / "nup.json")])
    runpy.run_path(str(SCRIPT), run_name="__main__")
    out = capsys.readouterr().out
    assert out.strip().endswith("2 of 3 maker calls would change")
    assert '"shape": "sphere", "color": "red"' in out
    assert '-> {"kind": "directional"}' in out
