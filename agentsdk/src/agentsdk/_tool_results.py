"""How one tool call's outcome becomes its result in the context: long text
truncated (the full text saved), images routed by the model's profile, and the
budget that keeps only the most recent images in the context."""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import Any

from .artifacts import ArtifactStore
from .events import Event, ImageProduced
from .messages import (
    ImagePart,
    Message,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    _text_part,
    _trusted,
)
from .models import ModelProfile
from .tools import ToolOutcome

ImageSlot = tuple[int, int, int, str]
"""Where a tracked image sits: message index, part index, index inside a tool result
(-1: the part itself), and the file it was saved to."""


class ImageBudget:
    """Keeps only the most recent K tool images in the context."""

    def __init__(self, keep: int, artifacts: ArtifactStore):
        self.keep = keep
        self.artifacts = artifacts
        self.paths: dict[int, str] = {}
        self.order: deque[tuple[int, int]] = deque()  # (message index, id(image part))

    def saved_path(self, part: ImagePart, name: str) -> str:
        path = self.paths.get(id(part))
        if path is None:
            path = str(self.artifacts.save_image(part, name))
            self.paths[id(part)] = path
        return path

    def track(self, index: int, images: list[ImagePart]) -> None:
        for img in images:
            self.order.append((index, id(img)))

    def enforce(self, messages: list[Message]) -> None:
        excess = len(self.order) - self.keep
        if excess <= 0:
            return
        victims: dict[int, set[int]] = {}
        for _ in range(excess):
            index, part_id = self.order.popleft()
            victims.setdefault(index, set()).add(part_id)
        for index, ids in victims.items():
            messages[index] = self._strip(messages[index], ids)
            for part_id in ids:  # an id is only unique while its object lives
                self.paths.pop(part_id, None)

    def slots(self, messages: list[Message]) -> list[ImageSlot]:
        """The tracked images by position (what a saved run state keeps)."""
        found: list[ImageSlot] = []
        for index, part_id in self.order:
            for i, part in enumerate(messages[index].parts):
                if id(part) == part_id:
                    found.append((index, i, -1, self.paths.get(part_id, "")))
                elif isinstance(part, ToolResultPart):
                    for j, inner in enumerate(part.parts):
                        if id(inner) == part_id:
                            found.append((index, i, j, self.paths.get(part_id, "")))
        return found

    def restore(self, messages: list[Message], slots: list[ImageSlot]) -> None:
        """Track the images of a resumed run again, from :meth:`slots`."""
        for index, i, j, path in slots:
            part: Any = messages[index].parts[i]
            if j >= 0:
                part = part.parts[j]
            self.order.append((index, id(part)))
            if path:
                self.paths[id(part)] = path

    def _placeholder(self, part: ImagePart) -> TextPart:
        where = self.paths.get(id(part), "(not saved)")
        return TextPart(text=f"[older image removed from context; saved at {where}]")

    def _strip(self, message: Message, victims: set[int]) -> Message:
        new_parts: list[Any] = []
        for part in message.parts:
            if isinstance(part, ImagePart) and id(part) in victims:
                new_parts.append(self._placeholder(part))
            elif isinstance(part, ToolResultPart) and any(id(p) in victims for p in part.parts):
                inner = [
                    self._placeholder(p) if isinstance(p, ImagePart) and id(p) in victims else p
                    for p in part.parts
                ]
                new_parts.append(part.model_copy(update={"parts": inner}))
            else:
                new_parts.append(part)
        return Message.model_construct(role=message.role, parts=new_parts)


def _truncate(text: str, limit: int, artifacts: ArtifactStore, name: str) -> str:
    if len(text) <= limit:
        return text
    path = artifacts.save_text(f"{name}-output.txt", text)
    return (
        text[:limit] + f"\n[output truncated: showing {limit} of {len(text)} characters; "
        f"the full output is saved at {path}]"
    )


def _unseen_images(paths: list[Path]) -> str:
    """Where a call's images were saved, for a model that cannot view them: one line, the
    folder named once (eight renders as eight full paths cost a small model ~280 tokens
    of reading on its next turn)."""
    if len(paths) == 1:
        return f"[image saved at {paths[0]}; this model cannot view images]"
    folder = paths[0].parent
    if all(p.parent == folder for p in paths):
        names = ", ".join(p.name for p in paths)
        return f"[{len(paths)} images saved in {folder}: {names}; this model cannot view images]"
    return f"[{len(paths)} images saved at {', '.join(map(str, paths))}; this model cannot view images]"


def route_outcome(
    run_id: str,
    max_chars: int,
    artifacts: ArtifactStore,
    profile: ModelProfile,
    budget: ImageBudget,
    call: ToolCallPart,
    outcome: ToolOutcome,
    turn: int,
    attached_before: int,
) -> tuple[ToolResultPart, list[ImagePart], list[TextPart | ImagePart], list[Event]]:
    """The tool result for one call, the images kept in context, what goes in the
    trailing user message (for models that cannot take images in tool results),
    and the ImageProduced events. ``attached_before`` counts images earlier calls of
    this turn already put in the trailing message."""
    parts: list[TextPart | ImagePart] = []
    images: list[ImagePart] = []
    trailing: list[TextPart | ImagePart] = []
    events: list[Event] = []
    unseen: list[Path] = []
    unseen_at = 0
    for part in outcome.parts:
        if not isinstance(part, ImagePart):
            text = _truncate(part.text, max_chars, artifacts, call.name)
            # a TextPart is immutable: an untouched one is shared, not copied
            parts.append(part if text is part.text and type(part) is TextPart else _text_part(text))
            continue
        path = budget.saved_path(part, f"{call.name}.png")
        events.append(ImageProduced(run_id, turn, call.id, call.name, path, part.media_type))
        if not profile.image_input:
            if not unseen:  # one line for all of this call's images, where the first was
                unseen_at = len(parts)
            unseen.append(Path(path))
            continue
        images.append(part)
        if profile.images_in_tool_results:
            parts.append(part)
            continue
        if not trailing:  # first image of this call: say where the images come from
            trailing.append(TextPart(text=f"Image(s) from tool call {call.name} (id {call.id}):"))
        trailing.append(part)
        n = attached_before + len(images)
        parts.append(TextPart(text=f"[image {n} is attached in the next user message]"))
    if unseen:
        parts.insert(unseen_at, TextPart(text=_unseen_images(unseen)))
    tool_result = _trusted(
        ToolResultPart,
        {
            "kind": "tool_result",
            "call_id": call.id,
            "name": call.name,
            "parts": parts,
            "is_error": outcome.is_error,
            "instead": outcome.instead,
        },
        {"call_id", "name", "parts", "is_error"}
        | ({"instead"} if outcome.instead is not None else set()),
    )
    return tool_result, images, trailing, events
