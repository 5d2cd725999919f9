"""Parts of a request the run has not touched, read from the names the user gave them.

A small model asked for several things ("a red sphere named sun ... and a green box named
plate") often makes the first and then answers, the rest left out; in session 16 the
1.5B model did so on three of eight prompts no suite has. A user who names what they
want ("named plate", "called Sun", "named a, b and c") says which parts there are, and a
run in which no call's arguments and no tool result ever mention one of those names has
not made, found or changed it (a call that failed on it has not either).
:func:`unmade_names` reads them, so that
:class:`~agentsdk_openai.local.model.LocalChatModel` can ask for the call that does that
part instead of taking the answer (once per name and run).

Only names count: a part asked for without one ("and a light") cannot be told apart from
the rest, and a name that is there under the wrong kind (a light called "spire" where a
cone was asked) counts as touched.
"""

from __future__ import annotations

import json
import re

from agentsdk import ModelRequest

__all__ = ["asked_for", "named_in", "newest_request_at", "unmade_names"]

_NAMING = re.compile(r"\b(?:named|called|labell?ed|name (?:it|them))\s+(?=\S)", re.IGNORECASE)
_QUOTED = re.compile(r"""["'`\u201c\u2018]([^"'`\u201d\u2019\n]{1,40})["'`\u201d\u2019]""")
_BARE = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*(?:\.[A-Za-z0-9_\-]+)*")
_COMMA = re.compile(r"\s*,\s*(?!and\b)")
_AND = re.compile(r"\s*,?\s+and\s+")
_NOT_A_NAME = frozenset(
    "after by for with the an as in on at to from of and or that which it them this these "
    "those something anything whatever one ones its their same like".split()
)
"""Words that follow "named"/"called" without being a name ("named after the tree")."""
_STEP = frozenset(
    "add aim attach call colour color create export frame give keep let light look make "
    "move name paint place point put render rotate run save scale set show then turn use "
    "write".split()
)
"""Words that start the next instruction after "and" ("named Box and make it red")."""


def named_in(text: str) -> list[str]:
    """The names a request gives its parts, in order, each once: the word or quoted text
    after "named", "called", "labelled" or "name it", and the rest of a list that follows
    ("named a, b and c", "named left and right"). A word after a comma is a name only
    when the list goes on after it ("named spire, radius 0.5" names only spire)."""
    names: list[str] = []
    for found, _, _ in _namings(text):
        for name in found:
            if name.lower() not in (n.lower() for n in names):
                names.append(name)
    return names


def asked_for(text: str, name: str) -> str:
    """The part of the request that names ``name``: its clause, from the separator before
    the naming word to the one after the names ("a sun light named Sun above it pointing
    at it" from "Add a blue cube named Box, ..., and a sun light named Sun above it
    pointing at it."), so the cue says what kind of thing it is; the name quoted if no
    clause names it."""
    for found, start, end in _namings(text):
        if name in found:
            cuts = _cuts(text)
            before = [stop for at, stop in cuts if stop <= start]
            after = [at for at, _ in cuts if at >= end]
            clause = text[before[-1] if before else 0 : after[0] if after else len(text)]
            clause = _LEAD.sub("", clause.strip().rstrip(".!?"))
            if len(clause) > _CLAUSE_CHARS:
                clause = clause[:_CLAUSE_CHARS].rsplit(" ", 1)[0] + " ..."
            return clause
    return name


_SEPARATOR = re.compile(r"[.;!?](?:\s|$)|,\s*|\s+and\s+|\s+then\s+|\n")
_LEAD = re.compile(r"^(?:and|then|or)\s+", re.IGNORECASE)
_CLAUSE_CHARS = 120


def _cuts(text: str) -> list[tuple[int, int]]:
    """Where the separators outside brackets start and end ("(6, -6, 4)" holds none), in
    one pass over the text."""
    depth, depths = 0, []
    for char in text:
        depths.append(depth)
        depth = max(depth + (char in "([{") - (char in ")]}"), 0)
    return [(m.start(), m.end()) for m in _SEPARATOR.finditer(text) if depths[m.start()] == 0]


def _namings(text: str) -> list[tuple[list[str], int, int]]:
    """Each naming in the text: its names, where its naming word starts, and where its
    last name ends."""
    namings = []
    for naming in _NAMING.finditer(text):
        found: list[str] = []
        name, end = _name_at(text, naming.end(), first=True)
        last = end
        while name is not None:
            found.append(name)
            last = end
            comma, joined = _COMMA.match(text, end), _AND.match(text, end)
            if joined is not None:
                name, end = _name_at(text, joined.end(), first=False)
                if name is not None and name.lower() in _STEP:
                    name = None
            elif comma is not None:
                name, after = _name_at(text, comma.end(), first=False)
                # A list goes on past this item (", c" or " and c"), or it was no list.
                if name is not None and (_COMMA.match(text, after) or _AND.match(text, after)):
                    end = after
                else:
                    name = None
            else:
                name = None
        if found:
            namings.append((found, naming.start(), last))
    return namings


def _name_at(text: str, at: int, *, first: bool) -> tuple[str | None, int]:
    quoted = _QUOTED.match(text, at)
    if quoted is not None:
        return quoted.group(1).strip() or None, quoted.end()
    bare = _BARE.match(text, at)
    if bare is None:
        return None, at
    word = bare.group()
    # "named a, b and c": an article is a name only right after "named" and before a list.
    lowered = word.lower()
    listed = _COMMA.match(text, bare.end()) or _AND.match(text, bare.end())
    if lowered in _NOT_A_NAME or (lowered == "a" and not (first and listed)):
        return None, at
    return word, bare.end()


def newest_request_at(request: ModelRequest) -> int | None:
    """Where the newest user message with text is in the conversation (the request a run
    works on), or None."""
    return next(
        (i for i in range(len(request.messages) - 1, -1, -1)
         if request.messages[i].role == "user" and request.messages[i].text.strip()),
        None,
    )  # fmt: skip


def unmade_names(request: ModelRequest) -> list[str]:
    """The names the newest user message gives that no call made since mentions (as a
    whole word, in any case), nor any result, counting only calls that did not fail: the
    parts of the request not yet done. A failed call on a name ("no node 'Eye' in the
    scene") has not made it."""
    start = newest_request_at(request)
    if start is None:
        return []
    names = named_in(request.messages[start].text)
    if not names:
        return []
    after = request.messages[start + 1 :]
    failed = {r.call_id for m in after for r in m.tool_results if r.is_error}
    seen: list[str] = []
    for message in after:
        for call in message.tool_calls:
            if call.id not in failed:
                seen.append(call.raw_arguments or json.dumps(call.arguments, ensure_ascii=False))
        seen.extend(result.text for result in message.tool_results if not result.is_error)
    said = "\n".join(seen)
    return [name for name in names if not _mentions(said, name)]


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", text, re.I) is not None
