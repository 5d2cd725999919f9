"""Read a tool's description and per-parameter docs from its docstring.

Understands Google (``Args:``), NumPy (``Parameters`` + dashes) and Sphinx
(``:param name:``) styles. Runs once per tool, at decoration time.
"""

from __future__ import annotations

import inspect
import re

_GOOGLE_HEADERS = {"args", "arguments", "parameters", "params", "keyword args", "kwargs"}
_ANY_GOOGLE_SECTION = re.compile(
    r"^(args|arguments|parameters|params|keyword args|kwargs|returns?|yields?|raises?|"
    r"examples?|notes?|see also|attributes|warnings?|references?)\s*:\s*$",
    re.IGNORECASE,
)
_NUMPY_UNDERLINE = re.compile(r"^\s*-{3,}\s*$")
_SPHINX_PARAM = re.compile(r"^:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$")
_SPHINX_FIELD = re.compile(r"^:\w+")
_GOOGLE_ITEM = re.compile(r"^(\*{0,2}\w+)\s*(?:\(([^)]*)\))?\s*:\s*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Return ``(description, {parameter: description})`` for a docstring."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    body_end = len(lines)
    params: dict[str, str] = {}

    for i, line in enumerate(lines):
        stripped = line.strip()
        if _ANY_GOOGLE_SECTION.match(stripped) or _SPHINX_FIELD.match(stripped):
            body_end = i
            break
        if i + 1 < len(lines) and _NUMPY_UNDERLINE.match(lines[i + 1]) and stripped:
            body_end = i
            break

    params.update(_google_params(lines))
    params.update(_numpy_params(lines))
    params.update(_sphinx_params(lines))
    description = "\n".join(lines[:body_end]).strip()
    # The first paragraph is what a model needs; later paragraphs stay in if short.
    return description, params


def _google_params(lines: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    in_section = False
    item_indent: int | None = None
    current: str | None = None
    for line in lines:
        stripped = line.strip()
        if _ANY_GOOGLE_SECTION.match(stripped) and not line.startswith((" ", "\t")):
            in_section = stripped.rstrip(":").strip().lower() in _GOOGLE_HEADERS
            item_indent, current = None, None
            continue
        if not in_section:
            continue
        if not stripped:
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0:
            in_section = False
            continue
        if item_indent is None:
            item_indent = indent
        m = _GOOGLE_ITEM.match(stripped)
        if indent == item_indent and m:
            current = m.group(1).lstrip("*")
            out[current] = m.group(3).strip()
        elif current is not None:
            out[current] = (out[current] + " " + stripped).strip()
    return out


def _numpy_params(lines: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    i = 0
    while i < len(lines) - 1:
        header = lines[i].strip().lower()
        if header in ("parameters", "other parameters") and _NUMPY_UNDERLINE.match(lines[i + 1]):
            i += 2
            current: str | None = None
            while i < len(lines):
                line = lines[i]
                if i + 1 < len(lines) and _NUMPY_UNDERLINE.match(lines[i + 1]):
                    break
                if line.strip() and not line.startswith((" ", "\t")):
                    current = line.split(":", 1)[0].strip().lstrip("*")
                    out[current] = ""
                elif line.strip() and current is not None:
                    out[current] = (out[current] + " " + line.strip()).strip()
                i += 1
            continue
        i += 1
    return out


def _sphinx_params(lines: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    current: str | None = None
    for line in lines:
        stripped = line.strip()
        m = _SPHINX_PARAM.match(stripped)
        if m:
            current = m.group(1)
            out[current] = m.group(2).strip()
        elif _SPHINX_FIELD.match(stripped):
            current = None
        elif current is not None and stripped and line.startswith((" ", "\t")):
            out[current] = (out[current] + " " + stripped).strip()
    return out
