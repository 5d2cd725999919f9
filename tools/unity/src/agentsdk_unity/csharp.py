"""C# checking with Mono's ``mcs``: catch a broken script before it reaches the Unity Editor."""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from agentsdk.sandbox import run_process
from pydantic import BaseModel

_DIAGNOSTIC = re.compile(
    r"^(?P<file>.*?)\((?P<line>\d+),(?P<column>\d+)\): (?P<severity>error|warning) (?P<code>CS\d+): (?P<message>.*)$"
)
_GLOBAL = re.compile(r"^(?P<severity>error|warning) (?P<code>CS\d+): (?P<message>.*)$")
INSTALL_HINT = "install Mono's C# compiler (Debian/Ubuntu: apt-get install mono-mcs; see scripts/setup.d/unity.sh)"


class CSharpCompilerMissingError(RuntimeError):
    """``mcs`` is not on PATH."""

    def __init__(self) -> None:
        super().__init__(f"The Mono C# compiler 'mcs' was not found on PATH: {INSTALL_HINT}.")


class CSharpDiagnostic(BaseModel):
    """One compiler message, with 1-based line and column in the checked file."""

    file: str
    line: int
    column: int
    severity: Literal["error", "warning"]
    code: str
    message: str

    def __str__(self) -> str:
        return (
            f"{self.file}({self.line},{self.column}): {self.severity} {self.code}: {self.message}"
        )


class CSharpCheck(BaseModel):
    """Outcome of :func:`check_csharp`."""

    ok: bool
    mode: Literal["syntax", "compile"]
    diagnostics: list[CSharpDiagnostic]

    @property
    def errors(self) -> list[CSharpDiagnostic]:
        """Only the errors."""
        return [d for d in self.diagnostics if d.severity == "error"]

    def report(self) -> str:
        """One line per diagnostic, or 'ok'."""
        if not self.diagnostics:
            return f"ok ({self.mode} check: no diagnostics)"
        return "\n".join(str(d) for d in self.diagnostics)


def find_mcs() -> str:
    """Path of ``mcs``, or CSharpCompilerMissingError."""
    found = shutil.which("mcs")
    if found is None:
        raise CSharpCompilerMissingError
    return found


def parse_diagnostics(
    output: str, *, rename: dict[str, str] | None = None
) -> list[CSharpDiagnostic]:
    """Compiler messages from mcs output, de-duplicated, in order."""
    seen: set[str] = set()
    found: list[CSharpDiagnostic] = []
    for raw in output.splitlines():
        line = raw.strip()
        if not line or line in seen:
            continue
        match = _DIAGNOSTIC.match(line)
        if match:
            file = match["file"]
            diagnostic = CSharpDiagnostic(
                file=(rename or {}).get(file, file),
                line=int(match["line"]),
                column=int(match["column"]),
                severity=match["severity"],
                code=match["code"],
                message=match["message"],
            )
        elif (glob := _GLOBAL.match(line)) is not None:
            diagnostic = CSharpDiagnostic(
                file="",
                line=0,
                column=0,
                severity=glob["severity"],
                code=glob["code"],
                message=glob["message"],
            )
        else:
            continue
        seen.add(line)
        found.append(diagnostic)
    return found


_MISSING_TOKEN_CODES = frozenset({"CS1002", "CS1003", "CS1026"})


def _point_at_missing_token(diagnostic: CSharpDiagnostic, lines: list[str]) -> CSharpDiagnostic:
    """mcs reports a missing ';' or ')' at the next token, often on the next line; point at the gap instead."""
    if diagnostic.code not in _MISSING_TOKEN_CODES or not 1 < diagnostic.line <= len(lines):
        return diagnostic
    text = lines[diagnostic.line - 1]
    if diagnostic.column - 1 != len(text) - len(text.lstrip()):
        return diagnostic
    previous = diagnostic.line - 1
    while previous >= 1 and not lines[previous - 1].strip():
        previous -= 1
    if previous < 1:
        return diagnostic
    end = len(lines[previous - 1].rstrip()) + 1
    return diagnostic.model_copy(update={"line": previous, "column": end})


async def compile_csharp(
    sources: Sequence[Path],
    output: Path,
    *,
    references: Sequence[Path] = (),
    target: Literal["library", "exe"] = "library",
    timeout: float = 120.0,
) -> CSharpCheck:
    """Compiles files with mcs into ``output`` and returns its diagnostics."""
    argv = [find_mcs(), f"-target:{target}", f"-out:{output}", *(f"-r:{r}" for r in references)]
    result = await run_process(
        [*argv, *map(str, sources)], timeout=timeout, env={"LANG": "C.UTF-8"}
    )
    diagnostics = parse_diagnostics(result.stdout + "\n" + result.stderr)
    ok = result.returncode == 0 and not any(d.severity == "error" for d in diagnostics)
    if result.returncode != 0 and not diagnostics:
        message = (result.stderr or result.stdout).strip() or f"mcs exited with {result.returncode}"
        diagnostics = [
            CSharpDiagnostic(
                file="", line=0, column=0, severity="error", code="mcs", message=message
            )
        ]
    return CSharpCheck(ok=ok, mode="compile", diagnostics=diagnostics)


async def check_csharp(
    source: str,
    *,
    file_name: str = "Script.cs",
    references: Sequence[Path] = (),
    timeout: float = 60.0,
) -> CSharpCheck:
    """Checks one C# source with mcs and returns line/column diagnostics.

    Without ``references`` this is a syntax check (``mcs --parse``): Unity's assemblies are not
    available outside the editor, so names like ``MonoBehaviour`` cannot be resolved here. Pass the
    paths of ``UnityEngine.dll`` etc. (or stub assemblies) to type-check against them as well.
    Raises CSharpCompilerMissingError when mcs is not installed.
    """
    mcs = find_mcs()
    name = Path(file_name).name or "Script.cs"
    with tempfile.TemporaryDirectory(prefix="agentsdk-cs-") as tmp:
        path = Path(tmp) / name
        path.write_text(source, encoding="utf-8")
        if references:
            argv = [
                mcs,
                "-target:library",
                f"-out:{Path(tmp) / 'check.dll'}",
                *(f"-r:{r}" for r in references),
                name,
            ]
            mode: Literal["syntax", "compile"] = "compile"
        else:
            argv = [mcs, "--parse", name]
            mode = "syntax"
        result = await run_process(argv, cwd=tmp, timeout=timeout, env={"LANG": "C.UTF-8"})
    diagnostics = parse_diagnostics(result.stdout + "\n" + result.stderr, rename={name: file_name})
    lines = source.splitlines()
    diagnostics = [
        _point_at_missing_token(d, lines) if d.file == file_name else d for d in diagnostics
    ]
    if result.returncode != 0 and not any(d.severity == "error" for d in diagnostics):
        message = (result.stderr or result.stdout).strip() or f"mcs exited with {result.returncode}"
        diagnostics.append(
            CSharpDiagnostic(
                file=file_name, line=0, column=0, severity="error", code="mcs", message=message
            )
        )
    return CSharpCheck(
        ok=not any(d.severity == "error" for d in diagnostics), mode=mode, diagnostics=diagnostics
    )
