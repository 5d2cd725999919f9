"""What a small local model is shown of the conversation so far.

A toolkit's ``hint:`` lines (agentsdk.vision's reports, a toolkit's own advice) tell the
agent what to fix next. Once a newer result has come back they are history, but a small
model still reads them as the state of the world: the 0.5B model answered "The box is cut
off on the right" after the box had been framed, copying the first render's hint. The
newest result keeps its hints; older ones are shown without them.
"""

from __future__ import annotations

from agentsdk.messages import Part

from agentsdk import ImagePart, Message, TextPart, ToolResultPart

__all__ = ["without_superseded_hints"]


def _is_hint(line: str) -> bool:
    return line.lstrip().startswith("hint:")


def _text_without_hints(part: TextPart | ImagePart) -> TextPart | ImagePart:
    if not isinstance(part, TextPart):
        return part
    lines = part.text.split("\n")
    kept = [line for line in lines if not _is_hint(line)]
    return part if len(kept) == len(lines) else TextPart(text="\n".join(kept))


def _without_hints(part: Part) -> Part:
    """A tool result without the hint lines of its text; the same object if it has none."""
    if not isinstance(part, ToolResultPart):
        return part
    inner = [_text_without_hints(p) for p in part.parts]
    if all(a is b for a, b in zip(inner, part.parts, strict=True)):
        return part
    return part.model_copy(update={"parts": inner})


def without_superseded_hints(messages: list[Message]) -> list[Message]:
    """``messages`` with the ``hint:`` lines removed from every tool result but the newest
    message of results (the same list when there is nothing to remove)."""
    newest = max((i for i, m in enumerate(messages) if m.tool_results), default=-1)
    shown = list(messages)
    for i in range(newest):
        parts = [_without_hints(part) for part in messages[i].parts]
        if any(a is not b for a, b in zip(parts, messages[i].parts, strict=True)):
            shown[i] = messages[i].model_copy(update={"parts": parts})
    return shown if any(a is not b for a, b in zip(shown, messages, strict=True)) else messages
