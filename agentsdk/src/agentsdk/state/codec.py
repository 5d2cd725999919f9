"""Messages and tool outcomes to and from the JSON a store keeps, images as files.

An image part becomes ``{"kind": "image", "file": "<sha256>.png", ...}``: its bytes go
through ``RunStore.put_file`` once (remembered by object, since parts are immutable)
and come back through ``get_file`` on load.
"""

from __future__ import annotations

import json
from typing import Any

from ..messages import ImagePart, Message, TextPart, ToolResultPart
from .errors import CorruptState
from .store import RunStore

__all__ = ["StateCodec"]

_IMAGE_MARK = '"kind":"image"'


def _has_images(message: Message) -> bool:
    for part in message.parts:
        if isinstance(part, ImagePart):
            return True
        if isinstance(part, ToolResultPart) and any(isinstance(p, ImagePart) for p in part.parts):
            return True
    return False


class StateCodec:
    """Writes and reads one store's message JSON; keeps each image file written once."""

    def __init__(self, store: RunStore):
        self.store = store
        self._files: dict[int, tuple[ImagePart, str]] = {}  # id(part) -> (part, file)

    async def image(self, part: ImagePart) -> dict[str, Any]:
        """The JSON form of an image part, its bytes kept as a file."""
        known = self._files.get(id(part))
        if known is None or known[0] is not part:
            suffix = part.media_type.rsplit("/", 1)[-1].replace("jpeg", "jpg")
            known = (part, await self.store.put_file(part.data, suffix))
            self._files[id(part)] = known
        return {
            "kind": "image",
            "file": known[1],
            "media_type": part.media_type,
            "label": part.label,
        }

    async def parts(self, parts: list[Any]) -> list[dict[str, Any]]:
        """JSON forms of message parts (tool results with images inside included)."""
        out: list[dict[str, Any]] = []
        for part in parts:
            if isinstance(part, ImagePart):
                out.append(await self.image(part))
            elif isinstance(part, ToolResultPart) and any(
                isinstance(p, ImagePart) for p in part.parts
            ):
                data = part.model_dump(mode="json", exclude={"parts"})
                data["parts"] = await self.parts(list(part.parts))
                out.append(data)
            else:
                out.append(part.model_dump(mode="json"))
        return out

    async def message(self, message: Message) -> str:
        """One message as stored JSON."""
        if not _has_images(message):
            return message.model_dump_json()
        return json.dumps(
            {"role": message.role, "parts": await self.parts(list(message.parts))},
            ensure_ascii=False,
            separators=(",", ":"),
        )

    async def load_parts(self, parts: list[Any]) -> list[Any]:
        """Stored part dicts with their image bytes read back (for validation)."""
        out: list[Any] = []
        for part in parts:
            if isinstance(part, dict) and part.get("kind") == "image" and "file" in part:
                data = await self.store.get_file(str(part["file"]))
                restored = ImagePart(
                    data=data,
                    media_type=part.get("media_type", "image/png"),
                    label=part.get("label"),
                )
                self._files[id(restored)] = (restored, str(part["file"]))
                out.append(restored)
            elif isinstance(part, dict) and part.get("kind") == "tool_result":
                out.append({**part, "parts": await self.load_parts(part.get("parts", []))})
            else:
                out.append(part)
        return out

    async def load_message(self, text: str, where: str) -> Message:
        """A stored message back as a ``Message``."""
        try:
            if _IMAGE_MARK not in text.replace(" ", ""):
                return Message.model_validate_json(text)
            data = json.loads(text)
            data["parts"] = await self.load_parts(data.get("parts", []))
            return Message.model_validate(data)
        except (ValueError, TypeError) as exc:
            raise CorruptState(f"{where} cannot be read: {exc}") from exc


def text_parts(parts: list[Any]) -> list[TextPart | ImagePart]:
    """Parts that are already objects (a state built in memory), as they are."""
    return [p for p in parts if isinstance(p, TextPart | ImagePart)]
