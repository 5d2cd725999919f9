"""Loop and stall detection: a model that repeats itself is told so, and a run that
keeps repeating ends with a clear reason instead of burning all its turns.

Small models often resend the call they just made, or retry a failing call
unchanged. The guard sees each turn's calls and their outcomes at the loop's
existing step boundary (after the tools ran):

* a call with the same arguments as an earlier one that gives the same result made no
  progress: its result becomes an error that says so and what to try instead. "Earlier"
  reaches back to the last turn in which some call succeeded without repeating itself
  (that call may have changed the world: a delete before a rebuild), so a call whose
  result changed — the next page, a counter, a render after an edit — and a call
  repeated after another successful action both pass untouched;
* going back and forth is a loop too: a turn whose calls all succeed with a result seen
  before in the run, for the same call, right after a turn that did the same (A B A B,
  each with the result it had the first time: the 1.5B model recoloured a torus and
  re-added its light in turn until the run used all its turns). The scene looks the same
  after each such turn, so the pair of turns changed nothing; a single revisit (a look
  again after an undo) passes;
* a call whose tool says it changed nothing (it returned :class:`~agentsdk.tools.Unchanged`:
  a colour set to the colour the part had) made no progress either: a turn of nothing but
  such calls and repeats is a looping turn, and the call's result says it changed nothing
  (the 1.5B model recoloured a white orb white and rendered again, turn after turn, with the
  scene already as asked);
* a tool error identical to the same tool's previous error gets a note that says so;
* after ``max_strikes - 1`` such turns in a row the next turn offers no tools
  (``tool_choice="none"``): the model has the notes in view and gives its final answer,
  which is what a model that cannot stop calling needs (on finance/damaged-file the
  1.5B model re-read a file whose error said "tell the user which rows" until the run
  was stopped). A model that ignores ``tool_choice`` and calls again still strikes out;
* ``max_strikes`` such turns in a row end the run with ``LoopDetected``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from .errors import AgentError
from .messages import TextPart, ToolCallPart
from .tools import ToolOutcome

__all__ = ["NOTHING_CHANGED", "LoopDetected", "LoopGuard"]

NOTHING_CHANGED = "Nothing changed:"
"""How the note on a call that changed nothing begins (its result is then an error): a
connector may tell such a call, valid but idle, from one that failed."""


class LoopDetected(AgentError):
    """The model kept repeating the same call or hitting the same error."""


def _signature(call: ToolCallPart) -> str:
    args = call.raw_arguments if call.raw_arguments is not None else call.arguments
    return _fingerprint(call.name + "\x00" + json.dumps(args, sort_keys=True, default=str))


def _fingerprint(text: str) -> str:
    """Short text as it is, long text as a digest: what the guard remembers stays
    small (a saved run state holds it) and comparing stays exact enough."""
    if len(text) <= 64:
        return text
    return "#" + hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


@dataclass
class LoopGuard:
    """Per run state of the loop detector. ``Agent(loop_guard=LoopGuard(max_strikes=4))``
    tunes it, ``Agent(loop_guard=None)`` turns it off."""

    max_strikes: int = 3
    """Looping turns in a row that end the run."""
    last_word: bool = True
    """Ask for the final answer, with no tools offered, on the turn before the last strike."""
    _previous: dict[str, str] = field(default_factory=dict)  # signature -> its result's print
    _errors: dict[str, str] = field(default_factory=dict)  # tool -> its last error's print
    _seen: set[str] = field(default_factory=set)  # every call and result of the run, printed
    _revisited: bool = False  # the last turn only repeated calls and results seen before
    _strikes: int = 0
    _reason: str = ""

    def fresh(self) -> LoopGuard:
        """A guard with the same settings and no history (one per run)."""
        return LoopGuard(max_strikes=self.max_strikes, last_word=self.last_word)

    def snapshot(self) -> dict[str, Any]:
        """What the guard remembers, as JSON-ready data (saved with a run's state)."""
        return {
            "previous": dict(self._previous),
            "errors": dict(self._errors),
            "seen": sorted(self._seen),
            "revisited": self._revisited,
            "strikes": self._strikes,
            "reason": self._reason,
        }

    def restored(self, snapshot: dict[str, Any]) -> LoopGuard:
        """A guard with these settings that remembers what ``snapshot`` holds."""
        return LoopGuard(
            max_strikes=self.max_strikes,
            last_word=self.last_word,
            _previous=dict(snapshot.get("previous", {})),
            _errors=dict(snapshot.get("errors", {})),
            _seen=set(snapshot.get("seen", [])),
            _revisited=bool(snapshot.get("revisited", False)),
            _strikes=int(snapshot.get("strikes", 0)),
            _reason=str(snapshot.get("reason", "")),
        )

    def after(self, calls: list[ToolCallPart], outcomes: list[ToolOutcome]) -> list[ToolOutcome]:
        """This turn's outcomes, with repeats that made no progress turned into errors
        that say so, and repeated errors pointed out."""
        signatures = [_signature(c) for c in calls]
        texts = [_fingerprint(o.text) for o in outcomes]  # what the guard remembers
        repeats = [
            self._previous.get(sig) == text for sig, text in zip(signatures, texts, strict=True)
        ]
        same_errors = [
            o.is_error and self._errors.get(c.name) == t
            for c, o, t in zip(calls, outcomes, texts, strict=True)
        ]
        pairs = [_fingerprint(s + "\x00" + t) for s, t in zip(signatures, texts, strict=True)]
        idle = [not o.is_error and o.unchanged for o in outcomes]  # changed nothing
        revisit = bool(calls) and all(
            not o.is_error and (p in self._seen or o.unchanged)
            for o, p in zip(outcomes, pairs, strict=True)
        )
        back_and_forth = revisit and self._revisited
        self._revisited = revisit
        self._seen.update(pairs)
        # Only a turn made of nothing but repeats is a loop: a new call beside a repeat (a
        # paint and a look in one turn) may be what changes the repeated call's world.
        looped = back_and_forth or all(
            r or e or i for r, e, i in zip(repeats, same_errors, idle, strict=True)
        )
        out: list[ToolOutcome] = []
        for call, outcome, repeat, same_error, unchanged in zip(
            calls, outcomes, repeats, same_errors, idle, strict=True
        ):
            if looped and unchanged and not repeat:
                self._reason = f"{call.name}({_short(call)}) changed nothing"
                note = TextPart(
                    text=f"{NOTHING_CHANGED} {call.name} asked for what already was so, which "
                    "made no progress. If the request is done, give your final answer; "
                    "otherwise take its next step. The result was:"
                )
                outcome = ToolOutcome([note, *outcome.parts], is_error=True, kind="error")
            elif looped and (repeat or back_and_forth):
                again = "" if repeat else ", as your previous turn did"
                self._reason = (
                    f"the model repeated {call.name}({_short(call)}) with the same result{again}"
                )
                note = TextPart(
                    text=f"Loop detected: you called {call.name} with exactly these arguments "
                    f"before and got exactly the same result{again}, so repeating it made no "
                    "progress. Do something different: change the arguments, use another tool to "
                    "change what you are looking at, or give your final answer. The result was:"
                )
                kind = outcome.kind if outcome.is_error else "error"
                outcome = ToolOutcome(
                    [note, *outcome.parts], is_error=True, kind=kind, instead=outcome.instead
                )
            elif same_error:
                if looped:
                    self._reason = f"{call.name} failed twice in a row with the same error"
                note = TextPart(
                    text="This is the same error as your previous call of "
                    f"{call.name}: repeating the same approach will fail again. Read the "
                    "error, then try different arguments or another tool."
                )
                outcome = ToolOutcome(
                    [*outcome.parts, note],
                    is_error=True,
                    kind=outcome.kind,
                    instead=outcome.instead,
                )
            out.append(outcome)
        for call, original, text in zip(calls, outcomes, texts, strict=True):
            if original.is_error:
                self._errors[call.name] = text
            else:
                self._errors.pop(call.name, None)
        this_turn = dict(zip(signatures, texts, strict=True))
        if any(
            not o.is_error and not r and not o.unchanged
            for o, r in zip(outcomes, repeats, strict=True)
        ):
            # Something new succeeded: it may have changed the world (a delete before a
            # rebuild), so only this turn's calls count as "before" from now on.
            self._previous = this_turn
        else:
            self._previous.update(this_turn)
        self._strikes = self._strikes + 1 if looped else 0
        return out

    @property
    def answer_now(self) -> bool:
        """True when the next looping turn would end the run: it is asked for the answer."""
        return self.last_word and self.max_strikes > 1 and self._strikes == self.max_strikes - 1

    @property
    def stuck(self) -> str | None:
        """Why the run should end, once the model looped ``max_strikes`` turns in a row."""
        if self._strikes >= self.max_strikes:
            return f"{self._reason} ({self._strikes} looping turns in a row)"
        return None


def _short(call: ToolCallPart) -> str:
    text = json.dumps(call.arguments, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."
