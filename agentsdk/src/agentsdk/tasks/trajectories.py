"""Training samples from an eval's trajectories: token ids as the engine produced them,
a mask that keeps the model's own tokens apart from what the environment said, and the
verifier's score as the reward.

An eval run with ``ModelSettings(record_tokens=True)`` on the embedded engine keeps, per
turn, the prompt ids the engine evaluated and the ids (and log-probabilities) it sampled
(``TokenTrace``). A multi-turn rollout becomes one sample when every turn's prompt starts
with the previous turn's prompt and response: what lies between is the environment (tool
results, the chat template's glue), masked 0. Where that does not hold (the template
re-rendered the history: a reasoning block dropped, a call re-serialised), the rollout
is split there and each part says why (``split``). ``tasks/README.md`` documents the
schema and how it maps onto verl's and the verifiers library's rollouts.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, Field, model_validator

from .rollout import Rollout

__all__ = [
    "TRAINING_SCHEMA",
    "ExportReport",
    "TrainingSample",
    "export_trajectories",
    "training_samples",
]

TRAINING_SCHEMA: Final = "agentsdk.training/1"

Status = Literal["passed", "failed", "error"]


class TrainingSample(BaseModel):
    """One sequence to train on: a prompt and a response made of the model's turns, with
    what the environment added between them masked out."""

    schema_version: Literal["agentsdk.training/1"] = TRAINING_SCHEMA
    task_id: str
    sample: int
    """Which sample of the task (``--k``)."""
    model: str
    status: Status
    reward: float
    """The verifier's score of the whole rollout, in [0, 1] (the same for every part)."""
    passed: bool
    turns: list[int]
    """The model turns this sample covers (1-based, as in the trajectory)."""
    prompt_ids: list[int]
    """What the engine evaluated before the first covered turn."""
    response_ids: list[int]
    """Every covered turn's sampled ids, with the environment's ids between them."""
    response_mask: list[int]
    """1 for an id the model sampled, 0 for one the environment added."""
    response_logprobs: list[float] | None = None
    """Per response id: the engine's log-probability of a sampled id, 0.0 under mask 0;
    ``None`` when the engine gave none for some covered turn."""
    num_turns: int
    """verl's count: the prompt, each assistant turn and each environment turn."""
    truncated: bool = False
    """A covered turn stopped at the output-token limit."""
    layout: Literal["merged", "per-turn"] = "merged"
    part: int = 0
    """0-based index of this sample among the rollout's parts."""
    parts: int = 1
    split: str = ""
    """Why the rollout is in several parts (empty when it is one)."""

    @model_validator(mode="after")
    def _consistent(self) -> TrainingSample:
        n = len(self.response_ids)
        if len(self.response_mask) != n:
            raise ValueError(f"response_mask has {len(self.response_mask)} ids, response {n}")
        if self.response_logprobs is not None and len(self.response_logprobs) != n:
            raise ValueError(f"response_logprobs has {len(self.response_logprobs)} for {n} ids")
        if set(self.response_mask) - {0, 1}:
            raise ValueError("response_mask holds values other than 0 and 1")
        if n and (self.response_mask[0] != 1 or self.response_mask[-1] != 1):
            raise ValueError("a response starts and ends with ids the model sampled")
        if not self.prompt_ids or not 0 <= self.reward <= 1 or not 0 <= self.part < self.parts:
            raise ValueError("a sample needs prompt ids, a reward in [0, 1] and part < parts")
        return self


class ExportReport(BaseModel):
    """What an export wrote and what it left out."""

    path: str
    samples: int
    rollouts: int
    """Rollouts that gave at least one sample."""
    split_rollouts: int = 0
    """Rollouts exported in several parts (their template re-rendered the history)."""
    skipped: dict[str, int] = Field(default_factory=dict)
    """Why rollouts gave no sample, with how many."""

    def to_text(self) -> str:
        """A few lines for the terminal."""
        lines = [
            f"{self.samples} training samples from {self.rollouts} rollouts -> {self.path}"
            + (
                f" ({self.split_rollouts} split where the history was re-rendered)"
                if self.split_rollouts
                else ""
            )
        ]
        lines += [f"  skipped {n} x {why}" for why, n in sorted(self.skipped.items())]
        return "\n".join(lines)


class _Part:
    def __init__(self, turn: dict[str, Any]) -> None:
        self.turns = [int(turn["turn"])]
        self.prompt: list[int] = list(turn["prompt_ids"])
        self.response: list[int] = list(turn["response_ids"])
        self.mask = [1] * len(self.response)
        logprobs = turn.get("response_logprobs")
        self.logprobs: list[float] | None = list(logprobs) if logprobs is not None else None
        self.truncated = turn.get("finish_reason") == "length"

    def context(self) -> list[int]:
        return self.prompt + self.response

    def extend(self, turn: dict[str, Any], environment: list[int]) -> None:
        sampled = list(turn["response_ids"])
        self.turns.append(int(turn["turn"]))
        self.response += environment + sampled
        self.mask += [0] * len(environment) + [1] * len(sampled)
        logprobs = turn.get("response_logprobs")
        if self.logprobs is not None and logprobs is not None:
            self.logprobs += [0.0] * len(environment) + list(logprobs)
        else:
            self.logprobs = None
        self.truncated = self.truncated or turn.get("finish_reason") == "length"


def _traced(turn: dict[str, Any]) -> bool:
    return bool(turn.get("prompt_ids")) and bool(turn.get("response_ids"))


def _first_difference(a: Sequence[int], b: Sequence[int]) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


def _parts(turns: Sequence[dict[str, Any]], per_turn: bool) -> tuple[list[_Part], list[str]]:
    parts: list[_Part] = []
    why: list[str] = []
    current: _Part | None = None
    for turn in turns:
        if not _traced(turn):
            if current is not None:
                why.append(f"turn {turn.get('turn')} has no token ids")
            current = None
            continue
        if current is not None and not per_turn:
            context = current.context()
            prompt = list(turn["prompt_ids"])
            if prompt[: len(context)] == context:
                current.extend(turn, prompt[len(context) :])
                continue
            at = _first_difference(prompt, context)
            why.append(
                f"turn {turn['turn']}'s prompt does not start with turn {current.turns[-1]}'s "
                f"prompt + response (they differ at id {at} of {len(context)}): the chat "
                "template re-rendered the history"
            )
        current = _Part(turn)
        parts.append(current)
    return parts, why


def training_samples(
    trajectory: dict[str, Any], rollout: Rollout, *, per_turn: bool = False
) -> list[TrainingSample]:
    """The samples of one rollout (its trajectory record and its ``Rollout``); none when
    it has no verdict or no token ids. ``per_turn`` gives one sample per turn, as the
    verifiers library's trajectory steps hold them."""
    if rollout.verdict is None or rollout.status == "broken":
        return []
    parts, why = _parts(trajectory.get("turns") or [], per_turn)
    status: Status = rollout.status
    return [
        TrainingSample(
            task_id=rollout.task_id,
            sample=rollout.sample,
            model=rollout.model,
            status=status,
            reward=rollout.score,
            passed=rollout.passed,
            turns=part.turns,
            prompt_ids=part.prompt,
            response_ids=part.response,
            response_mask=part.mask,
            response_logprobs=part.logprobs,
            num_turns=2 * len(part.turns),
            truncated=part.truncated,
            layout="per-turn" if per_turn else "merged",
            part=index,
            parts=len(parts),
            split="per-turn export" if per_turn else "; ".join(why),
        )
        for index, part in enumerate(parts)
    ]


def _skip_reason(rollout: Rollout, trajectory: dict[str, Any] | None) -> str:
    if rollout.status == "broken":
        return "broken task (no verdict)"
    if rollout.verdict is None:
        return f"no verdict ({(rollout.error or 'the run did not finish').split(':')[0]})"
    if trajectory is None:
        return "no trajectory file"
    return "no token ids (run the eval with --record-tokens on the embedded engine)"


def export_trajectories(
    results: str | Path,
    out: str | Path,
    *,
    per_turn: bool = False,
    statuses: Iterable[str] = ("passed", "failed", "error"),
) -> ExportReport:
    """Write the training samples of an eval's results folder to ``out`` (JSONL, one
    ``TrainingSample`` per line, written whole then moved into place).

    Args:
        results: An eval's results folder (``rollouts.jsonl`` + ``trajectories/``).
        out: The JSONL file to write.
        per_turn: One sample per turn instead of one per rollout.
        statuses: Which rollouts to export (an ``error`` rollout — max turns, timeout —
            still has a verdict on the world it left).

    Raises:
        FileNotFoundError: ``results`` is not an eval's results folder.
    """
    from .runner import EvalResults

    folder = EvalResults(results)
    if not folder.rollouts_path.is_file():
        raise FileNotFoundError(
            f"{folder.rollouts_path} does not exist: pass the results folder of an "
            "`agentsdk eval` run (the one holding rollouts.jsonl)"
        )
    wanted = set(statuses)
    skipped: Counter[str] = Counter()
    samples: list[TrainingSample] = []
    used = split = 0
    for rollout in sorted(folder.load(), key=lambda r: (r.task_id, r.sample)):
        if rollout.status == "broken" or rollout.status not in wanted:
            skipped[
                _skip_reason(rollout, None)
                if rollout.status == "broken"
                else f"status {rollout.status}"
            ] += 1
            continue
        path = folder.trajectory_path(rollout)
        record = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
        made = training_samples(record, rollout, per_turn=per_turn) if record else []
        if not made:
            skipped[_skip_reason(rollout, record)] += 1
            continue
        used += 1
        split += made[0].parts > 1 and not per_turn
        samples.extend(made)
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for item in samples:
            f.write(item.model_dump_json() + "\n")
    os.replace(tmp, target)
    return ExportReport(
        path=str(target),
        samples=len(samples),
        rollouts=used,
        split_rollouts=split,
        skipped=dict(skipped),
    )
