"""Grounded citations: the final answer gets the ``cite`` line of every tool result whose
figures it states.

Small models state the right figure and then paraphrase its provenance away ("IBM's
total return from 2005 to 2010 was 64.8%"). Where a figure came from is a fact the
toolkit knows: each successful result of its tools carries a ``cite`` line (source,
symbol, period). So the toolkit, not the model, attaches it — only for results whose
numbers the answer actually states, so a wrong or invented figure gets no citation,
and an answer with no tool results stays as it is. A text result (the chart's caption)
cites line by line: ``<figures>. Source: <cite line>``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from agentsdk import Message

__all__ = ["cite_answer"]

_NUMBER = re.compile(r"(?<![\w.])([-+]?\d[\d,]*(?:\.\d+)?)(\s*%)?")


def _figures(value: Any) -> Iterator[float]:
    """Every number in a JSON value, nested rows included."""
    if isinstance(value, bool):
        return
    if isinstance(value, int | float):
        yield float(value)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _figures(item)
    elif isinstance(value, list):
        for item in value:
            yield from _figures(item)


def _cited_parts(data: Any) -> Iterator[tuple[str, Any]]:
    """(cite line, the part of the result it covers): the whole result, and each row of
    a comparison that carries its own ``cite``."""
    if isinstance(data, dict):
        if isinstance(data.get("cite"), str):
            yield data["cite"], data
            if isinstance(data.get("benchmark_cite"), str):  # beta, correlation: both sources
                yield data["benchmark_cite"], data
        for item in data.values():
            if isinstance(item, list | dict):
                yield from _cited_parts(item)
    elif isinstance(data, list):
        for item in data:
            yield from _cited_parts(item)


_SOURCE_LINE = re.compile(r"^(?P<figures>.*?)\bSource: (?P<cite>.+)$", re.M)
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _text_parts(text: str) -> Iterator[tuple[str, list[float]]]:
    """(cite line, figures) of each ``<figures>. Source: <cite>`` line of a text result
    (the chart's caption); dates are not figures."""
    for m in _SOURCE_LINE.finditer(text):
        plain = _ISO_DATE.sub(" ", m["figures"])
        yield m["cite"].strip(), [float(n.replace(",", "")) for n, _ in _NUMBER.findall(plain)]


def _headline_parts(data: Any) -> Iterator[tuple[str, list[float]]]:
    """(cite line, figures) of a report's ``headline`` lines ("AAPL: total return 1596.9%,
    ...") paired with its ``sources`` by the symbol each starts with (research_report)."""
    if not isinstance(data, dict):
        return
    lines, sources = data.get("headline"), data.get("sources")
    if not (isinstance(lines, list) and isinstance(sources, list)):
        return
    by_symbol: dict[str, list[str]] = {}
    for c in sources:
        if isinstance(c, str) and "," in c:
            by_symbol.setdefault(c.split(",", 1)[0].strip(), []).append(c)
    for line in lines:
        if not isinstance(line, str) or ":" not in line:
            continue
        cite = _covering(by_symbol.get(line.split(":", 1)[0].strip(), []), line)
        if cite is not None:
            plain = _ISO_DATE.sub(" ", line.split(":", 1)[1])
            yield cite, [float(n.replace(",", "")) for n, _ in _NUMBER.findall(plain)]


_PERIOD = re.compile(r"(\d{4}-\d{2}-\d{2})\.\.(\d{4}-\d{2}-\d{2})")


def _covering(cites: list[str], line: str) -> str | None:
    """Of a symbol's sources, the first whose period holds every date the line names (a
    report cites prices and, apart, a filing: the headline's figures come from prices)."""
    dates = _ISO_DATE.findall(line)
    for cite in cites:
        period = _PERIOD.search(cite)
        if period and all(period[1] <= d <= period[2] for d in dates):
            return cite
    return cites[0] if cites else None


def _stated(answer: str) -> list[tuple[float, int, bool]]:
    """Figures the answer states: (value, decimals, is a percentage). Bare integers are
    left out (years, counts) unless they are percentages."""
    found: list[tuple[float, int, bool]] = []
    for number, percent in _NUMBER.findall(answer):
        digits = number.replace(",", "")
        decimals = len(digits.split(".")[1]) if "." in digits else 0
        if decimals == 0 and not percent:
            continue
        found.append((float(digits), decimals, bool(percent)))
    return found


def _matches(stated: Iterable[tuple[float, int, bool]], figures: list[float]) -> bool:
    for value, decimals, percent in stated:
        tolerance = 0.5 * 10**-decimals + 1e-9
        for figure in figures:
            candidates = (figure * 100, figure) if percent else (figure,)
            if any(abs(abs(value) - abs(c)) <= tolerance for c in candidates):
                return True
    return False


def cite_answer(answer: str, messages: Sequence[Message], tools: Iterable[str]) -> str:
    """``answer`` with a ``Sources:`` line listing the cite line of each successful
    result of ``tools`` whose figures the answer states (and does not cite already)."""
    names = set(tools)
    stated = _stated(answer)
    if not stated:
        return answer
    cites: list[str] = []
    for message in messages:
        if message.role != "tool":
            continue
        for result in message.tool_results:
            if result.name not in names or result.is_error:
                continue
            try:
                data = json.loads(result.text)
                parts = [(c, list(_figures(p))) for c, p in _cited_parts(data)]
                parts += list(_headline_parts(data))
            except ValueError:
                parts = list(_text_parts(result.text))
            for cite, figures in parts:
                if cite in answer or cite in cites:
                    continue
                if _matches(stated, figures):
                    cites.append(cite)
    if not cites:
        return answer
    return answer.rstrip() + "\n\nSources: " + "; ".join(cites)
