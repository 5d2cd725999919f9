"""check_csharp at Unity's language version (C# 9.0): no false errors on syntax mcs (C# 7.2) lacks.

Issue #19: valid C# that Unity compiles was reported as syntax errors, so write_script refused it;
CS1525 was reported on the line after the mistake; columns past the end of the line were reported.
The corpus test runs on real Unity packages from npm (fetched by scripts/setup.d/unity.sh).
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest
from agentsdk_unity import UnityToolkit, check_csharp
from agentsdk_unity._csharp_tree import parse
from agentsdk_unity.csharp import UNITY_EDITOR_DEFINES

from .monohost import MonoHost

pytestmark = pytest.mark.anyio

CORPUS = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "agentsdk/unity-corpus"


def script(body: str, *, header: str = "") -> str:
    """A MonoBehaviour whose class body is ``body`` (line 7 is the body's first line)."""
    return f"{header}using System;\nusing System.Collections.Generic;\nusing UnityEngine;\n\npublic class Probe : MonoBehaviour\n{{\n{body}\n}}\n"


# (name, class body, C# version that needs it or None when mcs parses it, line of the construct)
VALID = [
    ("local function", "    int F() { int G(int x) { return x * 2; } return G(2); }", "7.0", 7),
    (
        "case when",
        "    int F(object o)\n    {\n        switch (o) { case int i when i > 0: return i; default: return 0; }\n    }",
        "7.0",
        9,
    ),
    ("default literal", "    int F() { int x = default; return x; }", None, 0),
    ("in parameter", "    float F(in Vector3 v) { return v.x; }", None, 0),
    ("private protected", "    private protected int hidden;", None, 0),
    ("constant pattern", "    bool F(object o) { return !(o is null); }", "7.0", 7),
    (
        "switch expression",
        '    string F(int x) => x switch\n    {\n        1 => "one",\n        _ => "many",\n    };',
        "8.0",
        7,
    ),
    ("??=", '    string s;\n    void F() { s ??= "x"; }', "8.0", 8),
    ("using declaration", "    void F() { using var s = new System.IO.MemoryStream(); }", "8.0", 7),
    ("ranges", "    int[] F(int[] a) => a[1..^1];", "8.0", 7),
    ("property pattern", "    bool F(string s) => s is { Length: 3 };", "8.0", 7),
    ("is not null", "    bool F(object o) => o is not null;", "9.0", 7),
    ("target-typed new", "    List<int> items = new();\n    Vector3 v = new(1, 2, 3);", "9.0", 7),
    ("relational pattern", "    bool F(int x) => x is > 0 and < 10 or 42;", "9.0", 7),
    ("init accessor", "    public int Speed { get; init; }", "9.0", 7),
    ("lambda discards", "    Func<int, int, int> f = (_, _) => 1;", "9.0", 7),
]


@pytest.mark.parametrize(("name", "body", "needs", "line"), VALID, ids=[v[0] for v in VALID])
async def test_valid_unity_csharp_is_not_a_syntax_error(
    name: str, body: str, needs: str | None, line: int
) -> None:
    result = await check_csharp(script(body), file_name="Assets/Probe.cs")
    assert result.ok, result.report()
    assert result.errors == []
    if needs is None:
        assert result.newer_syntax == [], "mcs parses this at C# 7.2: it was checked"
    else:
        [place] = result.newer_syntax
        assert (place.version, place.line) == (needs, line), place


async def test_nullable_reference_types() -> None:
    source = script(
        "    string? label;\n    string? F(string? x) => x;", header="#nullable enable\n"
    )
    result = await check_csharp(source)
    assert result.ok, result.report()
    assert [(n.line, n.version) for n in result.newer_syntax] == [(1, "8.0")]


async def test_an_error_before_newer_syntax_is_still_reported_by_mcs() -> None:
    body = "    int a = 1\n    int F(int x) => x switch { 1 => 2, _ => 3 };"
    result = await check_csharp(script(body), file_name="A.cs")
    assert not result.ok
    [error] = result.errors
    assert (error.line, error.column, error.code) == (7, 14, "CS1002")  # mcs's, moved to the gap
    assert [n.line for n in result.newer_syntax] == [8]


async def test_an_error_after_newer_syntax_is_found_by_the_grammar() -> None:
    """Past a switch expression mcs is lost; tree-sitter's grammar still sees the missing ';'."""
    body = "    int F(int x) => x switch { 1 => 2, _ => 3 };\n    void G()\n    {\n        Debug.Log(1)\n    }"
    result = await check_csharp(script(body), file_name="A.cs")
    assert not result.ok
    [error] = result.errors
    assert (error.line, error.column) == (10, 9) and "Debug.Log(1)" in error.message
    assert [n.line for n in result.newer_syntax] == [7]


async def test_syntax_newer_than_the_projects_language_is_a_warning() -> None:
    body = '    string F(int x) => x switch { 1 => "one", _ => "many" };'
    old = await check_csharp(script(body), language_version="7.3")
    assert old.ok, "a warning, not an error: the editor has the last word"
    [warning] = [d for d in old.diagnostics if d.severity == "warning"]
    assert warning.code == "langversion" and "switch expression (C# 8.0)" in warning.message
    assert "C# 7.3" in warning.message
    current = await check_csharp(script(body))
    assert [d for d in current.diagnostics if d.severity == "warning"] == []
    file_scoped = await check_csharp("namespace Game;\npublic class A { }\n")
    assert [d.message for d in file_scoped.diagnostics if d.code == "langversion"] == [
        "file-scoped namespace (C# 10.0) is newer than C# 9.0, the language this project compiles"
    ]


# Missing tokens: (source lines, expected line, column, code). mcs reports most of these as
# "CS1525 Unexpected symbol" on the next line; Roslyn reports the token after the last good one.
MISSING = [
    (
        ["    void F()", "    {", "        int a = 1", "        int b = 2;", "    }"],
        9,
        18,
        "CS1002",
    ),
    (["    int F()", "    {", "        int x = 2", "        return x;", "    }"], 9, 18, "CS1002"),
    (
        ["    void F()", "    {", "        var t = 3", "        if (t > 2) { }", "    }"],
        9,
        18,
        "CS1002",
    ),
    (
        ["    void F()", "    {", "        int a = 1  // the count", "", "        a++;", "    }"],
        9,
        18,
        "CS1002",
    ),
    (
        ["    void F()", "    {", "        if (Time.time > 1", "        { }", "    }"],
        9,
        26,
        "CS1026",
    ),
    (["    void F()", "    {", "        Debug.Log(1)", "    }"], 9, 21, "CS1002"),
]


@pytest.mark.parametrize(("body", "line", "column", "code"), MISSING)
async def test_a_missing_token_is_reported_where_it_is_missing(
    body: list[str], line: int, column: int, code: str
) -> None:
    source = script("\n".join(body))
    result = await check_csharp(source, file_name="M.cs")
    first = result.errors[0]
    assert (first.line, first.column, first.code) == (line, column, code), result.report()
    # The column is just past the line's last token, whatever comment follows it.
    code_part = source.splitlines()[line - 1].split("//")[0].rstrip()
    assert column == len(code_part) + 1


async def test_a_missing_brace_after_a_class_header() -> None:
    result = await check_csharp("namespace N\n{\n    class A\n        void F() { }\n    }\n}\n")
    first = result.errors[0]
    assert (first.line, first.column, first.code) == (3, 12, "CS1514")


BROKEN = [
    "class A {\n  void F() {\n    int x = 1;\n  }\n",  # end of file inside the class
    "class A {\n  void F() {\n    int a = 1",  # end of file mid-statement, no newline
    "class A\n",
    'class A {\n\tvoid F() {\n\t\tvar s = "abc;\n\t}\n}\n',
    "class A {\n  void F() {\n    F(1, 2\n  }\n}\n",
    "class A { int x = 1 } }\n",
    "class A {\n  void F() { int = 3; int 1x = 2; char c = 'ab'; }\n}\n",
]


@pytest.mark.parametrize("source", BROKEN)
async def test_positions_are_always_inside_the_file(source: str) -> None:
    result = await check_csharp(source, file_name="B.cs")
    assert not result.ok
    lines = source.splitlines()
    for d in result.diagnostics:
        assert 1 <= d.line <= len(lines), d
        assert 1 <= d.column <= len(lines[d.line - 1]) + 1, d


async def test_end_of_file_is_reported_at_the_end_of_the_last_line() -> None:
    source = "class A {\n  void F() {\n    int x = 1;\n  }\n"
    [error] = (await check_csharp(source)).errors
    assert (error.line, error.column) == (4, 4)  # was (4, 246) from mcs


async def test_the_check_tool_accepts_csharp_9(
    stub_editor_build: tuple[Path, dict[str, str]],
) -> None:
    """write_script and check_script refused valid C# 9; now the check notes what mcs skipped."""
    check = next(t for t in UnityToolkit(groups="all").tools() if t.name == "check_script")
    outcome = await check.call(
        {"source": script("    List<int> items = new();"), "file_name": "Assets/P.cs"}, ctx=None
    )
    assert not outcome.is_error
    assert "target-typed new() needs C# 9.0" in outcome.text
    typed = await check_csharp(
        script("    List<int> items = new();"),
        references=[stub_editor_build[0].parent / "UnityEngine.dll"],
    )
    assert typed.ok and typed.mode == "syntax"
    assert "types not checked" in typed.report()


def corpus_files() -> list[Path]:
    """C# files of real Unity packages; setup fetches them (a missing corpus fails loudly)."""
    files = sorted(CORPUS.glob("*/package/**/*.cs"))
    if len(files) < 400:
        raise RuntimeError(f"no Unity C# corpus in {CORPUS}: run scripts/setup.d/unity.sh")
    return files


def needs_more_than_mcs(path: Path) -> bool:
    """Files using syntax mcs cannot parse: where false errors came from."""
    return bool(parse(path.read_text("utf-8-sig"), UNITY_EDITOR_DEFINES).constructs)


async def test_real_unity_packages_have_no_false_errors() -> None:
    """UniTask, UniRx, Crowdin's plugin and onnxruntime-unity all compile in Unity: no errors here.

    By default the files that use syntax mcs cannot parse (about a tenth of the corpus, where the
    false errors were); AGENTSDK_UNITY_FULL_CORPUS=1 checks all 524 files (~90 s on 2 cores).
    """
    files = corpus_files()
    if os.environ.get("AGENTSDK_UNITY_FULL_CORPUS") != "1":
        files = [f for f in files if needs_more_than_mcs(f)]
    assert len(files) >= 40
    false_errors: list[str] = []
    noted = 0
    limit = anyio.Semaphore(2)

    async def one(path: Path) -> None:
        nonlocal noted
        async with limit:
            result = await check_csharp(path.read_text("utf-8-sig"), file_name=str(path))
        noted += bool(result.newer_syntax)
        if not result.ok:
            false_errors.append(result.report())

    async with anyio.create_task_group() as group:
        for path in files:
            group.start_soon(one, path)
    assert false_errors == []
    assert noted >= 40, "these files use syntax mcs cannot parse: each should carry a note"


async def test_write_script_sends_csharp_9_to_the_editor(stub_editor: MonoHost) -> None:
    """It used to refuse the file ("Not written"); now the editor gets it and compiles it.

    The stub editor compiles with mcs, so here the compile itself fails; Unity's Roslyn would not.
    """
    project = stub_editor.bridge_dir.parents[1]
    source = script("    public int Speed { get; init; } = 3;")
    async with UnityToolkit(settings=stub_editor.settings(), groups="all") as unity:
        write = next(t for t in unity.tools() if t.name == "write_script")
        outcome = await write.call({"path": "Assets/Probe.cs", "content": source}, ctx=None)
    assert "Not written" not in outcome.text
    assert (project / "Assets" / "Probe.cs").read_text() == source
