"""Calls a small model announces in prose instead of making them.

Asked to take the next step, the 0.5B/1.5B models often *describe* it ("To export the
scene I will call the "export_asset" function.", "I need to add a modifier to the Top
cube") and stop: the free-text branch of the tool-call grammar lets them. Such a turn
ends the run with the work half done. :func:`announced_tool` reads which offered tool a
text-only answer says it is about to use, so the model can be asked for exactly that call
(:class:`~agentsdk_openai.local.model.LocalChatModel` samples again with the grammar
restricted to it). A final answer that merely *mentions* a tool ("the performance tool
gives 64.8%") is not an announcement: it needs a phrase of intent as well.
"""

from __future__ import annotations

import re
from collections.abc import Collection

__all__ = [
    "announced_tool",
    "announces_a_step",
    "echoes_call_format",
    "echoes_cue",
    "offers_help",
    "sentences",
]

_CUES = (
    "if my request still needs another step",
    "use the function result above to answer",
    "never repeat a function call you already made",
    "the result has a hint: something is still wrong",
    "that call failed. do what the error says",
)
"""The template's own cues after a result (templates/qwen_tools.jinja), lower case."""


_ABOUT_THE_RESULT = re.compile(
    r"\b(?:the |this |that )?(?:function|tool)(?:'s)? (?:result|output|response|call)s? "
    r"(?:is|are|was|were|has|have|shows?)\b",
    re.IGNORECASE,
)
_SHORT = 12
"""Words: a reply about the function result this short says nothing about the request."""


def echoes_cue(text: str) -> bool:
    """The answer repeats one of the template's cues ("If my request still needs another
    step, call its function now; ...") instead of answering, is a short remark about the
    conversation itself ("The function result is already provided.", the 1.5B model's whole
    answer on godot/crate-on-floor), or only offers help (:func:`offers_help`): none of
    them tells the user anything."""
    lowered = text.lower()
    if any(cue in lowered for cue in _CUES):
        return True
    if len(text.split()) <= _SHORT and bool(_ABOUT_THE_RESULT.search(text)):
        return True
    return offers_help(text)


_OFFER = re.compile(
    r"\b(?:(?:i'?m|i am) (?:ready|here|happy|glad) to (?:help|assist)|how (?:can|may) i "
    r"(?:help|assist)|what (?:would you like|can i do|else can i)|let me know (?:if|what|how))"
    r"|^(?:i'?m|i am) (?:ready|here)\W*$",
    re.IGNORECASE,
)
_INTERJECTION = 2
"""Words: a sentence this short beside an offer of help ("Sure!", "Great, done!") adds nothing."""


def offers_help(text: str) -> bool:
    """The answer only offers help ("I'm ready to help!", "How can I assist you?", "I am
    ready."): every sentence an offer or an interjection. The 1.5B model answered "I'm
    ready to help!" after building a Godot scene (new users' prompts s17/8, s19/7);
    "Done: the box is red. Let me know if you need more." says what was done and is an
    answer."""
    said = sentences(text)
    offers = [s for s in said if _OFFER.search(s)]
    return bool(offers) and all(s in offers or len(s.split()) <= _INTERJECTION for s in said)


_FORMAT_ECHO = re.compile(
    r"reply with only a json object|\{\s*\"name\"\s*:\s*\"<function name>\"", re.I
)
"""Our template's own calling instructions, which the models sometimes write out as their
answer when they mean to call something (seen on Blender and Godot tasks)."""


def echoes_call_format(text: str) -> bool:
    """The answer repeats the template's instructions for calling a function: the model
    was about to call one and wrote the format instead."""
    return bool(_FORMAT_ECHO.search(text))


_INTENT = re.compile(
    r"\b(?:i will|i'll|i need to|i must|i should|i have to|i am going to|i'm going to|"
    r"let me|let's|we need to|we will|we'll|next,? i|now i|i can now|to do (?:this|that),|"
    r"call|calling|use)\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[a-z0-9]+")
_WINDOW = 4
"""Words allowed between the words of a tool name said in prose ("add a modifier")."""


def sentences(text: str) -> list[str]:
    """The text's sentences (split after ``.``, ``!`` or ``?`` and at line breaks), non-empty."""
    return [s for s in _SENTENCE_END.split(text.strip()) if s]


def announced_tool(text: str, offered: Collection[str]) -> str | None:
    """The offered tool a text answer announces it will call, or None.

    A sentence announces a tool when it has a phrase of intent ("I will", "I need to",
    "let me"..., or an instruction to "call" or "use" it, which the model gives the user
    instead of making the call: "To run the project, use the `run_project` function.", the
    1.5B model's whole answer on godot/hello-script) and, after it, names the tool: verbatim with its underscores
    (``export_asset``), quoted or in backticks (``"compare"``), followed by "function",
    "tool" or "(", or with the words of a multi-word name in order a few words apart
    ("add a modifier" for ``add_modifier``). A sentence ending in ":" counts as intent
    ("To call the compare function, reply with:").
    """
    if not offered or not text.strip():
        return None
    for sentence in sentences(text):
        intent = _INTENT.search(sentence)
        if intent is not None:
            tail = sentence[intent.start() :]
        elif sentence.rstrip().endswith(":"):
            tail = sentence
        else:
            continue
        found = _first_named(tail, offered) or _verb_named(tail, offered)
        if found is not None:
            return found
    return None


_STEP_AHEAD = re.compile(
    r"\b(?:i will|i'll|i need to|i must|i have to|i am going to|i'm going to|let me|"
    r"we need to|next,? i)\b\s+(?!not\b)",
    re.IGNORECASE,
)


def announces_a_step(text: str) -> bool:
    """The answer says what the model will do next ("To stack the cubes, I need to add the
    Top cube on top of the Base cube.") without naming an offered tool: asked for the next
    step or the answer, it means a step is still to be made."""
    return bool(_STEP_AHEAD.search(text))


def _verb_named(tail: str, offered: Collection[str]) -> str | None:
    """A one-word tool said as the verb of the intent: "I will render the scene"."""
    for name in offered:
        verb = rf"^{_INTENT.pattern}\s+(?:(?:call|use|run)\s+(?:the\s+)?)?{re.escape(name)}\b"
        if re.search(verb, tail, re.IGNORECASE):
            return name
    return None


def _first_named(text: str, offered: Collection[str]) -> str | None:
    """The offered tool named earliest in ``text``."""
    best: tuple[int, str] | None = None
    lowered = text.lower()
    words = [(m.group(), m.start()) for m in _WORD.finditer(lowered)]
    for name in offered:
        at = _position(lowered, words, name.lower())
        if at is not None and (best is None or at < best[0]):
            best = (at, name)
    return best[1] if best else None


def _position(text: str, words: list[tuple[str, int]], name: str) -> int | None:
    escaped = re.escape(name)
    patterns = [rf"[\"'`]{escaped}[\"'`]", rf"\b{escaped}\s*(?:\(|function\b|tool\b)"]
    if "_" in name:
        patterns.append(rf"\b{escaped}\b")
    hits = [m.start() for p in patterns if (m := re.search(p, text))]
    parts = [w for w in name.split("_") if w]
    if len(parts) > 1:
        spread = _spread(words, parts)
        if spread is not None:
            hits.append(spread)
    return min(hits) if hits else None


def _spread(words: list[tuple[str, int]], parts: list[str]) -> int | None:
    """Where the name's words start in order, each within a few words of the last."""
    for i, (word, offset) in enumerate(words):
        if not _same(word, parts[0]):
            continue
        last = i
        for part in parts[1:]:
            nxt = next(
                (j for j in range(last + 1, min(len(words), last + 2 + _WINDOW))
                 if _same(words[j][0], part)),
                None,
            )  # fmt: skip
            if nxt is None:
                break
            last = nxt
        else:
            return offset
    return None


def _same(word: str, part: str) -> bool:
    """A word of the prose is a word of the name, allowing a plural ("objects")."""
    return word == part or word == part + "s" or word + "s" == part
