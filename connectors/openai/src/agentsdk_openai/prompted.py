"""Prompted tool calling for engines without a tool-call parser.

The tool specs go into the system prompt; the model's calls are read back from its
text in any of three shapes small models commonly produce:

* ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` tags,
* a fenced block: ```` ```json {"name": ..., "arguments": {...}} ``` ````,
* bare JSON: the whole answer (or a line of it) is ``{"name": ..., "arguments": {...}}``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from agentsdk.tools import ToolSpec

from agentsdk import TextPart, ToolCallPart

from ._wire import dumps

__all__ = ["parse_tool_calls", "render_tool_calls", "tool_prompt"]

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FENCED = re.compile(r"```(?:json|JSON|tool_call)?\s*\n?(.*?)```", re.DOTALL)
_NAME = re.compile(r'"name"\s*:\s*"([^"]+)"')
_ARGUMENTS = re.compile(r'"(?:arguments|parameters)"\s*:\s*(.*)$', re.DOTALL)


def tool_prompt(tools: Sequence[ToolSpec], tool_choice: str | None) -> str:
    """The text appended to the system prompt that describes the tools and the call format."""
    lines = ["You can call these tools:"]
    for spec in tools:
        lines.append(
            dumps(
                {"name": spec.name, "description": spec.description, "parameters": spec.parameters}
            )
        )
    lines += [
        "",
        "To call a tool, reply with one line per call, exactly in this form and with nothing else:",
        '<tool_call>{"name": "<tool name>", "arguments": {<arguments as JSON>}}</tool_call>',
        "After the tool results come back, answer the user in plain text.",
    ]
    if tool_choice == "required":
        lines.append("You must call at least one tool now.")
    elif tool_choice and tool_choice not in ("auto", "none"):
        lines.append(f"You must call the tool {tool_choice} now.")
    return "\n".join(lines)


def render_tool_calls(calls: Sequence[ToolCallPart]) -> str:
    """How an earlier call is shown back to the model in the history (same tag format)."""
    return "\n".join(
        f"<tool_call>{dumps({'name': c.name, 'arguments': c.arguments})}</tool_call>" for c in calls
    )


_CALL_SHAPES = ({"name", "arguments"}, {"name", "parameters"})


def _call_from_object(obj: Any, known: set[str] | None) -> ToolCallPart | None:
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
        return None
    if known is not None and obj["name"] not in known and set(obj) not in _CALL_SHAPES:
        return None  # JSON that merely has a "name" field, not a call
    arguments = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(arguments, str):  # some models JSON-encode the arguments twice
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return ToolCallPart(name=obj["name"], arguments={}, raw_arguments=arguments)
    if not isinstance(arguments, dict):
        return ToolCallPart(name=obj["name"], arguments={}, raw_arguments=dumps(arguments))
    return ToolCallPart(name=obj["name"], arguments=arguments)


def _calls_from_json(text: str, known: set[str] | None = None) -> list[ToolCallPart] | None:
    """Calls in a JSON text holding one call object or a list of them; None if it is not that.

    With ``known``, an object counts when it names a known tool or has exactly the shape
    of a call (``name`` plus ``arguments``); an unknown name then reaches the loop, which
    tells the model which tools exist.
    """
    try:
        value = json.loads(text)
    except ValueError:
        return None
    objects = value if isinstance(value, list) else [value]
    calls = [_call_from_object(o, known) for o in objects]
    if not calls or any(c is None for c in calls):
        return None
    return [c for c in calls if c is not None]


def _broken_call(text: str) -> ToolCallPart | None:
    """A call whose JSON does not parse but whose tool name can be read."""
    name = _NAME.search(text)
    if name is None:
        return None
    args = _ARGUMENTS.search(text)
    raw = args.group(1).strip() if args else text
    if raw.endswith("}") and raw.count("}") > raw.count("{"):
        raw = raw[:-1].rstrip()  # the closing brace of the outer call object
    return ToolCallPart(name=name.group(1), arguments={}, raw_arguments=raw)


def parse_tool_calls(text: str, tool_names: Sequence[str]) -> tuple[str, list[ToolCallPart]]:
    """Split a model's text into (remaining text, tool calls).

    Tagged calls are always taken (an unknown name lets the loop tell the model which
    tools exist). Fenced and bare JSON count as calls when they name an offered tool or
    have exactly the shape of a call, so an answer that merely contains JSON is left alone.
    """
    tagged = list(_TAGGED.finditer(text))
    if tagged:
        calls: list[ToolCallPart] = []
        for match in tagged:
            found = _calls_from_json(match.group(1))
            if found is None:
                broken = _broken_call(match.group(1))
                found = [broken] if broken else []
            calls.extend(found)
        remaining = _TAGGED.sub("", text).strip()
        return remaining, calls

    known = set(tool_names)

    for match in _FENCED.finditer(text):
        found = _calls_from_json(match.group(1).strip(), known)
        if found:
            remaining = (text[: match.start()] + text[match.end() :]).strip()
            return remaining, found

    stripped = text.strip()
    found = _calls_from_json(stripped, known)
    if found:
        return "", found
    # One call object per line, possibly after a sentence of preamble.
    line_calls: list[ToolCallPart] = []
    kept: list[str] = []
    for line in stripped.splitlines():
        candidate = (
            _calls_from_json(line.strip(), known) if line.strip().startswith(("{", "[")) else None
        )
        if candidate:
            line_calls.extend(candidate)
        else:
            kept.append(line)
    if line_calls:
        return "\n".join(kept).strip(), line_calls
    # A lone object naming an offered tool whose JSON is broken: let the model fix it.
    if stripped.startswith("{"):
        broken = _broken_call(stripped)
        if broken is not None and broken.name in known:
            return "", [broken]
    return text, []


def response_parts(text: str, tool_names: Sequence[str]) -> list[TextPart | ToolCallPart]:
    """Response parts for a prompted model's answer."""
    remaining, calls = parse_tool_calls(text, tool_names)
    parts: list[TextPart | ToolCallPart] = []
    if remaining:
        parts.append(TextPart(text=remaining))
    parts.extend(calls)
    return parts
