"""What a small local model is shown of the conversation so far.

A toolkit's ``hint:`` lines (agentsdk.vision's reports, a toolkit's own advice) tell the
agent what to fix next. Once a newer result has come back they are history, but a small
model still reads them as the state of the world: the 0.5B model answered "The box is cut
off on the right" after the box had been framed, copying the first render's hint. The
newest result keeps its hints; older ones are shown without them.
"""

from __future__ import annotations

from agentsdk import Message, TextPart, ToolResultPart

__all__ = ["without_superseded_hints"]


def _is_hint(line: str) -> bool:
    return line.lstrip().startswith("hint:")


def _strip(text: str) -> str:
    return "\n".join(line for line in text.split("\n") if not _is_hint(line))


def _without_hints(message: Message) -> Message:
    parts = []
    for part in message.parts:
        if isinstance(part, ToolResultPart) and any(
            isinstance(p, TextPart) and any(map(_is_hint, p.text.split("\n"))) for p in part.parts
        ):
            inner = [
                TextPart(text=_strip(p.text)) if isinstance(p, TextPart) else p for p in part.parts
            ]
            part = part.model_copy(update={"parts": inner})
        parts.append(part)
    return message.model_copy(update={"parts": parts})


def without_superseded_hints(messages: list[Message]) -> list[Message]:
    """``messages`` with the ``hint:`` lines removed from every tool result but the newest
    message of results (the same list when there is nothing to remove)."""
    newest = max((i for i, m in enumerate(messages) if m.tool_results), default=-1)
    if newest < 0:
        return messages
    changed = False
    shown = []
    for i, message in enumerate(messages):
        if i < newest and message.tool_results:
            trimmed = _without_hints(message)
            changed = changed or trimmed != message
            message = trimmed
        shown.append(message)
    return shown if changed else messages
