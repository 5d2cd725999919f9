"""benchmarks/replay_as_asked.py reads both kinds of recorded runs (an eval's trajectories,
new_user_prompts.py's results with their traces), replays each call under the conversation
before it, and counts the calls the local model's mends would change and those it would
ask for as the call that makes a part first."""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "replay_as_asked.py"


def _call(name: str, arguments: dict[str, object], id: str) -> dict[str, object]:
    return {"kind": "tool_call", "name": name, "arguments": arguments, "id": id}


def _result(id: str, text: str, error: bool = False) -> dict[str, object]:
    return {"role": "tool", "parts": [{"kind": "tool_result", "call_id": id, "name": "x",
            "is_error": error, "parts": [{"kind": "text", "text": text}]}]}  # fmt: skip


def test_both_kinds_of_record_are_replayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # An eval folder: the light named after the cone loses the name; the cone gets the height
    # asked (three.js's cone is [r, h]); its recolouring by update_object keeps the green
    # asked (session 24); the framing of a part not
    # made yet would be asked for as the call that makes it, after the failure too, but once.
    ask = "Add a green cone named tree, 2 tall, a red box named crate, and export both."
    trajectory = {
        "task_id": "threejs/x",
        "messages": [
            {"role": "user", "parts": [{"kind": "text", "text": ask}]},
            {"role": "assistant", "parts": [_call("add_light", {"kind": "directional", "name": "tree"}, "c1")]},
            _result("c1", 'added directional light "directional".'),
            {"role": "assistant", "parts": [_call("add_object", {"name": "tree", "shape": "cone", "color": "green"}, "c2")]},
            _result("c2", 'added cone "tree".'),
            {"role": "assistant", "parts": [_call("update_object", {"name": "tree", "color": "lightgrey"}, "c3")]},
            _result("c3", 'updated "tree".'),
            {"role": "assistant", "parts": [_call("fit_view", {"names": ["tree", "crate"]}, "c4")]},
            _result("c4", 'no object named "crate" in the scene', error=True),
            {"role": "assistant", "parts": [_call("fit_view", {"names": ["tree"]}, "c5")]},
            _result("c5", "camera moved to frame tree."),
        ],
    }  # fmt: skip
    (tmp_path / "eval" / "trajectories").mkdir(parents=True)
    (tmp_path / "eval" / "trajectories" / "x.json").write_text(json.dumps(trajectory))
    # new_user_prompts.py's results: Godot's add_node without shape or colour gets both, and
    # create_scene's root goes without the sphere's name.
    results = {
        "runs": [
            {"prompt_id": 1, "toolkit": "godot",
             "prompt": "Make a main scene with a red sphere named Ball."}
        ]
    }  # fmt: skip
    (tmp_path / "nup").mkdir()
    events = [
        {"event": "ToolCallStarted", "call_id": "g1", "name": "create_scene",
         "arguments": {"path": "res://main.tscn", "root_name": "Ball"}},
        {"event": "ToolCallFinished", "call_id": "g1", "is_error": False, "text": "created"},
        {"event": "ToolCallStarted", "call_id": "g2", "name": "add_node",
         "arguments": {"scene": "res://main.tscn", "name": "Ball", "type": "MeshInstance"}},
    ]  # fmt: skip
    (tmp_path / "nup" / "p1_on.jsonl").write_text("\n".join(map(json.dumps, events)) + "\n")
    (tmp_path / "nup.json").write_text(json.dumps(results))
    monkeypatch.setattr(sys, "argv", ["replay", str(tmp_path / "eval"), str(tmp_path / "nup.json")])
    runpy.run_path(str(SCRIPT), run_name="__main__")
    out = capsys.readouterr().out
    assert out.strip().splitlines()[-3:] == [
        "5 of 7 calls would change",
        "1 of 7 calls would be asked for as the call that makes a part first",
        "0 of 7 calls would be the answer asked for (a knob turned, the request done)",
    ]
    assert '"shape": "sphere", "color": "red"' in out
    assert '-> {"kind": "directional"}' in out
    assert '"shape": "cone", "color": "green", "size": [1, 2]}' in out
    assert '"color": "lightgrey"}\n -> {"name": "tree", "color": "green"}' in out
    assert '-> {"path": "res://main.tscn"}' in out
    assert 'fit_view {"names": ["tree", "crate"]}\n -> the call that makes crate first' in out
