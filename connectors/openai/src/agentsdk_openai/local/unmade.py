"""Parts of a request the run has not touched, read from the names the user gave them.

A small model asked for several things ("a red sphere named sun ... and a green box named
plate") often makes the first and then answers, the rest left out; in session 16 the
1.5B model did so on three of eight prompts no suite has. A user who names what they
want ("named plate", "called Sun", "named a, b and c") says which parts there are, and a
run in which no call's arguments and no tool result ever mention one of those names has
not made, found or changed it (a call that failed on it has not either).
:func:`unmade_names` reads them, so that
:class:`~agentsdk_openai.local.model.LocalChatModel` can ask for the call that does that
part instead of taking the answer (one part per answer, each once per run).

Two more kinds of part are read the same way (:func:`unmade_parts`):
- a file the request names ("export the scene to tree.glb", "fix hello.gd"), untouched
  while no call or result mentions it; only when an offered tool takes a file (a
  ``path``, ``scene`` or ``script`` parameter);
- an output step the request asks for by a verb that names an offered tool ("render the
  result" with a ``render`` tool, "Take a screenshot" with ``game_screenshot``), not done
  while no call since the request went to such a tool. Only the steps that deliver an
  image or a file count (:data:`OUTPUT_STEPS`): a small model told it is done writes
  "Render the result." as its answer, and the 1.5B model answered the three.js export
  task without exporting. Building verbs ("add", "place", "set") do not count: the part
  they build is read from its name, and the tool they match may not be the one that
  builds it (Blender's ``add_modifier`` for "Add a sun light").

A named part made as another kind of thing than asked counts as undone too: a light or
a camera where the words before "named" ask for the other or for a shape ("a sun light
named Key" made as a cone), or either where they ask for a shape ("a red sphere named
apple" made as a light). Only the call that made it is judged (the first with that
``name`` argument), by its tool's name and its ``type``/``kind``/``shape`` arguments.

Otherwise only names count: a part asked for without one ("and a light") cannot be told
apart from the rest.

A name still missing is asked for with the call that makes it under that name
(:func:`pinned_makers`): the offered tools that declare the argument naming what they make
(``@tool(creates="name")``), that argument held to the name. Told in the cue which part
was left, the 1.5B model sent the first part's call again (s18's p1 for p2). So is one
that a call needs before any call has made it (:func:`premature_part`: an export of A, B
and C with only A made), when the request asks for it as a new part (:func:`asked_as_new`:
not "the object named lamp").
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from agentsdk.tools import ToolSpec

from agentsdk import ModelRequest, ToolCallPart

__all__ = [
    "OUTPUT_STEPS",
    "SIDE_NAME",
    "Part",
    "another_kind_unmade",
    "as_named",
    "asked_as_new",
    "asked_for",
    "described",
    "does_step",
    "files_in",
    "files_no_tool_writes",
    "head_of",
    "kind_of",
    "made_since_request",
    "makes_another_kind",
    "mentions",
    "named_in",
    "named_together",
    "newest_request_at",
    "noun_phrase",
    "pinned_makers",
    "premature_part",
    "steps_in",
    "unmade_names",
    "unmade_parts",
]

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


_FILE = re.compile(
    r"(?<![\w.\-])[A-Za-z0-9_][\w\-]*\.(?:glb|gltf|obj|fbx|stl|ply|dae|usdz?|usd[ac]|blend|"
    r"tscn|tres|scn|gd|gdshader|cs|unity|prefab|png|jpe?g|webp|exr|hdr|svg|csv|json|txt|md|"
    r"html|py|wav|ogg|mp3|pdf)(?![\w\-])",
    re.IGNORECASE,
)
"""A file name with an extension a 3D, game or research request names a file by ("tree.glb",
"main.tscn", "report.md"); "three.js" and version numbers are not files."""

OUTPUT_STEPS: dict[str, str] = {
    "render": r"render(?:s|ed|ing)?",
    "export": r"export(?:s|ed|ing)?",
    "save": r"sav(?:e|es|ed|ing)",
    "screenshot": r"screenshots?",
}
"""The steps that deliver an image or a file, each with the words a request asks for it by;
a tool does one when a word of its name (split at ``_``) is the step (``render``,
``export_glb``, ``game_screenshot``; not ``compare_renders``). Not "chart": finance's
"a research report with charts" is one ``research_report`` call, no ``chart`` one."""
_STEP_WORDS = {
    step: re.compile(rf"\b{words}\b", re.IGNORECASE) for step, words in OUTPUT_STEPS.items()
}


@dataclass(frozen=True, slots=True)
class Part:
    """A part of a request: what it is (a name, a file, or an output step) and the clause
    of the request that asks for it, for the cue."""

    kind: str
    """``"name"``, ``"file"`` or ``"step"``; ``"kind"`` for a name made as another kind
    of thing than asked (a cone called Key where a light was); ``"cannot"`` for a file
    no offered tool can write (:func:`files_no_tool_writes`)."""
    key: str
    """The name or file as written, or the step (``"render"``)."""
    clause: str


def files_in(text: str) -> list[str]:
    """The file names a request mentions, in order, each once (in any case)."""
    files: list[str] = []
    for found in _FILE.finditer(text):
        if found.group().lower() not in (f.lower() for f in files):
            files.append(found.group())
    return files


def steps_in(text: str, tools: list[str]) -> list[str]:
    """The output steps (:data:`OUTPUT_STEPS`) a request asks for that one of these tools
    does, in the order the request asks for them."""
    return [step for step, _ in _steps(text, tools)]


def _steps(text: str, tools: list[str]) -> list[tuple[str, re.Match[str]]]:
    """:func:`steps_in`, each step with the word that asks for it."""
    found = [(step, m) for step in OUTPUT_STEPS
             if any(does_step(tool, step) for tool in tools)
             for m in [_asks_for(text, step)] if m is not None]  # fmt: skip
    return sorted(found, key=lambda item: item[1].start())


_DEFINITE_WORDS = frozenset(
    "the this that these those its their his her my your our each every".split()
)
"""Determiners that point at a thing already there."""
_DEFINITE = re.compile(rf"\b(?:{'|'.join(sorted(_DEFINITE_WORDS))})\s+$", re.IGNORECASE)
"""Words before a step's noun that point at one already there ("The render from the scene
camera shows nothing" describes the scene; "Take a screenshot" asks for one)."""


def _asks_for(text: str, step: str) -> re.Match[str] | None:
    """The last word that asks for the step: any form of it, but not a noun that points at
    an existing one. The last, since a request ends with the instruction ("so that a
    screenshot shows Target ... Take a screenshot to check")."""
    asking = [
        m for m in _STEP_WORDS[step].finditer(text) if not _DEFINITE.search(text, 0, m.start())
    ]
    return asking[-1] if asking else None


_FILE_PARAMETER = re.compile(r"path|file|scene|script", re.IGNORECASE)


def _takes_a_file(parameters: dict[str, object]) -> bool:
    """A tool with a parameter that names a file (``path``, ``scene``, ``script``...): a
    file the request names can be done with a call only when some tool takes one (three.js's
    default tools do not export; asked for ``desk.glb`` then, a model could only call
    something else)."""
    properties = parameters.get("properties")
    return isinstance(properties, dict) and any(_FILE_PARAMETER.search(k) for k in properties)


def does_step(tool: str, step: str) -> bool:
    """Whether a tool of this name does the output step (a word of its name is the step)."""
    return step in tool.lower().split("_")


def asked_for(text: str, name: str) -> str:
    """The part of the request that names ``name``: its clause, from the separator before
    the naming word to the one after the names ("a sun light named Sun above it pointing
    at it" from "Add a blue cube named Box, ..., and a sun light named Sun above it
    pointing at it."), so the cue says what kind of thing it is; the name quoted if no
    clause names it."""
    span = _naming_of(text, name)
    return name if span is None else _clause(text, *span)


def described(text: str, name: str) -> str:
    """All the request says of the part named ``name``: from the clause that names it to
    the separator before the clause that names the next part, or to the end ("a blue
    cylinder named tower, radius 1 and height 5, standing on the ground at (3, 0, 3)" from
    "Create a blue cylinder named tower, radius 1 and height 5, standing on the ground at
    (3, 0, 3), and a yellow point light named lamp at (0, 6, 0)."); empty when no naming
    gives ``name`` (in any case)."""
    namings = _namings(text)
    at = next(
        (i for i, (found, _, _) in enumerate(namings)
         if name.lower() in (n.lower() for n in found)),
        None,
    )  # fmt: skip
    if at is None:
        return ""
    _, start, last = namings[at]
    cuts = _cuts(text)
    begin = max((stop for _, stop in cuts if stop <= start), default=0)
    if at + 1 < len(namings):
        following = namings[at + 1][1]
        end = max(
            (cut for cut, stop in cuts if last <= cut and stop <= following), default=following
        )
    else:
        end = len(text)
    return _LEAD.sub("", text[begin:end].strip().rstrip(".!?"))


def _naming_of(text: str, name: str) -> tuple[int, int] | None:
    """Where the naming that gives ``name`` starts (its naming word) and ends (its last
    name), or None if no naming gives it."""
    return next(((start, end) for found, start, end in _namings(text) if name in found), None)


def named_together(text: str, name: str) -> list[str]:
    """The names one naming gives with ``name``, in order ("a, b and c" in "three boxes
    named a, b and c"); just ``name`` when it is named alone, empty when no naming gives it."""
    return next(
        (found for found, _, _ in _namings(text) if name.lower() in (n.lower() for n in found)),
        [],
    )


def _clause(text: str, start: int, end: int) -> str:
    """The clause of the text around ``text[start:end]``: from the separator before it to
    the one after it, shortened to :data:`_CLAUSE_CHARS`."""
    cuts = _cuts(text)
    before = [stop for at, stop in cuts if stop <= start]
    after = [at for at, _ in cuts if at >= end]
    clause = text[before[-1] if before else 0 : after[0] if after else len(text)]
    clause = _LEAD.sub("", clause.strip().rstrip(".!?"))
    if len(clause) > _CLAUSE_CHARS:
        clause = clause[:_CLAUSE_CHARS].rsplit(" ", 1)[0] + " ..."
    return clause


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


def files_no_tool_writes(request: ModelRequest) -> list[Part]:
    """The files the newest user message names when no offered tool takes a file (kind
    ``"cannot"``): no call can write them. With three.js's default tools, asked to "export
    the scene to desk.glb", the 1.5B model answered "The scene is saved as desk.glb."."""
    start = newest_request_at(request)
    if start is None or any(_takes_a_file(tool.parameters) for tool in request.tools):
        return []
    text = request.messages[start].text
    found = []
    for file in files_in(text):
        at = text.lower().index(file.lower())
        found.append(Part("cannot", file, _clause(text, at, at + len(file))))
    return found


_RUN_ON = re.compile(
    r"\d|\b(?:of|with|radius|diameter|tall|high|wide|deep|long|thick|across|size|sized|"
    r"metres?|meters?|m|cm|mm|units?|at|on|resting|standing|above|below|under)\b",
    re.IGNORECASE,
)
"""Words that, after a name, say something about the part rather than name it ("Ball of
radius 1", "Grass 20 m across")."""


def as_named(request: ModelRequest, value: str) -> str | None:
    """The name the newest request gives that ``value`` is, run on with words about the
    part ("Ball of radius 1" for "a red sphere named Ball of radius 1"); None when
    ``value`` is a name the request gives, or is not such a name run on. The 1.5B model
    named objects so in session 17 (``Ball of radius 1``, ``Grass 20 m``)."""
    start = newest_request_at(request)
    if start is None or not value:
        return None
    names = named_in(request.messages[start].text)
    if any(value.lower() == name.lower() for name in names):
        return None
    for name in sorted(names, key=len, reverse=True):
        head, rest = value[: len(name)], value[len(name) :]
        if head.lower() == name.lower() and rest[:1].isspace() and _RUN_ON.match(rest.strip()):
            return name
    return None


def unmade_names(request: ModelRequest) -> list[str]:
    """The names the newest user message gives that no call made since mentions (as a
    whole word, in any case), nor any result, counting only calls that did not fail: the
    parts of the request not yet done. A failed call on a name ("no node 'Eye' in the
    scene") has not made it."""
    return [part.key for part in unmade_parts(request) if part.kind == "name"]


def made_since_request(request: ModelRequest) -> list[ToolCallPart]:
    """The calls made since the newest request whose results came back without an error."""
    start = newest_request_at(request)
    after = request.messages[start + 1 :] if start is not None else []
    failed = {r.call_id for m in after for r in m.tool_results if r.is_error}
    return [call for m in after for call in m.tool_calls if call.id not in failed]


def unmade_parts(request: ModelRequest) -> list[Part]:
    """The parts of the newest user message no call made since has done, in the order the
    request gives them, each once: names and files that no call that did not fail, nor any
    of those calls' results, mentions (:func:`unmade_names`), and output steps
    (:func:`steps_in`) that no call that did not fail went to a tool for, or that were
    taken before a part they show was changed (:func:`_changed_after`)."""
    start = newest_request_at(request)
    if start is None:
        return []
    text = request.messages[start].text
    names = named_in(text)
    files = files_in(text) if any(_takes_a_file(tool.parameters) for tool in request.tools) else []
    steps = _steps(text, [tool.name for tool in request.tools])
    if not (names or files or steps):
        return []
    after = request.messages[start + 1 :]
    made = made_since_request(request)
    said = "\n".join(
        [c.raw_arguments or json.dumps(c.arguments, ensure_ascii=False) for c in made]
        + [r.text for m in after for r in m.tool_results if not r.is_error]
    )
    found: list[tuple[int, Part]] = []
    for name in names:
        kind = "name" if not mentions(said, name) else None
        if kind is None and _made_as_another_kind(text, name, made):
            kind = "kind"
        if kind is not None:
            span = _naming_of(text, name)
            at = span[0] if span is not None else 0
            found.append((at, Part(kind, name, asked_for(text, name))))
    for file in files:
        if file.lower() not in (name.lower() for name in names) and not mentions(said, file):
            at = text.lower().index(file.lower())
            found.append((at, Part("file", file, _clause(text, at, at + len(file)))))
    for step, words in steps:
        done = [i for i, call in enumerate(made) if does_step(call.name, step)]
        if not done or _changed_after(request, text, made, done[-1], words.start()):
            found.append((words.start(), Part("step", step, _clause(text, *words.span()))))
    found.sort(key=lambda item: item[0])
    return [part for _, part in found]


def _changed_after(
    request: ModelRequest, text: str, made: list[ToolCallPart], done: int, asked_at: int
) -> bool:
    """Whether a call after ``made[done]`` (the newest call doing an output step) changed a
    part the request names before asking for the step: a call of a world-changing tool
    (``side_effects``) that does no output step itself, with that part's name among its
    arguments. The step then showed the scene before the part was as asked: on s18/6 the
    1.5B model rendered, then placed the camera named Shot that the render was to be taken
    from, and answered. Tools that declare no side effects change nothing here."""
    changing = {
        tool.name
        for tool in request.tools
        if tool.side_effects and not any(does_step(tool.name, step) for step in OUTPUT_STEPS)
    }
    if not changing:
        return False
    before = [name for found, start, _ in _namings(text) if start < asked_at for name in found]
    for call in made[done + 1 :]:
        if call.name not in changing:
            continue
        said = call.raw_arguments or json.dumps(call.arguments, ensure_ascii=False)
        if any(mentions(said, name) for name in before):
            return True
    return False


_LIGHT = re.compile(
    r"\w*light\b(?!\s*-?\s*(?:blue|green|grey|gray|red|yellow|pink|purple|brown|orange|"
    r"colou?r))|\blamps?\b",
    re.IGNORECASE,
)
_CAMERA = re.compile(r"camera", re.IGNORECASE)
_SHAPE = re.compile(
    r"\b(?:cube|box|sphere|ball|cylinder|cone|plane|torus|capsule|pyramid)(?:e?s)?\b", re.I
)
_KIND_ARGUMENTS = ("type", "kind", "shape", "class", "primitive", "component")
"""Arguments whose values say what a call makes (``type="OmniLight"``, ``kind="cone"``), as
against ones that only describe it (``color="lightgrey"``)."""


def kind_of(text: str) -> str | None:
    """The kind of thing words speak of: ``"light"`` (a lamp, any light but a colour such
    as "light blue"), ``"camera"``, ``"shape"`` (cube, sphere, cone...), or None."""
    if _LIGHT.search(text):
        return "light"
    if _CAMERA.search(text):
        return "camera"
    return "shape" if _SHAPE.search(text) else None


def _made_as_another_kind(text: str, name: str, calls: list[ToolCallPart]) -> bool:
    """The call that made ``name`` (the first with that ``name`` argument) made another
    kind of thing than the request asks for: a light or a camera where the words before
    "named" ask for the other or for a shape, or either where they ask for a shape. The
    1.5B model made a cone called Key for "a sun light named Key", a sphere called Cam for
    "a camera named Cam" and a light called apple for "a red sphere named apple"."""
    maker = next(
        (c for c in calls if str(c.arguments.get("name", "")).lower() == name.lower()), None
    )
    return maker is not None and makes_another_kind(text, name, maker)


def makes_another_kind(text: str, name: str, maker: ToolCallPart) -> bool:
    """Whether ``maker``, a call that names what it makes ``name``, makes another kind of
    thing than the request ``text`` asks for under that name (:func:`_made_as_another_kind`)."""
    asked = kind_of(head_of(text, name))
    if asked is None:
        return False
    said = [maker.name] + [
        json.dumps(value, ensure_ascii=False)
        for key, value in maker.arguments.items()
        if any(word in key.lower() for word in _KIND_ARGUMENTS)
    ]
    made = kind_of(" ".join(said))
    if asked == "shape":
        return made in ("light", "camera")
    return made != asked


def another_kind_unmade(request: ModelRequest, calls: list[ToolCallPart]) -> Part | None:
    """The part of the newest request that one of ``calls`` (the first that does) would
    make as another kind of thing (:func:`makes_another_kind`): a call to a tool that
    declares what it makes, whose naming argument is a name the request gives that no
    call has made yet (:func:`unmade_names`); None when no call does."""
    makers = {tool.name: tool.creates for tool in request.tools if tool.creates is not None}
    start = newest_request_at(request)
    if not makers or start is None:
        return None
    text = request.messages[start].text
    unmade = {name.lower(): name for name in unmade_names(request)}
    for call in calls:
        name = _missing_made(call, makers, unmade)
        if name is not None and makes_another_kind(text, name, call):
            return Part("name", name, asked_for(text, name))
    return None


def _missing_made(call: ToolCallPart, makers: dict[str, str], unmade: dict[str, str]) -> str | None:
    """The missing name (``unmade``: lowercased -> as given) that ``call`` makes, when it
    goes to one of the ``makers`` (tool -> the argument naming what it makes); else None."""
    key = makers.get(call.name)
    value = call.arguments.get(key) if key is not None else None
    return unmade.get(value.lower()) if isinstance(value, str) else None


_INDEFINITE_WORDS = frozenset("a an some one two three four five six seven eight nine ten".split())
_DETERMINER = re.compile(
    rf"\b(?:{'|'.join(sorted(_DEFINITE_WORDS | _INDEFINITE_WORDS))}|\d+)\b", re.IGNORECASE
)
_THERE = re.compile(
    r"\b(?:there\s+(?:is|are|was|were)|there's|has|have|had|contains?|holds?|shows?)\b",
    re.IGNORECASE,
)


def noun_phrase(head: str) -> tuple[str, str]:
    """The last determiner of the words before a naming word and the words after it
    ("the", "object " from "Make the object "; "three", "cubes " from "Create three
    cubes "); ``("", head)`` when there is none."""
    found = list(_DETERMINER.finditer(head))
    if not found:
        return "", head
    return found[-1].group().lower(), head[found[-1].end() :]


def asked_as_new(text: str, name: str) -> bool:
    """Whether the request asks for the part named ``name`` as a new one: the words before
    its naming word point at one (the last determiner is not "the", "this", "its"...: "Make
    the object named lamp visible" and "except the cube named Crate" speak of parts the
    scene has), and its clause does not say the scene has it ("There is a cube named
    Crate", "The scene has a sphere named Ball")."""
    head = head_of(text, name)
    if not head:
        return False
    determiner, _ = noun_phrase(head)
    return determiner not in _DEFINITE_WORDS and not _THERE.search(head)


SIDE_NAME = re.compile(r"^([a-z]+)_names?$", re.IGNORECASE)
"""Arguments that name a new thing a call makes on the way (``root_name`` of Godot's
``create_scene``, a ``new_name``), rather than the one it works on or makes; the group is
that thing ("root")."""


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    return []


def premature_part(request: ModelRequest, calls: list[ToolCallPart]) -> Part | None:
    """The named part of the newest request that ``calls`` need made first, when none of
    them makes a part still missing (:func:`unmade_names`) with a tool that declares what
    it makes; None otherwise. Either

    - a call to a tool that makes nothing works on such a part (a name among its
      arguments, not one it gives a new thing such as ``root_name``) that the request asks
      for as a new one (:func:`asked_as_new`): ``export_asset(names=["A", "B", "C"])``
      with only A made, ``fit_view(names=["car", "truck"])`` before the truck,
      ``set_transform(name="Cam")`` for "a camera named Cam" never placed, each of which
      fails; or
    - the newest result is a failure that names such a part ("no object named C") of a
      call that did not mean to make it: the call after it works around the missing part
      instead (the 1.5B model exported A and B only, then all three again, until the loop
      guard ended the run).

    The first such part, in the order the calls name them."""
    unmade = {name.lower(): name for name in unmade_names(request)}
    start = newest_request_at(request)
    if not unmade or start is None:
        return None
    makers = {tool.name: tool.creates for tool in request.tools if tool.creates is not None}
    if any(_missing_made(call, makers, unmade) is not None for call in calls):
        return None
    text = request.messages[start].text
    for call in calls:
        if call.name in makers:
            continue
        for key, value in call.arguments.items():
            if SIDE_NAME.match(key):
                continue
            for said in _strings(value):
                name = unmade.get(said.strip().lower())
                if name is not None and asked_as_new(text, name):
                    return Part("name", name, asked_for(text, name))
    # A failed call that made (or meant to make) the part is left to the model to fix: a
    # call that could not make it (Godot's add_node before its scene) may need another
    # step first.
    tried = {
        call.id: str(call.arguments.get(makers[call.name], "")).lower()
        for message in request.messages[start + 1 :]
        for call in message.tool_calls
        if call.name in makers
    }
    last = request.messages[-1]
    for result in last.tool_results:
        for name in unmade.values() if result.is_error else ():
            if mentions(result.text, name) and tried.get(result.call_id) != name.lower():
                return Part("name", name, asked_for(text, name))
    return None


def head_of(text: str, name: str) -> str:
    """The words of the clause before the naming word of ``name`` ("Add a sun light" in
    "Add a sun light named Key at (4, -4, 8)"), from after the naming of another part
    before it at the earliest ("a red uv sphere named Ball of radius 0.5 m resting on a
    grey cube named Pedestal": the Pedestal's head is "of radius 0.5 m resting on a grey
    cube", not the Ball's sphere as well)."""
    namings = _namings(text)
    span = next(((start, end) for found, start, end in namings if name in found), None)
    if span is None:
        return ""
    before = [stop for at, stop in _cuts(text) if stop <= span[0]]
    before += [end for _, start, end in namings if end <= span[0]]
    return text[max(before) if before else 0 : span[0]]


def mentions(text: str, name: str) -> bool:
    """Whether ``text`` has ``name`` as a whole word, in any case."""
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", text, re.I) is not None


def pinned_makers(request: ModelRequest, part: Part) -> list[ToolSpec]:
    """The offered tools that make the named part still missing, each with the argument
    that names what it makes (:attr:`~agentsdk.ToolSpec.creates`) held to the part's name:
    a call under this grammar makes that part, not another one. Among the tools that make
    things, those whose names say they make the kind of thing the request asks for ("a
    point light named lamp": ``add_light``), when any do; for a shape, those that make
    neither lights nor cameras. Empty for a part that is no missing name, or when no
    offered tool declares what it makes."""
    if part.kind != "name":
        return []
    makers = [tool for tool in request.tools if tool.creates]
    start = newest_request_at(request)
    if not makers or start is None:
        return []
    asked = kind_of(head_of(request.messages[start].text, part.key))
    if asked == "shape":
        fitting = [tool for tool in makers if kind_of(tool.name) not in ("light", "camera")]
    else:
        fitting = [tool for tool in makers if asked is not None and kind_of(tool.name) == asked]
    return [_pinned(tool, part.key) for tool in fitting or makers]


def _pinned(tool: ToolSpec, name: str) -> ToolSpec:
    """The tool with its naming argument required and held to ``name``."""
    assert tool.creates is not None
    parameters = dict(tool.parameters)
    properties = dict(parameters.get("properties") or {})
    properties[tool.creates] = {"type": "string", "const": name}
    required = list(parameters.get("required") or [])
    parameters["properties"] = properties
    parameters["required"] = required + [tool.creates] * (tool.creates not in required)
    return tool.model_copy(update={"parameters": parameters})
