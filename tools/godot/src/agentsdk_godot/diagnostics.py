"""Turn the engine's stdout/stderr into structured diagnostics (message, file, line, stack).

Godot 3 prints
    SCRIPT ERROR: helper: Invalid call. Nonexistent function 'foo' in base 'Nil'.
       At: res://rt.gd:9.
and, with the local debugger (`-d`) answering `bt`, a stack:
    *Frame 0 - res://rt.gd:9 in function 'helper'
     Frame 1 - res://rt.gd:5 in function '_ready'
Godot 4 prints
    SCRIPT ERROR: Parse Error: Expected ":" after "if" condition.
              at: GDScript::reload (res://bad.gd:5)
    GDScript backtrace (most recent call first):
        [0] helper (res://rt.gd:9)
Both shapes are understood here.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

__all__ = ["Diagnostic", "StackFrame", "format_diagnostics", "parse_diagnostics"]


class StackFrame(BaseModel):
    """One GDScript call frame, innermost first."""

    file: str
    line: int
    function: str | None = None


class Diagnostic(BaseModel):
    """An error or warning the engine reported."""

    severity: Literal["error", "warning"]
    kind: Literal["parse_error", "script_error", "engine_error", "warning"]
    message: str
    file: str | None = Field(
        None, description="res:// path for script problems, C++ file for engine ones"
    )
    line: int | None = None
    function: str | None = None
    stack: list[StackFrame] = Field(default_factory=list)
    count: int = Field(1, description="how many times the engine reported it")

    def describe(self) -> str:
        """One line a model can act on: `res://player.gd:12: error: ...`."""
        if self.file and self.file.startswith("res://") and self.line is not None:
            where = f"{self.file}:{self.line}: "
        else:  # the engine's own C++ location means nothing to a game author
            where = f"engine ({self.function}): " if self.function else "engine: "
        text = f"{where}{self.severity}: {self.message}"
        if self.count > 1:
            text += f" (x{self.count})"
        if len(self.stack) > 1:
            text += (
                " (stack: "
                + " <- ".join(f"{f.function}@{f.file}:{f.line}" for f in self.stack)
                + ")"
            )
        return text


_HEAD = re.compile(r"^(SCRIPT ERROR|ERROR|WARNING|USER ERROR|USER WARNING|SCRIPT WARNING): (.*)$")
_AT3 = re.compile(r"^\s+At: (.+):(\d+)\.?$")
_AT4 = re.compile(r"^\s+at: (?:(\S+) )?\((.+):(\d+)\)$")
_FRAME3 = re.compile(r"^[ *]Frame (\d+) - (.+):(\d+) in function '(.*)'$")
_FRAME4 = re.compile(r"^\s+\[(\d+)\] (\S+) \((.+):(\d+)\)$")
_BREAK = re.compile(r"^Debugger Break, Reason: '(.*)'$")

# Messages the engine prints on every run here that say nothing about the user's project.
_NOISE = (
    'Condition "p_ptr == __null" is true',
    'Condition "_first != __null" is true',
    "ObjectDB instances leaked at exit",
    "Resources still in use at exit",
    "MemoryPool allocs in use at exit",
    "All audio drivers failed",
    'init_device: Condition "status < 0"',
    "Invalid locale",
    "Unsupported locale",
    "make_dir_recursive: Method failed",
    "reload: Method failed. Returning: ERR_PARSE_ERROR",
    "Failed loading resource",
)


def _is_noise(diag: Diagnostic) -> bool:
    text = f"{diag.function or ''}: {diag.message}"
    return any(n in text for n in _NOISE)


def parse_diagnostics(output: str, *, keep_noise: bool = False) -> list[Diagnostic]:
    """Parse engine output (stdout and stderr joined) into diagnostics, in order of appearance."""
    lines = output.replace("debug> ", "\n").splitlines()
    found: list[Diagnostic] = []
    pending_stack: list[StackFrame] = []
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        head = _HEAD.match(line)
        if head:
            i = _read_entry(lines, i, head.group(1), head.group(2), found)
            continue
        frame3 = _FRAME3.match(line)
        frame4 = _FRAME4.match(line)
        if frame3 or frame4:
            if frame3:
                frame = StackFrame(
                    file=frame3.group(2), line=int(frame3.group(3)), function=frame3.group(4)
                )
                index = int(frame3.group(1))
            else:
                assert frame4 is not None
                frame = StackFrame(
                    file=frame4.group(3), line=int(frame4.group(4)), function=frame4.group(2)
                )
                index = int(frame4.group(1))
            if index == 0:
                pending_stack = []
            pending_stack.append(frame)
            _attach_stack(found, pending_stack)
        else:
            brk = _BREAK.match(line)
            if brk:
                # with the local debugger (`-d`) a runtime error is reported as a break
                # followed by its frames instead of a SCRIPT ERROR line
                reason = brk.group(1)
                found.append(
                    Diagnostic(
                        severity="error",
                        kind="script_error",
                        message=reason.removeprefix("Parser Error: "),
                    )
                )
                pending_stack = []
        i += 1
    if not keep_noise:
        found = [d for d in found if not _is_noise(d)]
    return _dedupe(found)


def _read_entry(lines: list[str], i: int, label: str, rest: str, found: list[Diagnostic]) -> int:
    file = function = None
    line_no: int | None = None
    message = rest
    j = i + 1
    if j < len(lines):
        at3, at4 = _AT3.match(lines[j]), _AT4.match(lines[j])
        if at3:
            file, line_no = at3.group(1), int(at3.group(2))
            j += 1
        elif at4:
            function, file, line_no = at4.group(1), at4.group(2), int(at4.group(3))
            j += 1
    # Godot 3 puts the function first: "helper: Invalid call..." / "GDScript::reload: Parse Error: ..."
    prefix = re.match(r"^([A-Za-z_][\w:]*): (.*)$", message)
    if prefix and function is None and not message.startswith(("Parse Error", "Parser Error")):
        function, message = prefix.group(1), prefix.group(2)
    # Godot 3 reports a script that does not parse twice, once as "Parser Error: ..."
    is_parse = message.startswith(("Parse Error", "Parser Error"))
    if is_parse:
        message = message.removeprefix("Parse Error: ").removeprefix("Parser Error: ")
    warning = "WARNING" in label
    if label == "ERROR" and message.startswith("'") and file is None:
        warning = True  # Godot 3 `-d` prints GDScript warnings as ERROR: '<text>'
        message = message.strip("'")
    script_file = file is not None and file.startswith("res://")
    kind: Literal["parse_error", "script_error", "engine_error", "warning"]
    if warning:
        kind = "warning"
    elif is_parse:
        kind = "parse_error"
    elif label.startswith("SCRIPT") or label.startswith("USER") or script_file:
        kind = "script_error"
    else:
        kind = "engine_error"
    stack = (
        [StackFrame(file=file, line=line_no, function=function)]
        if script_file and file and line_no is not None and kind == "script_error"
        else []
    )
    found.append(
        Diagnostic(
            severity="warning" if warning else "error",
            kind=kind,
            message=message.strip(),
            file=file,
            line=line_no,
            function=function if kind != "parse_error" else None,
            stack=stack,
        )
    )
    return j


def _attach_stack(found: list[Diagnostic], stack: list[StackFrame]) -> None:
    top = stack[0]
    for diag in reversed(found):
        if diag.kind != "script_error":
            continue
        if diag.file is None:  # a debugger break: its first frame is where it happened
            diag.file, diag.line, diag.function = top.file, top.line, top.function
        if diag.file == top.file and diag.line == top.line:
            diag.stack = list(stack)
            return


def _dedupe(found: list[Diagnostic]) -> list[Diagnostic]:
    seen: set[tuple[str, str | None, int | None]] = set()
    unique: list[Diagnostic] = []
    for diag in found:
        key = (diag.message, diag.file, diag.line)
        if key in seen:
            first = next(d for d in unique if (d.message, d.file, d.line) == key)
            if diag.kind != first.kind:  # the same parse error in its two spellings
                first.kind = (
                    "parse_error" if "parse_error" in (diag.kind, first.kind) else first.kind
                )
                continue
            first.count += 1
            first.stack = first.stack or diag.stack
        else:
            seen.add(key)
            unique.append(diag)
    return unique


def format_diagnostics(diagnostics: list[Diagnostic]) -> str:
    """Several diagnostics as lines of text."""
    return "\n".join(d.describe() for d in diagnostics)
