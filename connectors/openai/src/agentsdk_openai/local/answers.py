"""Judging a local model's text answer: whether it tells the user anything, and what to
cut from it.

:class:`~agentsdk_openai.local.model.LocalChatModel` asks again, or escalates, on an answer
that is no answer (:func:`not_an_answer`: empty, a cue or the calling format echoed, the
request restated, a tool result's JSON pasted in); it cuts pasted JSON off the end of a
real answer (:func:`without_pasted_json`), owns up to files it could not write
(:func:`owned_up`) and keeps the whole sentences of an answer cut off at the output-token
limit (:func:`whole_sentences`).
"""

from __future__ import annotations

import difflib
import logging
import re
from typing import Literal

from agentsdk import ModelRequest, ModelResponse, TextPart

from .announced import echoes_call_format, echoes_cue, sentences
from .unmade import Part, files_no_tool_writes, mentions

__all__ = [
    "echo_kind",
    "echoes_request",
    "listed",
    "not_an_answer",
    "owned_up",
    "whole_sentences",
    "without_pasted_json",
]

logger = logging.getLogger("agentsdk_openai.local")


def echoes_request(request: ModelRequest, response: ModelResponse) -> bool:
    """The answer, after some tool result, is a user message word for word or nearly (the
    0.5B and 1.5B models both answer with the request when unsure): no answer at all."""
    return echo_kind(request, response) is not None


def echo_kind(
    request: ModelRequest, response: ModelResponse
) -> Literal["request", "clause"] | None:
    """How the answer echoes the request (see :func:`echoes_request`): ``"clause"`` when it
    is "To" and one clause of a user message (:func:`_restates_a_clause`), else
    ``"request"`` when it is a whole user message, word for word or nearly."""
    users = [m for m in request.messages if m.role == "user" and m.text.strip()]
    if not users or not any(m.role == "tool" for m in request.messages):
        return None

    said = _words(response.text)
    if not said:
        return None
    whole = False
    for message in users:
        asked = _words(message.text)
        if said == asked:
            whole = True
            continue
        if _restates_a_clause(asked, said):
            return "clause"
        # Or nearly: the request restated with a lead-in ("To build the scene, add a red
        # object named Target, a camera, and a light, so that ..."), most of its words in
        # order and little else.
        matcher = difflib.SequenceMatcher(None, asked, said, autojunk=False)
        if len(asked) >= 8 and matcher.ratio() >= 0.88:
            whole = True
    return "request" if whole else None


def _words(text: str) -> list[str]:
    return text.lower().replace(".", " ").replace(",", " ").split()


def _restates_a_clause(asked: list[str], said: list[str]) -> bool:
    """The answer is "To" and then one clause of the request word for word: "To compare them
    over their common dates, give both returns, cite each source, and write 'higher:
    <ticker>'." (the 1.5B model's whole answer on finance/compare-aapl-ibm, after the
    compare call had returned both). It states a goal and reports nothing; an answer that
    reuses the request's words ("AAPL had the higher total return...") does not open so."""
    if len(said) < 6 or said[0] != "to":
        return False
    rest = said[1:]
    matcher = difflib.SequenceMatcher(None, asked, rest, autojunk=False)
    longest = max((block.size for block in matcher.get_matching_blocks()), default=0)
    return longest >= 0.9 * len(rest)


_JSON_FIELD = re.compile(r'"\s*:\s*[\[{"\d-]')
"""A JSON key followed by its value: an answer with several is a pasted tool result."""


_PASTED_KEY = re.compile(r'[,{\[]?\s*"[\w .-]+"\s*:\s*[\[{"\d-]')
_MIN_PROSE = 20
"""Characters of the answer's own words before pasted JSON for it to be kept as an answer."""


def without_pasted_json(request: ModelRequest, response: ModelResponse) -> ModelResponse:
    """A text answer that goes on into a tool result's JSON (three or more ``"key": value``
    pairs after the answer's own words) is cut where the JSON starts. The 0.5B model
    wrote the summary line, then the rest of the result's JSON: 27 fields on
    finance/aapl-cagr, and on goog-year-end-close so many numbers that the answer read as
    a list of guesses. An answer that is JSON from its start is left for
    :func:`not_an_answer`."""
    if response.tool_calls or not any(m.role == "tool" for m in request.messages):
        return response
    text = response.text
    found = _PASTED_KEY.search(text)
    if found is None or len(_JSON_FIELD.findall(text, found.start())) < 3:
        return response
    kept = text[: found.start()].rstrip(" ,;:{[\n")
    if len(kept) < _MIN_PROSE:
        return response
    return response.model_copy(update={"parts": [TextPart(text=kept)]})


def not_an_answer(request: ModelRequest, response: ModelResponse) -> bool:
    """A reply without calls that tells the user nothing of its own: empty, one of the
    template's cues or its calling format, the request restated, or a tool result's JSON pasted in (the 0.5B
    model did each on the finance suite, after the connector had already asked again)."""
    if response.tool_calls:
        return False
    text = response.text.strip()
    if not text or echoes_cue(text) or echoes_call_format(text):
        return True
    if echoes_request(request, response):
        return True
    return len(_JSON_FIELD.findall(text)) >= 3


_NOT_DONE = re.compile(
    r"\b(?:not|cannot|can't|couldn't|unable|no (?:tool|function)s?|none of)\b", re.IGNORECASE
)


def owned_up(request: ModelRequest, response: ModelResponse) -> ModelResponse:
    """An answer that speaks of a file the request names while no offered tool can write
    one (:func:`~.unmade.files_no_tool_writes`) as if it were written: its sentences that
    name the file without saying it was not done are dropped, and one that says so is
    added. With three.js's default tools, asked to export to desk.glb, the 1.5B model
    answered "The scene is saved as desk.glb."; asked again under a cue saying the export
    could not be done, the 0.5B model said it again and the 1.5B model left it out."""
    if response.tool_calls or not response.text.strip():
        return response
    said = sentences(response.text)
    claimed = [
        part
        for part in files_no_tool_writes(request)
        if any(mentions(s, part.key) and not _NOT_DONE.search(s) for s in said)
    ]
    if not claimed:
        return response
    logger.info("the answer spoke of %s as done; no offered tool can write it", claimed[0].key)
    kept = [s for s in said if not any(mentions(s, part.key) for part in claimed)]
    note = f"Not done: {listed(claimed)}, which none of the tools I have can do."
    return response.model_copy(update={"parts": [TextPart(text=" ".join([*kept, note]))]})


def listed(parts: list[Part]) -> str:
    """The clauses of the request that ask for these parts, quoted ("a sun light named Sun
    above it", "export the scene to tree.glb"), each once, for the cue."""
    shown = list(dict.fromkeys(f'"{part.clause}"' for part in parts))
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


_ENDED = re.compile(r"[.!?](?:[\"')\]]*)$")
_FENCE = "```"


def whole_sentences(text: str) -> str:
    """What an answer cut off at the output-token limit said in whole: its sentences up to
    the one cut in the middle, or to the first that only repeats an earlier one (the loop
    that ran it to the limit), and none inside a code block left open; "" when no sentence
    is whole. On a new user's prompt (s25/8) the 1.5B model, its scene done, wrote text to
    the 1,024-token cap and the run ended on the error, its work done."""
    if text.count(_FENCE) % 2:
        text = text[: text.rfind(_FENCE)]
    kept: list[str] = []
    seen: set[str] = set()
    for sentence in re.split(r"(?<=[.!?])\s+", text.strip()):
        said = " ".join(sentence.split())
        key = said.lower()
        if not said or key in seen or not _ENDED.search(said):
            break
        seen.add(key)
        kept.append(said)
    return " ".join(kept)
