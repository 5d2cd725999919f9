"""check_csharp: Mono's mcs diagnostics with the right file, line and column."""

from __future__ import annotations

from pathlib import Path

import pytest
from agentsdk_unity import CSharpCompilerMissingError, UnityToolkit, check_csharp
from agentsdk_unity.csharp import parse_diagnostics

pytestmark = pytest.mark.anyio

SPINNER_MISSING_SEMICOLON = """using UnityEngine;

public class Spinner : MonoBehaviour
{
    public float speed = 90f;

    void Update()
    {
        transform.Rotate(0f, speed * Time.deltaTime, 0f)
    }
}
"""


async def test_missing_semicolon_points_at_the_end_of_its_line() -> None:
    result = await check_csharp(SPINNER_MISSING_SEMICOLON, file_name="Assets/Scripts/Spinner.cs")
    assert not result.ok and result.mode == "syntax"
    [error] = result.errors
    assert (error.file, error.line, error.code) == ("Assets/Scripts/Spinner.cs", 9, "CS1002")
    assert error.column == len("        transform.Rotate(0f, speed * Time.deltaTime, 0f)") + 1
    assert "Assets/Scripts/Spinner.cs(9,57): error CS1002: ; expected" in result.report()


async def test_unterminated_string_and_unknown_token() -> None:
    source = 'class A\n{\n    string s = "open;\n}\n'
    result = await check_csharp(source)
    assert not result.ok
    assert result.errors[0].line == 3 and result.errors[0].code == "CS1010"


async def test_valid_unity_script_passes_the_syntax_check() -> None:
    fixed = SPINNER_MISSING_SEMICOLON.replace("0f)\n", "0f);\n")
    result = await check_csharp(fixed)
    assert result.ok and result.diagnostics == []
    assert result.report().startswith("ok")


async def test_type_errors_with_references(stub_editor_build: tuple[Path, dict[str, str]]) -> None:
    engine = stub_editor_build[0].parent / "UnityEngine.dll"
    source = SPINNER_MISSING_SEMICOLON.replace("0f)\n", "0f);\n").replace(
        "public float speed = 90f;", "public int speed = 90.5f;"
    )
    result = await check_csharp(source, file_name="Spinner.cs", references=[engine])
    assert result.mode == "compile" and not result.ok
    [error] = result.errors
    assert (error.line, error.column, error.code) == (5, 24, "CS0031")  # the literal 90.5f
    fine = await check_csharp(
        SPINNER_MISSING_SEMICOLON.replace("0f)\n", "0f);\n"), references=[engine]
    )
    assert fine.ok, fine.report()


async def test_missing_mcs_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(CSharpCompilerMissingError) as missing:
        await check_csharp("class A {}")
    assert "apt-get install mono-mcs" in str(missing.value)
    # The toolkit still writes (unchecked) when mcs is absent; the tool says so. Here: the check tool.
    check = next(t for t in UnityToolkit(groups="all").tools() if t.name == "check_script")
    outcome = await check.call({"source": "class A {}"}, ctx=None)
    assert outcome.is_error and "mcs" in outcome.text


async def test_check_script_tool_reports_lines_to_the_model() -> None:
    check = next(t for t in UnityToolkit(groups="all").tools() if t.name == "check_script")
    outcome = await check.call(
        {"source": SPINNER_MISSING_SEMICOLON, "file_name": "Spinner.cs"}, ctx=None
    )
    assert outcome.is_error
    assert outcome.text == "C# syntax errors:\nSpinner.cs(9,57): error CS1002: ; expected"


def test_parse_diagnostics_dedupes_and_reads_global_errors() -> None:
    output = "a.cs(3,1): error CS1525: Unexpected symbol `x'\na.cs(3,1): error CS1525: Unexpected symbol `x'\nerror CS2001: Source file `b.cs' could not be found\nCompilation failed: 2 error(s), 0 warnings\n"
    found = parse_diagnostics(output)
    assert [(d.file, d.line, d.code) for d in found] == [("a.cs", 3, "CS1525"), ("", 0, "CS2001")]


async def test_toolkit_loads_by_name_and_says_when_no_editor_is_there(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from agentsdk.plugins import load_toolkit

    monkeypatch.setenv("AGENTSDK_UNITY_BRIDGE_DIR", str(tmp_path / "nothing"))
    for name in ("AGENTSDK_UNITY_PORT", "AGENTSDK_UNITY_TOKEN", "AGENTSDK_UNITY_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    toolkit = load_toolkit("unity")
    assert isinstance(toolkit, UnityToolkit)
    async with toolkit:
        info = next(t for t in toolkit.tools() if t.name == "scene_info")
        outcome = await info.call({}, ctx=None)
    assert outcome.is_error
    assert "No Unity bridge configured" in outcome.text and "AGENTSDK_UNITY_PORT" in outcome.text
