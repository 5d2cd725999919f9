"""Loop and stall detection: a model that repeats itself is told so, and a run that
keeps repeating ends with a clear reason instead of burning all its turns.

Small models often resend the call they just made, or retry a failing call
unchanged. The guard sees each turn's calls and their outcomes, at the loop's
existing step boundaries:

* a turn that only repeats a call of the previous turn, with the same arguments,
  gets an error result instead of running the tool again (nothing changed, so the
  result would be the same) — with the earlier result and what to try instead;
* a tool error identical to the same tool's previous error gets a note that says so;
* ``max_strikes`` looping turns in a row end the run with ``LoopDetected``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from .errors import AgentError
from .messages import TextPart, ToolCallPart
from .tools import ToolOutcome

__all__ = ["LoopDetected", "LoopGuard"]


class LoopDetected(AgentError):
    """The model kept repeating the same call or hitting the same error."""


def _signature(call: ToolCallPart) -> str:
    args = call.raw_arguments if call.raw_arguments is not None else call.arguments
    return call.name + "\x00" + json.dumps(args, sort_keys=True, default=str)


@dataclass
class LoopGuard:
    """Per run state of the loop detector. ``Agent(loop_guard=LoopGuard(max_strikes=4))``
    tunes it, ``Agent(loop_guard=None)`` turns it off."""

    max_strikes: int = 3
    """Looping turns in a row that end the run."""
    _previous: dict[str, str] = field(default_factory=dict)  # signature -> its result text
    _errors: dict[str, str] = field(default_factory=dict)  # tool -> its last error text
    _strikes: int = 0
    _turn_looped: bool = False
    _reason: str = ""

    def fresh(self) -> LoopGuard:
        """A guard with the same settings and no history (one per run)."""
        return LoopGuard(max_strikes=self.max_strikes)

    def before(self, calls: list[ToolCallPart]) -> dict[int, ToolOutcome]:
        """Outcomes for the calls of this turn that must not run (by position): when
        every call repeats one of the previous turn's, with the same arguments."""
        self._turn_looped = False
        signatures = [_signature(c) for c in calls]
        if not signatures or not all(s in self._previous for s in signatures):
            return {}
        self._turn_looped = True
        blocked: dict[int, ToolOutcome] = {}
        for i, (call, sig) in enumerate(zip(calls, signatures, strict=True)):
            earlier = self._previous[sig]
            shown = earlier if len(earlier) <= 400 else earlier[:400] + " ..."
            text = (
                f"Loop detected: you called {call.name} with exactly these arguments in your "
                "previous turn and nothing has changed since, so it was not run again. "
                f"Its result was:\n{shown}\n"
                "Do something different: change the arguments, use another tool to change "
                "what you are looking at, or give your final answer."
            )
            blocked[i] = ToolOutcome([TextPart(text=text)], is_error=True, kind="error")
            self._reason = f"the model repeated {call.name}({_short(call)})"
        return blocked

    def after(self, calls: list[ToolCallPart], outcomes: list[ToolOutcome]) -> list[ToolOutcome]:
        """Record this turn; a repeated error gets a note saying it is the same as before."""
        out: list[ToolOutcome] = []
        repeated_error = False
        for call, outcome in zip(calls, outcomes, strict=True):
            text = outcome.text
            if outcome.is_error and not text.startswith("Loop detected:"):
                if self._errors.get(call.name) == text:
                    repeated_error = True
                    self._reason = f"{call.name} failed twice in a row with the same error"
                    note = TextPart(
                        text="This is the same error as your previous call of "
                        f"{call.name}: repeating the same approach will fail again. Read the "
                        "error, then try different arguments or another tool."
                    )
                    outcome = ToolOutcome([*outcome.parts, note], is_error=True, kind=outcome.kind)
                self._errors[call.name] = text
            elif not outcome.is_error:
                self._errors.pop(call.name, None)
            out.append(outcome)
        if not self._turn_looped:
            self._previous = {_signature(c): o.text for c, o in zip(calls, outcomes, strict=True)}
        if self._turn_looped or repeated_error:
            self._strikes += 1
        else:
            self._strikes = 0
        return out

    @property
    def stuck(self) -> str | None:
        """Why the run should end, once the model looped ``max_strikes`` turns in a row."""
        if self._strikes >= self.max_strikes:
            return f"{self._reason} ({self._strikes} looping turns in a row)"
        return None


def _short(call: ToolCallPart) -> str:
    text = json.dumps(call.arguments, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."
