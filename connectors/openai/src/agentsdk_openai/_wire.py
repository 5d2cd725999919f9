"""Messages to Chat Completions wire JSON, cached per message object.

Messages are immutable once appended to a run, so each one is encoded once and its
JSON text reused on every later turn: a long history costs a string join, not a re-walk.
"""

from __future__ import annotations

import base64
import json
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from agentsdk import ImagePart, Message, ModelProfile, TextPart, ToolCallPart, ToolResultPart

__all__ = ["MessageEncoder", "dumps"]


def dumps(value: Any) -> str:
    """Compact JSON, non-ASCII kept as is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _image_url(part: ImagePart) -> dict[str, Any]:
    data = base64.b64encode(part.data).decode("ascii")
    return {"type": "image_url", "image_url": {"url": f"data:{part.media_type};base64,{data}"}}


_NO_VISION = "[an image was here; this model cannot view images]"


class MessageEncoder:
    """Encodes messages for one model profile and remembers the JSON of each message."""

    def __init__(
        self,
        profile: ModelProfile,
        *,
        tool_calls_as_text: Callable[[list[ToolCallPart]], str] | None = None,
    ):
        self.profile = profile
        self._tool_calls_as_text = tool_calls_as_text
        # id(message) -> (weak reference, encoded fragments). The weak reference both
        # guards against id reuse and drops the entry when the message is collected.
        self._cache: dict[int, tuple[weakref.ref[Message], list[str]]] = {}

    def encode(self, messages: Sequence[Message]) -> list[str]:
        """JSON text of each wire message (one Message may become several)."""
        out: list[str] = []
        for message in messages:
            out.extend(self._fragments(message))
        return out

    def __len__(self) -> int:
        return len(self._cache)

    def _fragments(self, message: Message) -> list[str]:
        key = id(message)
        hit = self._cache.get(key)
        if hit is not None and hit[0]() is message:
            return hit[1]
        fragments = [dumps(wire) for wire in self.to_wire(message)]
        try:
            ref = weakref.ref(message, self._forgetter(key))
        except TypeError:  # not weak-referenceable: encode every time
            return fragments
        self._cache[key] = (ref, fragments)
        return fragments

    def _forgetter(self, key: int) -> Callable[[weakref.ref[Message]], None]:
        def forget(_ref: weakref.ref[Message]) -> None:
            self._cache.pop(key, None)

        return forget

    def to_wire(self, message: Message) -> list[dict[str, Any]]:
        """The wire dicts for one message (uncached)."""
        if message.role == "tool":
            return [self._tool_result(p) for p in message.parts if isinstance(p, ToolResultPart)]
        if message.role == "assistant":
            return [self._assistant(message)]
        return [
            {
                "role": message.role,
                "content": self._content(message.parts, allow_images=message.role == "user"),
            }
        ]

    def _content(
        self, parts: Sequence[object], *, allow_images: bool
    ) -> str | list[dict[str, Any]]:
        texts = [p for p in parts if isinstance(p, TextPart)]
        images = [p for p in parts if isinstance(p, ImagePart)]
        if not images:
            return "\n".join(p.text for p in texts)
        if not (allow_images and self.profile.image_input):
            return "\n".join(
                p.text if isinstance(p, TextPart) else _NO_VISION
                for p in parts
                if isinstance(p, TextPart | ImagePart)
            )
        blocks: list[dict[str, Any]] = []
        for part in parts:
            if isinstance(part, TextPart):
                blocks.append({"type": "text", "text": part.text})
            elif isinstance(part, ImagePart):
                blocks.append(_image_url(part))
        return blocks

    def _assistant(self, message: Message) -> dict[str, Any]:
        text = "".join(p.text for p in message.parts if isinstance(p, TextPart))
        calls = message.tool_calls
        if calls and self._tool_calls_as_text is not None:
            # Prompted tool calling: the model wrote its calls as text, so show them as text.
            rendered = self._tool_calls_as_text(calls)
            return {"role": "assistant", "content": f"{text}\n{rendered}" if text else rendered}
        wire: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            wire["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": dumps(c.arguments)},
                }
                for c in calls
            ]
        elif not text:
            wire["content"] = ""
        return wire

    def _tool_result(self, result: ToolResultPart) -> dict[str, Any]:
        allow = self.profile.images_in_tool_results
        content = self._content(result.parts, allow_images=allow)
        if result.is_error and isinstance(content, str):
            content = f"Error: {content}"
        if self._tool_calls_as_text is not None:
            body = content if isinstance(content, str) else dumps(content)
            return {
                "role": "user",
                "content": f"Result of {result.name} (call {result.call_id}):\n{body}",
            }
        return {"role": "tool", "tool_call_id": result.call_id, "content": content}
