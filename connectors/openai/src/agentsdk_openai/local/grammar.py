"""Constrained tool calls: a grammar that lets the model write only calls that validate.

The embedded engine samples through llguidance, which takes a Lark-like grammar with JSON
schemas inside (``%json {...}``). For a turn that may call tools we send one:

* ``tool_choice="auto"``: the answer is either free text (which may not *start* with ``{``,
  ``[`` or a code fence) or exactly one call object ``{"name": ..., "arguments": {...}}``
  whose name is an offered tool and whose arguments satisfy that tool's schema. The choice
  is made by the first character the model writes, so free text stays free.
* ``"required"``: only the call is allowed. A tool name: only a call to that tool.

llama.cpp's server refuses a custom grammar next to ``tools``, so the tools then travel to
our chat template through ``chat_template_kwargs`` and the call is read back here
(:func:`parse_constrained`), not by the server's parser.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Sequence
from typing import Any

from agentsdk.tools import ToolSpec

from agentsdk import TextPart, ToolCallPart

__all__ = ["TURN_GRAMMAR", "call_schema", "parse_constrained", "tool_call_grammar"]

TURN_GRAMMAR = "agentsdk_grammar"
"""A key of ``settings.extra`` holding a grammar for one turn, narrower than the offered
tools' (the call for a missing part: :func:`~.unmade.pinned_makers`). The tools shown in
the prompt stay the same, so the cached prefix still holds. Not sent to the engine as is."""


def _any_case(words: str) -> str:
    """A regex for ``words`` in any letter case, with any whitespace between them."""
    return r"\s+".join(
        "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else re.escape(c) for c in word)
        for word in words.split()
    )


_ECHOES = ("to call",)
"""Openings free text may not have: the template's calling instructions ("To call a
function, reply with only a JSON object ..."). The 1.5B model wrote them out before a call
on turn after turn (threejs/floor-box-sun: ~60 tokens, some 6 s, each time) and as its
answer. With "to call a function" banned it wrote "To call a new function, reply with ..."
(finance/compare-aapl-ibm), so the two words are banned: no answer opens with them."""

# Free text may not open like a call would: ``{`` (our call format), ``[`` (a list of calls)
# or a backtick (a fenced JSON block), nor with the calling instructions (``_ECHOES``).
# llguidance lexemes take ``&`` (both) and ``~`` (not) between regexes.
_TEXT = r"/[^{\[`\s][\s\S]*/" + "".join(f" & ~/{_any_case(words)}[\\s\\S]*/" for words in _ECHOES)
# Unsupported keywords are ignored rather than failing the grammar (lenient), and oneOf is
# treated as anyOf (pydantic writes oneOf for tagged unions; llguidance needs it coerced).
# Separators are fixed to the ones the template shows and the model writes: with flexible
# whitespace a small model can loop on newlines inside a call until max_tokens. Compact ones
# (no spaces) make a call ~30% fewer tokens, but measured in session 13 they cost the 1.5B
# model 3 of the 12 three.js tasks it solved with these (its training format).
_GUIDANCE = {
    "lenient": True,
    "coerce_one_of": True,
    "whitespace_flexible": False,
    "item_separator": ", ",
    "key_separator": ": ",
}


def _rewrite_refs(node: Any, prefix: str) -> Any:
    """A copy of ``node`` whose local ``$ref``s point at ``#/$defs/<prefix><name>``."""
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                for root in ("#/$defs/", "#/definitions/"):
                    if value.startswith(root):
                        value = f"#/$defs/{prefix}{value[len(root) :]}"
                        break
                else:
                    if value == "#":
                        value = f"#/$defs/{prefix}__root"
                out[key] = value
            elif key in ("$defs", "definitions"):
                continue  # hoisted to the top by call_schema
            else:
                out[key] = _rewrite_refs(value, prefix)
        return out
    if isinstance(node, list):
        return [_rewrite_refs(item, prefix) for item in node]
    return node


def call_schema(tools: Sequence[ToolSpec]) -> dict[str, Any]:
    """The JSON schema of one call to any of ``tools``: ``{"name": <const>, "arguments": ...}``.

    Each tool's own ``$defs`` (pydantic puts nested models there) are hoisted to the top
    under a per-tool prefix, so two tools may both define a ``Vector`` without clashing.
    """
    variants: list[dict[str, Any]] = []
    defs: dict[str, Any] = {}
    for index, spec in enumerate(tools):
        prefix = f"t{index}_"
        parameters = spec.parameters or {"type": "object"}
        for section in ("$defs", "definitions"):
            for name, definition in (parameters.get(section) or {}).items():
                defs[prefix + name] = _rewrite_refs(definition, prefix)
        arguments = _rewrite_refs(parameters, prefix)
        if '"#/$defs/' + prefix + '__root"' in json.dumps(arguments):
            defs[prefix + "__root"] = arguments  # a recursive schema that refers to itself
        variants.append(
            {
                "type": "object",
                "properties": {"name": {"const": spec.name}, "arguments": arguments},
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
        )
    schema: dict[str, Any] = {"anyOf": variants, "x-guidance": _GUIDANCE}
    if defs:
        schema["$defs"] = defs
    return schema


def tool_call_grammar(tools: Sequence[ToolSpec], tool_choice: str | None) -> str | None:
    """The llguidance grammar for this turn: a call, free text that does not open like one,
    or (``tool_choice="none"``) that text alone; None when no tools are offered.

    A turn that may not call is held to text because the 1.5B model, asked for its final
    answer, wrote a call as text instead (finance/damaged-file, the loop guard's last word).
    """
    if not tools:
        return None
    if tool_choice == "none":
        return f"%llguidance {{}}\nstart: TEXT\nTEXT: {_TEXT}\n"
    offered = list(tools)
    if tool_choice and tool_choice not in ("auto", "required"):
        offered = [t for t in tools if t.name == tool_choice] or offered
    call = "%json " + json.dumps(call_schema(offered), ensure_ascii=False, separators=(",", ":"))
    if tool_choice in (None, "auto"):
        start = "start: call | TEXT"
        return f"%llguidance {{}}\n{start}\ncall: {call}\nTEXT: {_TEXT}\n"
    return f"%llguidance {{}}\nstart: call\ncall: {call}\n"


_CALL_IN_TEXT = re.compile(r'\{\s*"name"\s*:')


def parse_constrained(
    text: str, offered: Collection[str] | None = None
) -> list[TextPart | ToolCallPart]:
    """Response parts of a constrained answer: one call when it opens with ``{``, else text.

    Output the grammar shaped as a call has a known name and arguments that validated while
    they were sampled. Output cut off by ``max_tokens`` mid-call becomes a call with
    ``raw_arguments`` for the loop to report.

    With ``offered`` (the tool names of the turn), a text answer that *writes out* a call to
    one of them after some prose ("To call the performance function: {"name": ...}") is
    read as that call too: the free-text branch of the grammar cannot stop a model from
    explaining before it calls. Such a call was not shaped by the grammar; the loop
    validates its arguments like any other.
    """
    stripped = text.strip()
    if not stripped.startswith("{"):
        salvaged = _call_in_text(text, offered) if offered else None
        if salvaged is not None:
            return salvaged
        return [TextPart(text=text)] if text else []
    try:
        value = json.loads(stripped)
    except ValueError:
        return [_cut_off_call(stripped)]
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return [TextPart(text=text)]
    arguments = value.get("arguments")
    if not isinstance(arguments, dict):
        return [ToolCallPart(name=value["name"], arguments={}, raw_arguments=json.dumps(arguments))]
    return [ToolCallPart(name=value["name"], arguments=arguments)]


def _call_in_text(text: str, offered: Collection[str]) -> list[TextPart | ToolCallPart] | None:
    """The first well-formed call to an offered tool written inside prose, with the prose
    before it as text; None when there is none."""
    decoder = json.JSONDecoder()
    for match in _CALL_IN_TEXT.finditer(text):
        try:
            value, _end = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        arguments = value.get("arguments") if isinstance(value, dict) else None
        if value.get("name") in offered and isinstance(arguments, dict):
            call = ToolCallPart(name=value["name"], arguments=arguments)
            lead = text[: match.start()].strip()
            return [TextPart(text=lead), call] if lead else [call]
    return None


def _cut_off_call(text: str) -> ToolCallPart:
    """A call the token limit cut short: its name if it got that far, the rest as raw text."""
    head, _, rest = text.partition('"arguments"')
    name = ""
    try:
        name = json.loads(head.rstrip().rstrip(",") + "}").get("name", "")
    except (ValueError, AttributeError):
        pass
    raw = rest.lstrip().lstrip(":").strip() or text
    return ToolCallPart(name=name or "unknown", arguments={}, raw_arguments=raw)
