"""Moves mcs's diagnostics to where Roslyn (Unity's compiler) would put them.

mcs reports a missing ';' at the next token, often on the next line, and then only as "Unexpected
symbol"; its "Unexpected symbol" columns are 0-based while its other columns are 1-based; and at
the end of a file it reports a column far past the end of the last line.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .csharp import CSharpDiagnostic

_SYMBOL = re.compile(r"Unexpected symbol `(?P<symbol>[^']*)'(?:, expecting (?P<expecting>.*))?")
_EXPECTED = re.compile(r"`([^']+)'")
_TYPE_HEADER = re.compile(r"^\s*(?:\w+\s+)*(namespace|class|struct|interface|enum|record)\b")
_MISSING_BY_CODE = {"CS1002": ";", "CS1026": ")", "CS1003": None, "CS1513": "}", "CS1514": "{"}
_REPLACEMENT = {
    ";": ("CS1002", "; expected"),
    ")": ("CS1026", ") expected"),
    "]": ("CS1003", "Syntax error, ']' expected"),
    "{": ("CS1514", "{ expected"),
}
# A line starting with one of these takes a statement or a block next, never a ';' at its end.
_HEADERS = re.compile(
    r"^\s*(if|else|for|foreach|while|do|using|lock|fixed|switch|case|default|try|catch|finally|"
    r"get|set|init|add|remove|namespace|class|struct|interface|enum|record|\[|#)\b"
)


def remap(diagnostic: CSharpDiagnostic, lines: list[str]) -> CSharpDiagnostic:
    """The diagnostic at a position inside the file, on the line that holds the mistake."""
    if diagnostic.line < 1 or not lines:
        return diagnostic
    match = _SYMBOL.search(diagnostic.message)
    symbol = match["symbol"] if match else None
    if symbol == "end-of-file":
        line = _last_code_line(lines, len(lines))
        return diagnostic.model_copy(
            update={"line": line, "column": len(lines[line - 1].rstrip()) + 1}
        )
    line = min(diagnostic.line, len(lines))
    text = lines[line - 1]
    column = min(max(diagnostic.column, 1), len(text) + 1)
    if symbol and not text.startswith(symbol, column - 1) and text.startswith(symbol, column):
        column += 1  # mcs counts "Unexpected symbol" columns from 0
    moved = diagnostic.model_copy(update={"line": line, "column": column})
    missing = _missing_token(moved, symbol, match["expecting"] if match else None, lines)
    if missing is None:
        return moved
    code, message = (moved.code, moved.message)
    if moved.code == "CS1525":
        code, message = _REPLACEMENT[missing]
    at_line, at_column = _after_previous_token(lines, line, column)
    return moved.model_copy(
        update={"line": at_line, "column": at_column, "code": code, "message": message}
    )


def _missing_token(
    diagnostic: CSharpDiagnostic, symbol: str | None, expecting: str | None, lines: list[str]
) -> str | None:
    """The token the author left out, when the diagnostic is really about a missing one."""
    if diagnostic.code in _MISSING_BY_CODE:
        known = _MISSING_BY_CODE[diagnostic.code]
        if known is not None:
            return known
        quoted = re.search(r"[`'](.)' expected", diagnostic.message)
        return quoted[1] if quoted else None
    if diagnostic.code != "CS1525" or not symbol:
        return None
    text = lines[diagnostic.line - 1]
    if diagnostic.column - 1 != len(text) - len(text.lstrip()):
        return None  # not the first token of its line: the mistake is where mcs points
    previous = _last_code_line(lines, diagnostic.line - 1)
    if previous < 1:
        return None
    before = _strip_comment(lines[previous - 1]).rstrip()
    if not before:
        return None
    if _open_parentheses(before) > 0:
        return ")"
    if _TYPE_HEADER.match(before) and "{" not in before:
        return "{"
    if _HEADERS.match(before) or not (before[-1].isalnum() or before[-1] in "_)]\"'"):
        return None
    wanted = _EXPECTED.findall(expecting) if expecting else []
    for token in (";", ")", "]"):
        if (not wanted and token == ";") or token in wanted:
            return token
    return None


def _after_previous_token(lines: list[str], line: int, column: int) -> tuple[int, int]:
    """Just after the last token before (line, column): where Roslyn reports a missing token."""
    head = _strip_comment(lines[line - 1][: column - 1]).rstrip()
    if head:
        return line, len(head) + 1
    previous = _last_code_line(lines, line - 1)
    if previous < 1:
        return line, column
    return previous, len(_strip_comment(lines[previous - 1]).rstrip()) + 1


def _last_code_line(lines: list[str], upto: int) -> int:
    """The last line at or before ``upto`` with code on it (0 when there is none)."""
    line = upto
    while line >= 1 and not _strip_comment(lines[line - 1]).strip():
        line -= 1
    return line


def _open_parentheses(code: str) -> int:
    """How many '(' the line leaves open (outside string and char literals)."""
    depth = 0
    quote: str | None = None
    index = 0
    while index < len(code):
        char = code[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        index += 1
    return depth


def _strip_comment(text: str) -> str:
    """The line without a trailing // comment (a // inside a string literal is kept)."""
    quote: str | None = None
    index = 0
    while index < len(text):
        char = text[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif text.startswith("//", index):
            return text[:index]
        elif text.startswith("/*", index) and "*/" not in text[index:]:
            return text[:index]
        index += 1
    return text
