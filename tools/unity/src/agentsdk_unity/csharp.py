"""C# checking before a script reaches the Unity Editor: Mono's ``mcs`` plus tree-sitter's C# grammar.

Unity 2021.3 to 6000.x compile C# 9.0; mcs knows C# 7.2 at most (and misses local functions and
``case … when`` of C# 7.0). So an mcs error only counts where tree-sitter's grammar also finds the
line broken. Where the grammar parses the line, the construct it found (a ``switch`` expression,
``new()`` …) explains mcs's failure and the line is reported as not checked by mcs, never as an
error. Past such a line, mcs cannot say more, and the grammar's own errors are reported instead.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

from agentsdk.sandbox import run_process
from pydantic import BaseModel

from . import _csharp_tree
from ._mcs_positions import remap

_DIAGNOSTIC = re.compile(
    r"^(?P<file>.*?)\((?P<line>\d+),(?P<column>\d+)\): (?P<severity>error|warning) (?P<code>CS\d+): (?P<message>.*)$"
)
_GLOBAL = re.compile(r"^(?P<severity>error|warning) (?P<code>CS\d+): (?P<message>.*)$")
INSTALL_HINT = "install Mono's C# compiler (Debian/Ubuntu: apt-get install mono-mcs; see scripts/setup.d/unity.sh)"

LanguageVersion = Literal["7.3", "8.0", "9.0", "10.0", "11.0", "12.0"]
UNITY_LANGUAGE_VERSION: LanguageVersion = "9.0"
"""What Unity 2021.3 (the package's minimum) through 6000.x compile."""
MCS_LANGUAGE_VERSION = "7.2"


def unity_editor_defines(major: int = 2021, minor: int = 3) -> tuple[str, ...]:
    """The scripting defines of a Unity editor of this version on a 64-bit desktop (.NET Standard 2.1).

    ``#if UNITY_2020_1_OR_NEWER`` and the like pick the branch that editor compiles, so both parsers
    check the code Unity will see.
    """
    releases = [(5, m) for m in range(3, 7)] + [
        (year, m) for year in range(2017, major + 1) for m in range(1, 5)
    ]
    newer = [f"UNITY_{y}_{m}_OR_NEWER" for y, m in releases if (y, m) <= (major, minor)]
    return (
        "UNITY_EDITOR",
        "UNITY_EDITOR_64",
        f"UNITY_{major}",
        f"UNITY_{major}_{minor}",
        *newer,
        "UNITY_5_OR_NEWER",
        "UNITY_64",
        "ENABLE_MONO",
        "CSHARP_7_OR_LATER",
        "CSHARP_7_3_OR_NEWER",
        "NET_STANDARD",
        "NET_STANDARD_2_0",
        "NET_STANDARD_2_1",
        "NETSTANDARD",
        "NETSTANDARD2_1",
    )


UNITY_EDITOR_DEFINES = unity_editor_defines()


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


class NewerSyntax(BaseModel):
    """A place mcs could not parse and tree-sitter's grammar could: syntax newer than mcs knows."""

    line: int
    column: int
    feature: str
    version: str


class CSharpCheck(BaseModel):
    """Outcome of :func:`check_csharp`."""

    ok: bool
    mode: Literal["syntax", "compile"]
    diagnostics: list[CSharpDiagnostic]
    file: str = ""
    language_version: str = UNITY_LANGUAGE_VERSION
    newer_syntax: list[NewerSyntax] = []
    """Lines mcs left unchecked: the editor's compiler has the last word on them."""
    notes: list[str] = []

    @property
    def errors(self) -> list[CSharpDiagnostic]:
        """Only the errors."""
        return [d for d in self.diagnostics if d.severity == "error"]

    def report(self) -> str:
        """One line per diagnostic and note, or 'ok'."""
        lines = [str(d) for d in self.diagnostics]
        for place in self.newer_syntax:
            lines.append(
                f"{self.file}({place.line},{place.column}): note: {place.feature} needs "
                f"C# {place.version}; mcs (C# {MCS_LANGUAGE_VERSION}) cannot check it, tree-sitter's "
                "C# grammar parses it, and the Unity editor will compile it"
            )
        lines += self.notes
        if not lines:
            return f"ok ({self.mode} check: no diagnostics)"
        return (
            "\n".join(lines) if self.diagnostics else f"ok ({self.mode} check)\n" + "\n".join(lines)
        )


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


def _mcs_argv(mcs: str, defines: Iterable[str], language: str) -> list[str]:
    # -unsafe: whether unsafe code is allowed is the project's setting, for the editor to judge.
    argv = [mcs, f"-langversion:{language}", "-unsafe"]
    names = [d for d in defines if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", d)]
    return argv + ([f"-define:{';'.join(names)}"] if names else [])


async def compile_csharp(
    sources: Sequence[Path],
    output: Path,
    *,
    references: Sequence[Path] = (),
    target: Literal["library", "exe"] = "library",
    timeout: float = 120.0,
) -> CSharpCheck:
    """Compiles files with mcs (C# 7.2) into ``output`` and returns its diagnostics as they are."""
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


def _version(text: str) -> tuple[int, int]:
    major, _, minor = text.partition(".")
    return int(major), int(minor or 0)


async def check_csharp(
    source: str,
    *,
    file_name: str = "Script.cs",
    references: Sequence[Path] = (),
    language_version: LanguageVersion = UNITY_LANGUAGE_VERSION,
    defines: Iterable[str] = UNITY_EDITOR_DEFINES,
    timeout: float = 60.0,
) -> CSharpCheck:
    """Checks one C# source at ``language_version`` and returns line/column diagnostics.

    Without ``references`` this is a syntax check: Unity's assemblies are not available outside the
    editor, so names like ``MonoBehaviour`` cannot be resolved here. With the paths of
    ``UnityEngine.dll`` etc. (or stubs) types are checked too, by mcs as C# 7.2: a file that uses
    newer syntax gets the syntax check only, and a note says why. Syntax newer than
    ``language_version`` is reported as a warning. Raises CSharpCompilerMissingError without mcs.
    """
    mcs = find_mcs()
    defines = tuple(defines)
    name = Path(file_name).name or "Script.cs"
    lines = source.splitlines()
    tree = _csharp_tree.parse(source, defines)
    with tempfile.TemporaryDirectory(prefix="agentsdk-cs-") as tmp:
        path = Path(tmp) / name
        path.write_text(source, encoding="utf-8", errors="surrogatepass")
        base = _mcs_argv(mcs, defines, MCS_LANGUAGE_VERSION)
        parsed = await run_process(
            [*base, "--parse", name], cwd=tmp, timeout=timeout, env={"LANG": "C.UTF-8"}
        )
        check = _judge(parsed.stdout + "\n" + parsed.stderr, parsed.returncode, file_name, lines)
        doubted = _weigh_against_tree(check, tree, file_name, lines)
        _flag_versions(check, tree, file_name, _version(language_version))
        if references:
            newer = [c.line for c in tree.constructs if c.version > _version(MCS_LANGUAGE_VERSION)]
            if check.errors:
                pass  # syntax errors first: a type check would only repeat them
            elif doubted or newer:
                check.notes.append(
                    f"{file_name}: types not checked: mcs type-checks C# {MCS_LANGUAGE_VERSION} "
                    f"only, and line {min(doubted + newer)} uses syntax it cannot parse"
                )
            else:
                await _type_check(check, base, name, tmp, references, file_name, lines, timeout)
    check.file = file_name
    check.language_version = language_version
    check.ok = not check.errors
    return check


def _judge(output: str, returncode: int | None, file_name: str, lines: list[str]) -> CSharpCheck:
    """mcs's own verdict, positions moved to the mistake; a failure without messages is an error too."""
    name = Path(file_name).name or "Script.cs"
    diagnostics = [
        d
        for d in parse_diagnostics(output, rename={name: file_name})
        if not _pragma_noise(d, lines)
    ]
    if returncode != 0 and not any(d.severity == "error" for d in diagnostics):
        message = output.strip() or (
            "mcs did not finish in time" if returncode is None else f"mcs exited with {returncode}"
        )
        diagnostics.append(
            CSharpDiagnostic(
                file=file_name, line=0, column=0, severity="error", code="mcs", message=message
            )
        )
    return CSharpCheck(ok=True, mode="syntax", diagnostics=diagnostics)


def _pragma_noise(diagnostic: CSharpDiagnostic, lines: list[str]) -> bool:
    """mcs warns on '#pragma warning disable CS1591'; Roslyn (and Unity) accept the CS prefix."""
    if diagnostic.code != "CS1692" or not 1 <= diagnostic.line <= len(lines):
        return False
    return bool(re.match(r"\s*#\s*pragma\s+warning\b.*\bCS\d+", lines[diagnostic.line - 1]))


def _weigh_against_tree(
    check: CSharpCheck, tree: _csharp_tree.SyntaxTree, file_name: str, lines: list[str]
) -> list[int]:
    """Keeps mcs errors the grammar confirms; the rest become notes (or warnings when unexplained).

    Returns the lines of the mcs errors that were not kept.
    """
    doubted: list[int] = []
    kept: list[CSharpDiagnostic] = []
    used: set[int] = set()
    first_unconfirmed: tuple[int, int] | None = None
    for raw in check.diagnostics:
        if raw.file != file_name or raw.line < 1:
            kept.append(raw)
            continue
        diagnostic = remap(raw, lines)
        if diagnostic.severity != "error":
            kept.append(diagnostic)
            continue
        # Each grammar error vouches for one mcs error: the rest near it are mcs's recovery.
        confirming = [
            i
            for i, e in enumerate(tree.errors)
            if i not in used and (e.near(diagnostic.line) or e.near(raw.line))
        ]
        if confirming:
            used.add(confirming[0])
            kept.append(diagnostic)
            continue
        doubted.append(diagnostic.line)
        position = (diagnostic.line, diagnostic.column)
        if first_unconfirmed is not None and position > first_unconfirmed:
            continue  # mcs's recovery after what it could not parse: noise, not evidence
        first_unconfirmed = position
        construct = tree.explain(diagnostic.line, diagnostic.column)
        if construct is None and diagnostic.code == "CS0100" and "`_'" in diagnostic.message:
            construct = _csharp_tree.Construct(
                "lambda discard parameters",
                (9, 0),
                diagnostic.line,
                diagnostic.column,
                diagnostic.line,
                diagnostic.column,
            )
        if construct is None and diagnostic.code == "CS0589":
            # mcs's own crash ("internal compiler error") is never a fault of the source.
            construct = _csharp_tree.Construct(
                "syntax mcs crashes on",
                (7, 0),
                diagnostic.line,
                diagnostic.column,
                diagnostic.line,
                diagnostic.column,
                mcs_gap=True,
            )
        if construct is not None:
            if not any(n.line == construct.line for n in check.newer_syntax):
                check.newer_syntax.append(
                    NewerSyntax(
                        line=construct.line,
                        column=construct.column,
                        feature=construct.name
                        + (" (which mcs does not implement)" if construct.mcs_gap else ""),
                        version=f"{construct.version[0]}.{construct.version[1]}",
                    )
                )
            continue
        kept.append(
            diagnostic.model_copy(
                update={
                    "severity": "warning",
                    "message": f"{diagnostic.message} (mcs says so, but tree-sitter's C# grammar "
                    "parses this line: not treated as an error; the editor will decide)",
                }
            )
        )
    if first_unconfirmed is not None:
        # mcs's recovery after a construct it does not know proves nothing: the grammar speaks there.
        for index, error in enumerate(tree.errors):
            if index not in used and (error.line, error.column) >= first_unconfirmed:
                kept.append(_tree_diagnostic(error, file_name, lines))
    check.diagnostics = kept
    return doubted


_MISSING_CODES = {
    ";": ("CS1002", "; expected"),
    ")": ("CS1026", ") expected"),
    "}": ("CS1513", "} expected"),
    "{": ("CS1514", "{ expected"),
    "]": ("CS1003", "Syntax error, ']' expected"),
    "identifier": ("CS1001", "Identifier expected"),
    "_identifier_token": ("CS1001", "Identifier expected"),
}


def _tree_diagnostic(
    error: _csharp_tree.TreeError, file_name: str, lines: list[str]
) -> CSharpDiagnostic:
    line = min(max(error.line, 1), max(len(lines), 1))
    width = len(lines[line - 1]) + 1 if lines else 1
    if error.missing is not None:
        code, message = _MISSING_CODES.get(
            error.missing, ("CS1003", f"Syntax error, '{error.missing}' expected")
        )
    else:
        snippet = " ".join(error.text.split())[:40]
        code, message = "syntax", f"tree-sitter's C# grammar cannot parse `{snippet}`"
    return CSharpDiagnostic(
        file=file_name,
        line=line,
        column=min(error.column, width),
        severity="error",
        code=code,
        message=message,
    )


def _flag_versions(
    check: CSharpCheck, tree: _csharp_tree.SyntaxTree, file_name: str, target: tuple[int, int]
) -> None:
    for construct in tree.constructs:
        if construct.version > target:
            check.diagnostics.append(
                CSharpDiagnostic(
                    file=file_name,
                    line=construct.line,
                    column=construct.column,
                    severity="warning",
                    code="langversion",
                    message=f"{construct.describe()} is newer than C# {target[0]}.{target[1]}, "
                    "the language this project compiles",
                )
            )


async def _type_check(
    check: CSharpCheck,
    base: list[str],
    name: str,
    folder: str,
    references: Sequence[Path],
    file_name: str,
    lines: list[str],
    timeout: float,
) -> None:
    """mcs's type check of a file written in the C# 7.2 it understands; adds its messages."""
    argv = [*base, "-target:library", f"-out:{Path(folder) / 'check.dll'}"]
    compiled = await run_process(
        [*argv, *(f"-r:{r}" for r in references), name],
        cwd=folder,
        timeout=timeout,
        env={"LANG": "C.UTF-8"},
    )
    typed = _judge(compiled.stdout + "\n" + compiled.stderr, compiled.returncode, file_name, lines)
    seen = {str(d) for d in check.diagnostics}
    moved = [remap(d, lines) if d.file == file_name else d for d in typed.diagnostics]
    check.diagnostics += [d for d in moved if str(d) not in seen]
    check.mode = "compile"
