"""Translation between agentsdk messages and the Messages API wire format."""

from __future__ import annotations

import base64
import json
import re
from typing import Any

from agentsdk import (
    ImagePart,
    Message,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Usage,
)

from ._faults import malformed
from ._wire import (
    WireContentBlock,
    WireImageBlock,
    WireImageSource,
    WireMessage,
    WireRequest,
    WireResponse,
    WireTextBlock,
    WireTool,
    WireToolChoice,
    WireToolResultBlock,
    WireToolUseBlock,
    WireUsage,
)

DEFAULT_OUTPUT_TOOL = "final_result"
"""Name of the forced tool that carries structured output when the request has no output_name."""

# The API's stop reasons, mapped onto the names the rest of agentsdk uses (OpenAI's vocabulary).
FINISH_REASONS: dict[str, str] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
    "pause_turn": "pause_turn",
    "model_context_window_exceeded": "length",
}

_TOOL_ID_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")


def wire_tool_id(call_id: str) -> str:
    """Make a tool-call id acceptable to the API (``^[a-zA-Z0-9_-]+$``), keeping it stable."""
    return _TOOL_ID_UNSAFE.sub("_", call_id) or "call"


def finish_reason(stop_reason: str | None) -> str | None:
    """The agentsdk finish reason for an API stop reason (unknown ones pass through)."""
    if stop_reason is None:
        return None
    return FINISH_REASONS.get(stop_reason, stop_reason)


def output_tool_name(request: ModelRequest) -> str | None:
    """Name of the forced output tool for this request, or None when it has no output schema."""
    if request.output_schema is None:
        return None
    return request.output_name or DEFAULT_OUTPUT_TOOL


IMAGE_MEDIA_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
"""The image formats the Messages API accepts; others are replaced by a short note."""


def _image_block(part: ImagePart) -> WireImageBlock | WireTextBlock:
    if part.media_type not in IMAGE_MEDIA_TYPES:
        # one unsupported picture should not turn the whole request into a 400
        name = f" {part.label}" if part.label else ""
        return WireTextBlock(
            text=f"[image{name} ({part.media_type}) not shown: unsupported format]"
        )
    data = base64.b64encode(part.data).decode("ascii")
    return WireImageBlock(source=WireImageSource(media_type=part.media_type, data=data))


def _user_blocks(message: Message) -> list[WireContentBlock]:
    blocks: list[WireContentBlock] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            if part.text:  # the API rejects empty text blocks
                blocks.append(WireTextBlock(text=part.text))
        elif isinstance(part, ImagePart):
            blocks.append(_image_block(part))
    return blocks


def _assistant_blocks(message: Message) -> list[WireContentBlock]:
    blocks: list[WireContentBlock] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            if part.text:
                blocks.append(WireTextBlock(text=part.text))
        elif isinstance(part, ToolCallPart):
            blocks.append(
                WireToolUseBlock(id=wire_tool_id(part.id), name=part.name, input=part.arguments)
            )
    return blocks


def _tool_result_blocks(message: Message) -> list[WireContentBlock]:
    blocks: list[WireContentBlock] = []
    for part in message.parts:
        if not isinstance(part, ToolResultPart):
            continue
        content: list[WireTextBlock | WireImageBlock] = []
        for inner in part.parts:
            if isinstance(inner, TextPart) and inner.text:
                content.append(WireTextBlock(text=inner.text))
            elif isinstance(inner, ImagePart):
                content.append(_image_block(inner))
        blocks.append(
            WireToolResultBlock(
                tool_use_id=wire_tool_id(part.call_id),
                content=content or None,
                is_error=True if part.is_error else None,
            )
        )
    return blocks


def wire_messages(messages: list[Message]) -> tuple[list[WireTextBlock], list[WireMessage]]:
    """Split system text out and turn the rest into alternating user/assistant turns.

    Consecutive tool messages (and a user message that follows them, such as images the loop
    appends) merge into ONE user turn with every ``tool_result`` first, as the API requires.
    """
    system: list[WireTextBlock] = []
    turns: list[WireMessage] = []
    for message in messages:
        if message.role == "system":
            system.extend(b for b in _user_blocks(message) if isinstance(b, WireTextBlock))
            continue
        if message.role == "assistant":
            role, blocks = "assistant", _assistant_blocks(message)
        elif message.role == "tool":
            role, blocks = "user", _tool_result_blocks(message)
        else:
            role, blocks = "user", _user_blocks(message)
        if not blocks:
            continue
        if turns and turns[-1].role == role:
            merged = turns[-1].content + blocks
            # tool_result blocks must lead the user turn that answers a tool_use turn
            merged.sort(key=lambda b: 0 if isinstance(b, WireToolResultBlock) else 1)
            turns[-1] = WireMessage(role=role, content=merged)
        else:
            turns.append(WireMessage(role=role, content=blocks))
    return system, turns


def _tool_choice(request: ModelRequest, output_tool: str | None) -> WireToolChoice | None:
    settings = request.settings
    choice = settings.tool_choice
    has_tools = bool(request.tools) or output_tool is not None
    if not has_tools:
        return None
    if choice is None or choice == "auto":
        if output_tool is not None:
            # structured output: the model must end by calling the output tool
            kind = "tool" if not request.tools else "any"
            wire = WireToolChoice(type=kind, name=output_tool if kind == "tool" else None)
        else:
            wire = WireToolChoice(type="auto")
    elif choice == "required":
        wire = WireToolChoice(type="any")
    elif choice == "none":
        return WireToolChoice(type="none")
    else:
        wire = WireToolChoice(type="tool", name=choice)
    if settings.parallel_tool_calls is False:
        wire.disable_parallel_tool_use = True
    return wire


def build_wire_request(
    request: ModelRequest, *, model: str, default_max_tokens: int, stream: bool
) -> WireRequest:
    """The ``/v1/messages`` body for ``request``."""
    system, turns = wire_messages(request.messages)
    tools = [
        WireTool(name=spec.name, description=spec.description or None, input_schema=spec.parameters)
        for spec in request.tools
    ]
    output_tool = output_tool_name(request)
    if request.settings.tool_choice == "none":
        # tools are off: the core's JSON instructions in the system prompt carry the schema
        output_tool = None
    if output_tool is not None:
        tools.append(
            WireTool(
                name=output_tool,
                description="Give the final answer by calling this tool with it as the input.",
                input_schema=request.output_schema or {"type": "object"},
            )
        )
    settings = request.settings
    return WireRequest(
        model=model,
        max_tokens=settings.max_tokens or default_max_tokens,
        messages=turns,
        system=system or None,
        tools=tools or None,
        tool_choice=_tool_choice(request, output_tool),
        temperature=settings.temperature,
        stream=True if stream else None,
    )


def request_body(wire: WireRequest, extra: dict[str, Any]) -> dict[str, Any]:
    """JSON body: the typed request plus ``ModelSettings.extra`` (e.g. ``top_k``, ``metadata``)."""
    body = wire.model_dump(mode="json", exclude_none=True)
    body.update(extra)
    return body


def usage_from_wire(usage: WireUsage) -> Usage:
    """agentsdk Usage; ``input_tokens`` counts cached reads and writes too (they are subsets)."""
    cache_write = usage.cache_creation_input_tokens or 0
    cache_read = usage.cache_read_input_tokens or 0
    return Usage(
        input_tokens=(usage.input_tokens or 0) + cache_write + cache_read,
        output_tokens=usage.output_tokens or 0,
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
        requests=1,
    )


def tool_call_part(
    call_id: str | None, name: str, arguments: dict[str, Any], raw: str | None = None
) -> ToolCallPart:
    """A ToolCallPart keeping the server's id (the core makes one up when there is none)."""
    if call_id:
        return ToolCallPart(id=call_id, name=name, arguments=arguments, raw_arguments=raw)
    return ToolCallPart(name=name, arguments=arguments, raw_arguments=raw)


def tool_call_from_input(
    call_id: str | None, name: str, value: Any, output_tool: str | None
) -> TextPart | ToolCallPart:
    """A tool call from a ``tool_use`` block's ``input``: an object, JSON text, or nothing."""
    if isinstance(value, str):
        return tool_call_from_json(call_id, name, value, output_tool)
    if value is None:
        value = {}
    if not isinstance(value, dict):  # the model's mistake: it can fix it
        raw = json.dumps(value)
        if name == output_tool:
            return TextPart(text=raw)
        return tool_call_part(call_id, name, {}, raw)
    if name == output_tool:
        return TextPart(text=json.dumps(value))
    return tool_call_part(call_id, name, value)


def tool_call_from_json(
    call_id: str | None, name: str, raw: str, output_tool: str | None
) -> TextPart | ToolCallPart:
    """A streamed tool call from its concatenated input JSON; bad JSON keeps the raw text."""
    if name == output_tool:
        return TextPart(text=raw.strip() or "{}")
    try:
        arguments = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError:
        return tool_call_part(call_id, name, {}, raw)
    if not isinstance(arguments, dict):
        return tool_call_part(call_id, name, {}, raw)
    return tool_call_part(call_id, name, arguments)


def response_from_wire(
    wire: WireResponse, *, model_name: str, output_tool: str | None
) -> ModelResponse:
    """A ModelResponse from a complete Message; a call of the output tool becomes JSON text."""
    parts: list[TextPart | ToolCallPart] = []
    for i, block in enumerate(wire.content or []):
        if block.type == "text" and block.text:
            parts.append(TextPart(text=block.text))
        elif block.type == "tool_use":
            if not block.name:
                raise malformed(model_name, f"content[{i}].name", "is missing from a tool_use")
            parts.append(tool_call_from_input(block.id, block.name, block.input, output_tool))
    return ModelResponse(
        parts=parts,
        usage=usage_from_wire(wire.usage),
        model_name=model_name,
        finish_reason=finish_reason_for(wire.stop_reason, parts),
    )


def finish_reason_for(stop_reason: str | None, parts: list[TextPart | ToolCallPart]) -> str:
    """Finish reason, always set: a turn whose only call was the output tool finished
    normally ("stop"); with no stop reason, "tool_calls" or "stop" from what came."""
    reason = finish_reason(stop_reason)
    has_calls = any(isinstance(p, ToolCallPart) for p in parts)
    if reason is None or (reason == "tool_calls" and not has_calls):
        return "tool_calls" if has_calls else "stop"
    return reason
