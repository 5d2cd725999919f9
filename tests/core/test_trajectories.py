"""Training samples from eval trajectories, end to end through ``evaluate``: a model whose
token ids are characters (so the test can decode them itself) plays multi-turn tasks with
``record_tokens``; the export merges turns whose prompts extend each other, masks what the
environment said, splits where the template re-rendered the history, and skips what has
no verdict or no ids, saying why."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from agentsdk.cli import main as cli
from agentsdk.models import ModelRequest, ModelResponse, TokenTrace
from agentsdk.tasks import Check, Suite, Task, ToolkitSpec, World, call
from agentsdk.tasks.runner import EvalResults, evaluate
from agentsdk.tasks.trajectories import TrainingSample, export_trajectories
from agentsdk.testing import FunctionModel

from agentsdk import ModelSettings, TextPart, ToolCallPart, Usage

sys.path.insert(0, str(Path(__file__).parent))
from eval_fixture import Tally, suite

pytestmark = pytest.mark.anyio

END = "\x03"  # the toy model's end-of-turn token, sampled like any other id


def ids(text: str) -> list[int]:
    return [ord(c) for c in text]


def text(token_ids: list[int]) -> str:
    return "".join(chr(i) for i in token_ids)


def _content(message: Any, rerender: bool) -> str:
    if message.role == "assistant" and message.tool_calls:
        (c,) = message.tool_calls
        # a template that re-serialises past calls (indent) no longer matches what was sampled
        return json.dumps(
            {"name": c.name, "arguments": c.arguments}, indent=1 if rerender else None
        )
    if message.role == "tool":
        return message.tool_results[0].text
    return message.text


def render(request: ModelRequest, rerender: bool = False) -> str:
    """A toy chat template: `<role>content END\\n` per message, then `<assistant>`."""
    body = "".join(f"<{m.role}>{_content(m, rerender)}{END}\n" for m in request.messages)
    return body + "<assistant>"


def char_model(*, rerender: bool = False, marks_wanted: int | None = None) -> FunctionModel:
    """Marks until the prompt's number is reached (or ``marks_wanted``), then answers;
    reports the ids of what it saw and sampled when asked to record tokens."""

    def play(request: ModelRequest) -> ModelResponse:
        prompt = next(m.text for m in request.messages if m.role == "user")
        wanted = marks_wanted or int(prompt.split("exactly ")[1].split()[0])
        made = sum(1 for m in request.messages if m.role == "tool")
        part: TextPart | ToolCallPart
        if made < wanted:
            part = ToolCallPart(name="mark", arguments={})
            sampled = json.dumps({"name": "mark", "arguments": {}})
        else:
            sampled = f"Made {made} marks."
            part = TextPart(text=sampled)
        seen, out = ids(render(request, rerender)), ids(sampled + END)
        trace = None
        if request.settings.record_tokens:
            trace = TokenTrace(
                prompt_ids=seen, response_ids=out, response_logprobs=[-0.5] * len(out)
            )
        return ModelResponse(
            parts=[part],
            usage=Usage(input_tokens=len(seen), output_tokens=len(out), requests=1),
            model_name="chars",
            token_trace=trace,
        )

    return FunctionModel(play, name="chars")


def spans(sample: TrainingSample) -> list[tuple[int, str]]:
    """The response as (mask, decoded text) runs."""
    out: list[tuple[int, str]] = []
    for mask, token in zip(sample.response_mask, sample.response_ids, strict=True):
        if out and out[-1][0] == mask:
            out[-1] = (mask, out[-1][1] + chr(token))
        else:
            out.append((mask, chr(token)))
    return out


def read(path: Path) -> list[TrainingSample]:
    return [TrainingSample.model_validate_json(line) for line in path.read_text().splitlines()]


RECORD = ModelSettings(record_tokens=True)
CALL = json.dumps({"name": "mark", "arguments": {}})


async def test_a_multi_turn_rollout_is_one_sample_with_the_tool_outputs_masked(
    tmp_path: Path,
) -> None:
    await evaluate(suite(tasks=2), char_model(), out=tmp_path / "r", settings=RECORD)
    report = export_trajectories(tmp_path / "r", tmp_path / "train.jsonl")
    assert (report.samples, report.rollouts, report.skipped) == (2, 2, {})
    two = next(s for s in read(tmp_path / "train.jsonl") if s.task_id == "tally/marks-2")

    system = "Use the mark tool."
    assert text(two.prompt_ids) == (
        f"<system>{system}{END}\n<user>Make exactly 2 marks.{END}\n<assistant>"
    )
    assert spans(two) == [
        (1, CALL + END),
        (0, f"\n<tool>1 mark(s){END}\n<assistant>"),
        (1, CALL + END),
        (0, f"\n<tool>2 mark(s){END}\n<assistant>"),
        (1, "Made 2 marks." + END),
    ]
    assert two.response_logprobs == [-0.5 if m else 0.0 for m in two.response_mask]
    assert (two.turns, two.num_turns, two.parts, two.split) == ([1, 2, 3], 6, 1, "")
    (rollout,) = [r for r in EvalResults(tmp_path / "r").load() if r.task_id == "tally/marks-2"]
    assert two.reward == rollout.score == 1.0 and two.passed and two.status == "passed"
    # prompt + response is exactly what the engine held after the last turn
    trajectory = json.loads(EvalResults(tmp_path / "r").trajectory_path(rollout).read_text())
    last = trajectory["turns"][-1]
    assert two.prompt_ids + two.response_ids == last["prompt_ids"] + last["response_ids"]


async def test_the_reward_is_the_verdict_score_of_the_world(tmp_path: Path) -> None:
    def marks(world: World) -> int:
        toolkit = world.toolkit("tally")
        assert isinstance(toolkit, Tally)
        return toolkit.marks

    task = Task(
        id="half/three-marks",
        prompt="Make exactly 3 marks.",
        toolkits=[ToolkitSpec("tally", factory=Tally)],
        checks=[
            Check("some mark", lambda w: marks(w) >= 1, weight=3),
            Check("three marks", lambda w: marks(w) == 3),
        ],
        reference=[call("mark"), call("mark"), call("mark"), "Made 3 marks."],
    )
    model = char_model(marks_wanted=2)  # stops one mark short
    await evaluate(Suite("half", [task]), model, out=tmp_path / "h", settings=RECORD)
    export_trajectories(tmp_path / "h", tmp_path / "h.jsonl")
    (sample,) = read(tmp_path / "h.jsonl")
    assert sample.reward == pytest.approx(3 / 4) and not sample.passed
    assert sample.status == "failed" and sample.turns == [1, 2, 3]


async def test_a_re_rendered_history_splits_the_rollout_and_says_why(tmp_path: Path) -> None:
    await evaluate(suite(tasks=2), char_model(rerender=True), out=tmp_path / "r", settings=RECORD)
    report = export_trajectories(tmp_path / "r", tmp_path / "split.jsonl")
    parts = [s for s in read(tmp_path / "split.jsonl") if s.task_id == "tally/marks-2"]
    assert report.split_rollouts == 2 and report.samples == 2 + 3  # every turn re-rendered
    assert [p.turns for p in parts] == [[1], [2], [3]]
    assert [(p.part, p.parts) for p in parts] == [(0, 3), (1, 3), (2, 3)]
    assert "turn 2's prompt does not start with turn 1's prompt + response" in parts[0].split
    assert "re-rendered the history" in parts[0].split and parts[0].split == parts[2].split
    assert all(p.response_mask == [1] * len(p.response_ids) for p in parts)
    assert text(parts[2].response_ids) == "Made 2 marks." + END
    assert text(parts[1].prompt_ids).endswith(f"<tool>1 mark(s){END}\n<assistant>")
    assert all(p.reward == 1.0 for p in parts)


async def test_per_turn_samples_are_the_engines_turns(tmp_path: Path) -> None:
    await evaluate(suite(tasks=2), char_model(), out=tmp_path / "r", settings=RECORD)
    export_trajectories(tmp_path / "r", tmp_path / "turns.jsonl", per_turn=True)
    samples = read(tmp_path / "turns.jsonl")
    trajectories = {
        r.task_id: json.loads(EvalResults(tmp_path / "r").trajectory_path(r).read_text())
        for r in EvalResults(tmp_path / "r").load()
    }
    assert len(samples) == 2 + 3
    for s in samples:
        (turn,) = [t for t in trajectories[s.task_id]["turns"] if t["turn"] == s.turns[0]]
        assert (s.prompt_ids, s.response_ids) == (turn["prompt_ids"], turn["response_ids"])
        assert s.layout == "per-turn" and s.num_turns == 2 and set(s.response_mask) == {1}


async def test_what_cannot_be_trained_on_is_skipped_with_a_reason(tmp_path: Path) -> None:
    def no_scene(world: World) -> None:
        raise FileNotFoundError("the starting scene is missing")

    tasks = [*suite(tasks=1).tasks]
    broken = Task(
        id="tally/broken",
        prompt="Make exactly 1 marks.",
        toolkits=[ToolkitSpec("tally", factory=Tally)],
        checks=[Check("any", lambda w: True)],
        setup=no_scene,
        reference=["x"],
    )
    await evaluate(Suite("tally", [*tasks, broken]), char_model(), out=tmp_path / "plain")
    report = export_trajectories(tmp_path / "plain", tmp_path / "none.jsonl")
    assert report.samples == 0 and (tmp_path / "none.jsonl").read_text() == ""
    assert report.skipped == {
        "broken task (no verdict)": 1,
        "no token ids (run the eval with --record-tokens on the embedded engine)": 1,
    }
    assert cli(["export-trajectories", str(tmp_path / "plain"), str(tmp_path / "x.jsonl")]) == 1
    with pytest.raises(FileNotFoundError, match="the results folder of an `agentsdk eval` run"):
        export_trajectories(tmp_path / "nowhere", tmp_path / "y.jsonl")


async def test_the_cli_writes_samples_that_match_the_published_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    await evaluate(suite(tasks=3), char_model(), out=tmp_path / "r", settings=RECORD)
    out = tmp_path / "cli.jsonl"
    assert cli(["export-trajectories", str(tmp_path / "r"), str(out), "--status", "passed"]) == 0
    assert capsys.readouterr().out.startswith(f"3 training samples from 3 rollouts -> {out}")
    schema = TrainingSample.model_json_schema()
    records = [json.loads(line) for line in out.read_text().splitlines()]
    for record in records:
        jsonschema.validate(record, schema)
    assert {r["schema_version"] for r in records} == {"agentsdk.training/1"}
    with pytest.raises(ValueError, match="response_mask has 1 ids"):
        TrainingSample.model_validate({**records[0], "response_mask": [1]})
