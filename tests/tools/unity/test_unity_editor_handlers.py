"""The Unity handlers: compiled against stub assemblies, then run on behavioural stubs under mono.

The stubs are NOT Unity (see stubs/): these tests show that the handlers compile as separate
assemblies in C# 7.2, that the bootstrap, main-thread dispatch, status file and reload path work, and
that the commands' JSON matches what UnityToolkit expects. Unity's own behaviour is not exercised.
"""

from __future__ import annotations

import json
import re
import struct
import zlib
from pathlib import Path

import pytest
from agentsdk_unity import UnityBridge, UnityToolkit

from agentsdk import ToolCallPart, ToolOutcome

from .monohost import PACKAGE, MonoHost

pytestmark = pytest.mark.anyio

SPINNER = """using UnityEngine;

public class Spinner : MonoBehaviour
{
    public float speed = 90f;
    public bool clockwise = true;
    public string label = "turret";

    void Update()
    {
        transform.Rotate(0f, speed * Time.deltaTime, 0f);
    }
}
"""


async def call(toolkit: UnityToolkit, tool_name: str, /, **arguments: object) -> ToolOutcome:
    """Calls one of the toolkit's tools the way the agent loop does."""
    found = next(t for t in toolkit.tools() if t.name == tool_name)
    return await found.call(arguments, ctx=None)


def test_handlers_compile_against_stub_assemblies(
    stub_editor_build: tuple[Path, dict[str, str]],
) -> None:
    exe, outputs = stub_editor_build
    assert exe.exists()
    editor_dll = exe.parent / "AgentSdk.Unity.Bridge.Editor.dll"
    assert editor_dll.stat().st_size > 10_000
    # Clean builds: no errors and no warnings in the package's own assemblies.
    assert outputs["AgentSdk.Unity.Bridge.Core.dll"].strip() == ""
    assert outputs["AgentSdk.Unity.Bridge.Editor.dll"].strip() == ""


def test_core_is_engine_independent() -> None:
    core = PACKAGE / "Editor" / "Core"
    for source in core.glob("*.cs"):
        text = source.read_text()
        assert "using Unity" not in text, f"{source.name} must not depend on Unity"
    asmdef = json.loads((core / "AgentSdk.Unity.Bridge.Core.asmdef").read_text())
    assert asmdef["noEngineReferences"] is True
    editor_asmdef = json.loads(
        (PACKAGE / "Editor" / "Unity" / "AgentSdk.Unity.Bridge.Editor.asmdef").read_text()
    )
    assert "AgentSdk.Unity.Bridge.Core" in editor_asmdef["references"]
    assert editor_asmdef["includePlatforms"] == ["Editor"]
    package = json.loads((PACKAGE / "package.json").read_text())
    assert package["name"] == "com.agentsdk.unity-bridge"


async def test_script_write_compile_errors_carry_file_and_line(stub_editor: MonoHost) -> None:
    async with UnityToolkit(settings=stub_editor.settings(), groups="all") as unity:
        broken = SPINNER.replace('public string label = "turret";', "public string label = 42;")
        outcome = await call(
            unity, "write_script", path="Assets/Scripts/Spinner.cs", content=broken
        )
        assert outcome.is_error
        assert "Assets/Scripts/Spinner.cs(7,27): error: CS0029" in outcome.text
        # A syntax error never reaches the editor: mcs catches it locally, with the right line.
        outcome = await call(
            unity,
            "write_script",
            path="Assets/Scripts/Other.cs",
            content="class Other { int x = 1 }\n",
        )
        assert (
            outcome.is_error
            and "Not written" in outcome.text
            and "Other.cs(1,25): error CS1519" in outcome.text
        )
        missing = await call(unity, "read_script", path="Assets/Scripts/Other.cs")
        assert missing.is_error and "not_found" in missing.text


@pytest.mark.slow
async def test_content_hash_precondition_prevents_double_edits(stub_editor: MonoHost) -> None:
    async with UnityToolkit(settings=stub_editor.settings(), groups="all") as unity:
        first = await call(
            unity,
            "write_script",
            path="Assets/Scripts/Spinner.cs",
            content=SPINNER,
            expected_hash="",
        )
        assert not first.is_error, first.text
        written = json.loads(first.text)["write"]
        assert written["changed"] is True and written["previous_hash"] == ""
        again = await call(unity, "write_script", path="Assets/Scripts/Spinner.cs", content=SPINNER)
        assert (
            json.loads(again.text)["write"]["changed"] is False
        )  # same content: not applied twice
        edited = SPINNER.replace("90f", "45f")
        stale = await call(
            unity,
            "write_script",
            path="Assets/Scripts/Spinner.cs",
            content=edited,
            expected_hash="",
        )
        assert (
            stale.is_error and "precondition_failed" in stale.text and written["hash"] in stale.text
        )
        fresh = await call(
            unity,
            "write_script",
            path="Assets/Scripts/Spinner.cs",
            content=edited,
            expected_hash=written["hash"],
        )
        assert not fresh.is_error, fresh.text
        read = json.loads((await call(unity, "read_script", path="Assets/Scripts/Spinner.cs")).text)
        assert "45f" in read["content"] and read["hash"] == json.loads(fresh.text)["write"]["hash"]
        escape = await call(
            unity, "write_script", path="Assets/../../evil.cs", content="class E {}"
        )
        assert escape.is_error and "escapes the Assets folder" in escape.text


@pytest.mark.slow
async def test_build_a_prefab_from_a_compiled_script(stub_editor: MonoHost) -> None:
    project = stub_editor.bridge_dir.parents[1]
    async with UnityToolkit(settings=stub_editor.settings(), groups="all") as unity:
        session_before = (await unity.bridge.connect()).session
        assert not (
            await call(unity, "write_script", path="Assets/Scripts/Spinner.cs", content=SPINNER)
        ).is_error
        created = json.loads(
            (
                await call(
                    unity,
                    "create_gameobject",
                    name="Turret",
                    primitive="Cube",
                    position=[0, 0.5, 0],
                )
            ).text
        )
        assert created["components"] == ["Transform", "MeshFilter", "MeshRenderer"]
        child = json.loads(
            (
                await call(
                    unity, "create_gameobject", name="Barrel", parent="Turret", scale=[0.2, 0.2, 1]
                )
            ).text
        )
        assert child["path"] == "Turret/Barrel" and child["scale"] == [0.2, 0.2, 1.0]
        moved = json.loads(
            (
                await call(
                    unity,
                    "set_transform",
                    path="Turret/Barrel",
                    position=[0, 0, 0.6],
                    rotation_euler=[0, 90, 0],
                )
            ).text
        )
        assert moved["position"] == [0, 0, 0.6] and moved["rotation_euler"] == [0, 90, 0]
        added = json.loads(
            (await call(unity, "add_component", path="Turret", component="Spinner")).text
        )
        assert added["components"][-1] == "Spinner"
        speed = json.loads(
            (
                await call(
                    unity, "set_field", path="Turret", component="Spinner", field="speed", value=180
                )
            ).text
        )
        assert speed["value"] == 180
        flag = json.loads(
            (
                await call(
                    unity,
                    "set_field",
                    path="Turret",
                    component="Spinner",
                    field="clockwise",
                    value=False,
                )
            ).text
        )
        assert flag["value"] is False
        wrong = await call(
            unity, "set_field", path="Turret", component="Spinner", field="speed", value="fast"
        )
        assert wrong.is_error and "Float" in wrong.text
        ghost = await call(unity, "add_component", path="Nothing", component="Spinner")
        assert ghost.is_error and "No GameObject 'Nothing'" in ghost.text
        saved = await call(
            unity, "save_prefab", path="Turret", asset_path="Assets/Prefabs/Turret.prefab"
        )
        assert not saved.is_error, saved.text
        found = json.loads((await call(unity, "find_gameobjects", query="Barrel")).text)
        assert [g["path"] for g in found] == ["Turret/Barrel"]
        # The stub reloaded the "domain" after the compile; the client reconnected by itself.
        assert unity.bridge.welcome is not None and unity.bridge.welcome.session != session_before
    prefab = (project / "Assets" / "Prefabs" / "Turret.prefab").read_text()
    assert "component Spinner" in prefab and "speed = 180" in prefab


async def test_screenshot_returns_a_png_that_shows_the_scene(
    stub_editor: MonoHost, tmp_path: Path
) -> None:
    async with UnityToolkit(settings=stub_editor.settings(), groups="all") as unity:
        empty = await call(unity, "screenshot", width=96, height=64)
        await call(unity, "create_gameobject", name="Box", primitive="Cube")
        with_box = await call(unity, "screenshot", width=96, height=64)
    images = [next(p for p in o.parts if p.kind == "image") for o in (empty, with_box)]
    assert all(i.media_type == "image/png" for i in images)
    decoded = [png_pixels(i.data) for i in images]
    assert [(w, h) for w, h, _ in decoded] == [(96, 64), (96, 64)]
    assert "Camera 'Main Camera' at 96x64" in empty.text
    assert decoded[0][2] != decoded[1][2], "the new cube must show in the second picture"


def png_pixels(data: bytes) -> tuple[int, int, bytes]:
    """Width, height and decompressed scanlines of a PNG (checks the signature and chunk CRCs)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, width, height, idat = 8, 0, 0, b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert zlib.crc32(kind + body) == crc
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    return width, height, zlib.decompress(idat)


async def test_scene_play_mode_tests_and_console(stub_editor: MonoHost) -> None:
    project = stub_editor.bridge_dir.parents[1]
    async with UnityToolkit(settings=stub_editor.settings(), groups="all") as unity:
        unsaved = await call(unity, "save_scene")
        assert unsaved.is_error and "never been saved" in unsaved.text
        saved = json.loads((await call(unity, "save_scene", path="Assets/Scenes/Main.unity")).text)
        assert saved["name"] == "Main" and saved["dirty"] is False
        assert (project / "Assets" / "Scenes" / "Main.unity").exists()
        reopened = json.loads(
            (await call(unity, "open_scene", path="Assets/Scenes/Main.unity")).text
        )
        assert reopened["path"] == "Assets/Scenes/Main.unity"
        assert (
            json.loads((await call(unity, "play_mode", action="enter")).text)["is_playing"] is True
        )
        blocked = await call(unity, "save_scene")
        assert blocked.is_error and "play mode" in blocked.text
        assert (
            json.loads((await call(unity, "play_mode", action="exit")).text)["is_playing"] is False
        )
        run = json.loads(
            (await call(unity, "run_editmode_tests", test_names=["Game.Spins", "Game.Fails"])).text
        )
        assert (run["passed"], run["failed"]) == (1, 1)
        assert [r["status"] for r in run["results"]] == ["Passed", "Failed"]
        await call(
            unity,
            "write_script",
            path="Assets/Scripts/Broken.cs",
            content='class Broken { int x = "s"; }\n',
        )
        logs = json.loads((await call(unity, "console_logs")).text)
        assert isinstance(logs["entries"], list) and logs["last_seq"] >= 0


async def test_agent_run_sees_the_screenshot(stub_editor: MonoHost) -> None:
    from agentsdk.testing import ScriptedModel

    from agentsdk import Agent

    model = ScriptedModel(
        [
            ToolCallPart(
                name="create_gameobject", arguments={"name": "Crate", "primitive": "Cube"}
            ),
            ToolCallPart(name="screenshot", arguments={"width": 64, "height": 64}),
            "A crate is in view.",
        ]
    )
    agent = Agent(model=model, tools=[UnityToolkit(settings=stub_editor.settings(), groups="all")])
    result = await agent.run("Put a crate in front of the camera and look.")
    assert result.output == "A crate is in view."
    last_request = model.requests[-1]
    images = [
        p
        for m in last_request.messages
        for part in m.parts
        for p in (getattr(part, "parts", None) or [part])
        if getattr(p, "kind", "") == "image"
    ]
    assert images and images[0].data[:8] == b"\x89PNG\r\n\x1a\n"


async def test_status_file_reports_compiling_while_scripts_build(stub_editor: MonoHost) -> None:
    async with UnityBridge(stub_editor.settings()) as bridge:
        await bridge.request(
            "script.write", {"path": "Assets/S.cs", "content": "public class S {}"}
        )
        states = set()
        for _ in range(200):
            status = stub_editor.settings().read_status()
            if status is not None:
                states.add(status.state)
            if "compiling" in states and status is not None and status.state == "ready":
                break
            import anyio

            await anyio.sleep(0.02)
        assert "compiling" in states
        report = await bridge.request("compile.status")
        assert isinstance(report, dict) and re.match(r"^\d", str(report["finished_unix"]))


async def test_new_scene_and_reset_leave_a_default_scene(stub_editor: MonoHost) -> None:
    async with UnityToolkit(settings=stub_editor.settings(), groups="all") as unity:
        await call(unity, "create_gameobject", name="Crate", primitive="Cube")
        refused = await call(unity, "new_scene")
        assert refused.is_error and "unsaved changes" in refused.text
        fresh = json.loads((await call(unity, "new_scene", discard_changes=True, empty=True)).text)
        assert fresh["roots"] == [] and fresh["path"] == "" and fresh["dirty"] is False
        await call(unity, "create_gameobject", name="Crate", primitive="Cube")
        await unity.reset()
        info = json.loads((await call(unity, "scene_info")).text)
        assert info["roots"] == ["Main Camera", "Directional Light"]


@pytest.mark.slow
async def test_reading_a_script_that_does_not_compile_says_so_and_how_to_fix_it(
    stub_editor: MonoHost,
) -> None:
    # unity/fix-compile-error, tiered local model: it read the broken file twice and never
    # wrote it. The file's own compiler errors and the call that fixes them come with it.
    broken = 'using UnityEngine;\n\npublic class Health : MonoBehaviour\n{\n    public int hp = "full";\n}\n'
    fixed = broken.replace('"full"', "100")
    async with UnityToolkit(settings=stub_editor.settings(), groups="all") as unity:
        await call(unity, "write_script", path="Assets/Scripts/Health.cs", content=broken)
        await call(unity, "write_script", path="Assets/Scripts/Fine.cs", content=SPINNER)
        read = json.loads((await call(unity, "read_script", path="Assets/Scripts/Health.cs")).text)
        (error,) = read["compile_errors"]
        assert error.startswith("Assets/Scripts/Health.cs(5,21): error: CS0029"), error
        assert read["next"] == (
            'This file does not compile. Fix it with write_script(path="Assets/Scripts/Health.cs", '
            f'content=<the whole corrected file>, expected_hash="{read["hash"]}").'
        )
        # Another file's read carries none of them.
        other = json.loads((await call(unity, "read_script", path="Assets/Scripts/Fine.cs")).text)
        assert other["compile_errors"] == [] and other["next"] == ""
        done = await call(
            unity,
            "write_script",
            path="Assets/Scripts/Health.cs",
            content=fixed,
            expected_hash=read["hash"],
        )
        assert not done.is_error, done.text
        assert json.loads(done.text)["note"] == (
            "Assets/Scripts/Health.cs is written and the project compiles without errors."
        )
        again = json.loads((await call(unity, "read_script", path="Assets/Scripts/Health.cs")).text)
        assert again["compile_errors"] == [] and "100" in again["content"]
