"""The error for object names no object has (stdlib + bpy; ships inside the add-on too).

A small model asked for cubes A, B and C made only A, then called
``export_asset(names=["A", "B", "C"])``; told ``no objects named ['B', 'C']`` it went on
to ``delete(names=["B", "C"])``. The message now says, in the toolkit's own words, what the
scene has, which name was probably meant, and the next call: make the missing objects first
(``create_primitive``) or call again without them. Tools that cannot make use of the
"create" advice (``delete``) leave it out.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import bpy

from .engine_names import closest, listing, shown, spoken

CUBE = 'create_primitive(kind="cube", name={name})'


def missing_objects(
    missing: Sequence[str],
    *,
    tool: str | None,
    field: str = "name",
    asked: Sequence[str] | None = None,
    known: Sequence[str] | None = None,
    known_as: str = "the scene has",
    make: str | None = CUBE,
    without: str | None = None,
    sole: bool = False,
    none: str = "no object{s} named",
) -> str:
    """What to tell a model that gave ``missing`` names no object has.

    ``tool`` and ``field``: the call to send again (``None``: the measuring tools share one
    command and say "try again"); ``asked``: the whole list ``field`` held, when it is a list,
    for the corrected call; ``known``: the names that count (default every object), listed as
    ``known_as``; ``make``: how to create one (``{name}`` is filled in), or None when
    creating makes no sense for this tool (delete); ``without``: what the call does with
    ``field`` left out ("exports the whole scene"), when it may be; ``sole``: when ``known``
    is one name, every missing name meant it (fit_view: the model named the only object by
    its kind, "monkey"); ``none``: the head, "no object{s} named" ({s} is "s" for many).
    """
    known = sorted(bpy.data.objects.keys()) if known is None else sorted(known)
    missing = list(dict.fromkeys(missing))
    many = len(missing) > 1
    text = none.format(s="s" if many else "") + f" {shown(missing)} ("
    text += f"{known_as}: {listing(known)})" if known else "the scene has no objects yet)"
    guesses = {n: g for n in missing if (g := closest(n, known)) is not None}
    if sole and len(known) == 1:
        guesses = dict.fromkeys(missing, known[0])
    if guesses:
        pairs = [f"{g} for {shown([n])}" if many else g for n, g in guesses.items()]
        text += f"; did you mean {spoken(pairs)}?"
        if any(n.lower() == g.lower() for n, g in guesses.items()):
            text += " Names are case-sensitive."
    again = f"call {tool} again" if tool else "try again"
    steps = []
    unmatched = [n for n in missing if n not in guesses]
    if not unmatched and tool is not None:  # every name has its likely object: the fixed call
        fixed = [guesses.get(n, n) for n in asked] if asked is not None else missing[:1]
        value = list(dict.fromkeys(fixed)) if asked is not None else guesses[missing[0]]
        steps.append(f"{again} with {field}={json.dumps(value)}")
    new = [n for n in unmatched if n not in bpy.data.objects]  # only a free name can be made
    if make is not None and new:
        them = "them" if len(new) > 1 else "it"
        example = make.format(name=json.dumps(new[0]))
        steps.append(
            f"if {spoken(new)} {'are' if len(new) > 1 else 'is'} meant to be new, create "
            f"{them} first (e.g. {example}), then {again}"
        )
    if asked is not None and unmatched:
        rest = list(dict.fromkeys(guesses.get(n, n) for n in asked if n not in unmatched))
        if rest:
            them = spoken(unmatched)
            steps.append(f"leave {them} out: {again} with {field}={json.dumps(rest)}")
        elif without:
            steps.append(f"leave {field} out ({tool} without {field} {without})")
    if steps:
        advice = "; or ".join(steps)
        text += ("" if text.endswith((".", "?")) else ".") + " " + advice[0].upper() + advice[1:]
    return text
