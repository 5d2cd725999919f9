"""Our MCP client against third-party servers run for real: server-everything (npm),
mcp-server-time and mcp-server-git (PyPI), driven by agents with a ScriptedModel."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from agentsdk.mcp import MCPToolkit, load_config, toolkit_from_string
from agentsdk.testing import ScriptedModel

from agentsdk import Agent, ImagePart, ModelProfile, ToolCallPart

from .helpers import SERVERS, png_size, servers_running

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leftovers")]


def _results(result: Any) -> list[Any]:
    return [r for m in result.messages for r in m.tool_results]


async def test_everything_image_reaches_the_model_request(
    everything: list[str], tmp_path: Path
) -> None:
    toolkit = MCPToolkit.stdio(everything[0], everything[1:])
    model = ScriptedModel([ToolCallPart(name="get-tiny-image", arguments={}), "It is a logo."])
    result = await Agent(model, tools=[toolkit], artifacts_dir=tmp_path).run("Show me the image.")
    assert result.output == "It is a logo."
    # the second request carries the tool result with the image inside it
    [tool_result] = model.requests[1].messages[-1].tool_results
    images = [p for p in tool_result.parts if isinstance(p, ImagePart)]
    assert len(images) == 1 and images[0].media_type == "image/png"
    assert png_size(images[0].data) == (20, 20)  # the server's logo, whole
    # and the texts around it were kept in order
    texts = [p.text for p in tool_result.parts if not isinstance(p, ImagePart)]
    assert len(texts) == 2 and "image" in texts[0].lower()


async def test_everything_s_instructions_reach_the_system_prompt(
    everything: list[str], tmp_path: Path
) -> None:
    # the server's instructions, sent when it initialises, are its README for models
    written = (Path(everything[1]).parent / "docs" / "instructions.md").read_text()
    toolkit = MCPToolkit.stdio(everything[0], everything[1:])
    model = ScriptedModel(["Ready."])
    await Agent(model, "Use the tools.", tools=[toolkit], artifacts_dir=tmp_path).run("Hi.")
    assert toolkit.instructions is not None and toolkit.instructions.strip() == written.strip()
    system = model.requests[0].messages[0]
    assert system.role == "system"
    assert system.text == f"Use the tools.\n\n{toolkit.instructions}"


async def test_everything_image_goes_in_a_user_message_for_models_that_need_it(
    everything: list[str], tmp_path: Path
) -> None:
    toolkit = MCPToolkit.stdio(everything[0], everything[1:])
    profile = ModelProfile(images_in_tool_results=False, image_input=True)
    model = ScriptedModel(
        [ToolCallPart(name="get-tiny-image", arguments={}), "Seen."], profile=profile
    )
    await Agent(model, tools=[toolkit], artifacts_dir=tmp_path).run("Show me the image.")
    trailing = model.requests[1].messages[-1]
    assert trailing.role == "user"
    assert [p.media_type for p in trailing.parts if isinstance(p, ImagePart)] == ["image/png"]


async def test_everything_bad_arguments_and_server_errors(
    everything: list[str], tmp_path: Path
) -> None:
    model = ScriptedModel(
        [
            ToolCallPart(name="get-sum", arguments={"a": "one", "b": 2}),  # our schema check
            ToolCallPart(name="get-sum", arguments={"a": 1.5, "b": 2}),
            ToolCallPart(name="echo", arguments={"message": "héllo ✓"}),
            "Done.",
        ]
    )
    toolkit = MCPToolkit.stdio(everything[0], everything[1:])
    result = await Agent(model, tools=[toolkit], artifacts_dir=tmp_path).run("Add.")
    bad, good, echo = _results(result)
    assert bad.is_error and "a: expected number, got string 'one'" in bad.text
    assert not good.is_error and "3.5" in good.text
    assert echo.text.endswith("héllo ✓")


async def test_everything_resources_as_api_and_tools(everything: list[str], tmp_path: Path) -> None:
    docs = Path(everything[1]).parent / "docs"
    async with MCPToolkit.stdio(everything[0], everything[1:], label="everything") as toolkit:
        listed = await toolkit.list_resources()
        static = {r.uri: r for r in listed if not r.template}
        templates = [r.uri for r in listed if r.template]
        # the static documents are the server's docs folder, one resource per file
        assert {u.rsplit("/", 1)[-1] for u in static if "/static/document/" in u} == {
            p.name for p in docs.iterdir()
        }
        assert any("{" in t for t in templates)
        uri = next(u for u in static if u.endswith("/features.md"))
        [part] = await toolkit.read_resource(uri)
        assert part.text == (docs / "features.md").read_text()  # type: ignore[union-attr]

        model = ScriptedModel(
            [
                ToolCallPart(name="everything_list_resources", arguments={}),
                ToolCallPart(name="everything_read_resource", arguments={"uri": uri}),
                ToolCallPart(name="everything_read_resource", arguments={"uri": "demo://nope"}),
                "Read.",
            ]
        )
        result = await Agent(model, tools=[toolkit], artifacts_dir=tmp_path).run("Read.")
        listing, read, missing = _results(result)
        assert uri in listing.text and not read.is_error
        assert read.text == (docs / "features.md").read_text()
        assert missing.is_error and "demo://nope" in missing.text


async def test_everything_progress_and_a_long_tool(everything: list[str]) -> None:
    from agentsdk import ArtifactStore, ToolContext

    seen: list[tuple[float, float | None]] = []

    async def report(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    async with MCPToolkit.stdio(everything[0], everything[1:]) as toolkit:
        tool = next(t for t in toolkit.tools() if t.name == "trigger-long-running-operation")
        ctx = ToolContext("r", "c", tool.name, 1, ArtifactStore(Path("/nonexistent")), None, report)
        outcome = await tool.call({"duration": 1, "steps": 4}, ctx)
    assert not outcome.is_error and "completed" in outcome.text.lower()
    assert seen == [(1.0, 4.0), (2.0, 4.0), (3.0, 4.0), (4.0, 4.0)]


async def test_time_server_answers_match_zoneinfo(time_server: str, tmp_path: Path) -> None:
    toolkit = MCPToolkit.stdio(time_server, ["--local-timezone", "UTC"], prefix="time")
    model = ScriptedModel(
        [
            ToolCallPart(
                name="time_convert_time",
                arguments={
                    "source_timezone": "Europe/Paris",
                    "time": "10:30",
                    "target_timezone": "Asia/Kolkata",
                },
            ),
            ToolCallPart(name="time_get_current_time", arguments={"timezone": "Nowhere/City"}),
            "Converted.",
        ]
    )
    result = await Agent(model, tools=[toolkit], artifacts_dir=tmp_path).run("Convert.")
    converted, unknown = _results(result)
    answer = json.loads(converted.text)
    source = datetime.fromisoformat(answer["source"]["datetime"])
    target = datetime.fromisoformat(answer["target"]["datetime"])
    assert (source.hour, source.minute) == (10, 30)
    expected = source.astimezone(ZoneInfo("Asia/Kolkata"))
    assert target == expected and target.utcoffset() == expected.utcoffset()
    assert unknown.is_error and "Nowhere/City" in unknown.text
    assert [s.name for s in model.requests[0].tools] == [
        "time_get_current_time",
        "time_convert_time",
    ]


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=Test", "-c", "user.email=t@example.com", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


async def test_git_server_on_a_temporary_repository(git_server: str, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "notes.txt").write_text("first line\n")
    _git(repo, "add", "notes.txt")
    _git(repo, "commit", "-q", "-m", "Add notes")
    (repo / "notes.txt").write_text("first line\nsecond line\n")

    toolkit = MCPToolkit.stdio(git_server, ["--repository", str(repo)], prefix="git")
    model = ScriptedModel(
        [
            [
                ToolCallPart(name="git_git_status", arguments={"repo_path": str(repo)}),
                ToolCallPart(name="git_git_diff_unstaged", arguments={"repo_path": str(repo)}),
            ],
            ToolCallPart(
                name="git_git_add", arguments={"repo_path": str(repo), "files": ["notes.txt"]}
            ),
            ToolCallPart(
                name="git_git_commit", arguments={"repo_path": str(repo), "message": "More notes"}
            ),
            ToolCallPart(name="git_git_log", arguments={"repo_path": str(repo)}),
            "Committed.",
        ]
    )
    result = await Agent(model, tools=[toolkit], artifacts_dir=tmp_path / "runs").run("Commit.")
    status, diff, added, committed, log = _results(result)
    assert not any(r.is_error for r in (status, diff, added, committed, log))
    assert "notes.txt" in status.text and "+second line" in diff.text
    # the repository really changed: git itself sees the agent's commit
    assert _git(repo, "log", "--format=%s") == "More notes\nAdd notes\n"
    assert _git(repo, "status", "--porcelain") == ""
    head = _git(repo, "rev-parse", "HEAD").strip()
    assert head in log.text and head[:7] in committed.text


async def test_tool_list_changes_reach_the_next_turn(tmp_path: Path) -> None:
    for protocol in ("auto", "legacy"):  # a 2026 listen stream, and the classic notification
        toolkit = MCPToolkit.stdio(
            sys.executable, [str(SERVERS / "dynamic.py")], protocol=protocol, resources=False
        )
        model = ScriptedModel(
            [
                ToolCallPart(name="unlock", arguments={}),
                ToolCallPart(name="secret", arguments={"word": "stressed"}),
                "It says desserts.",
            ]
        )
        result = await Agent(model, tools=[toolkit], artifacts_dir=tmp_path).run("Unlock it.")
        first, second = ([s.name for s in r.tools] for r in model.requests[:2])
        assert "secret" not in first and "secret" in second, protocol
        assert _results(result)[1].text == "desserts"


async def test_toolkit_strings_and_config_file(
    time_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "clock": {
                        "command": time_server,
                        "args": ["--local-timezone", "UTC"],
                        "tools": ["get_current_time"],
                        "autoApprove": [],  # another client's key: ignored
                    }
                }
            }
        )
    )
    monkeypatch.setenv("AGENTSDK_MCP_CONFIG", str(config))
    assert set(load_config(config)) == {"clock"}
    by_name = toolkit_from_string("mcp:clock")
    by_file = toolkit_from_string(f"{config}#clock")
    by_command = toolkit_from_string(f"mcp:{time_server} --local-timezone UTC")
    assert by_name.label == "clock" and by_file.tool_names == ["get_current_time"]
    assert by_command.tool_names is None

    model = ScriptedModel(
        [ToolCallPart(name="get_current_time", arguments={"timezone": "UTC"}), "Now."]
    )
    result = await Agent(model, tools=["mcp:clock"], artifacts_dir=tmp_path / "runs").run("Time?")
    [now] = _results(result)
    stamp = datetime.fromisoformat(json.loads(now.text)["datetime"])
    assert abs((stamp - datetime.now(ZoneInfo("UTC"))).total_seconds()) < 600
    assert [s.name for s in model.requests[0].tools] == ["get_current_time"]

    with pytest.raises(ValueError, match="no MCP server 'nope'"):
        toolkit_from_string(f"{config}#nope")
    config.write_text('{"mcpServers": {"x": {"args": []}}}')
    with pytest.raises(ValueError, match="'x' needs a 'command' or a 'url'"):
        load_config(config)


async def test_image_content_survives_the_wire_bytes_exactly(everything: list[str]) -> None:
    """The PNG our client hands to the model is byte for byte what the server sent."""
    from mcp import Client, StdioServerParameters

    async with Client(StdioServerParameters(command=everything[0], args=everything[1:])) as raw:
        sent = await raw.call_tool("get-tiny-image", {})
    [wire] = [b for b in sent.content if b.type == "image"]
    async with MCPToolkit.stdio(everything[0], everything[1:]) as toolkit:
        tool = next(t for t in toolkit.tools() if t.name == "get-tiny-image")
        outcome = await tool.call({})
    [ours] = outcome.images
    assert ours.data == base64.b64decode(wire.data)  # type: ignore[union-attr]
    assert servers_running(everything[1]) == set()


async def test_everything_over_streamable_http(everything: list[str], tmp_path: Path) -> None:
    import socket
    import subprocess

    import anyio
    from anyio.streams.text import TextReceiveStream

    with socket.socket() as probe:  # a free port for the server (it cannot report one)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [everything[0], everything[1], "streamableHttp"]
    server = await anyio.open_process(
        command, env={"PATH": "/usr/bin:/bin", "PORT": str(port)}, stderr=subprocess.PIPE
    )
    try:
        said = ""
        assert server.stderr is not None
        with anyio.fail_after(60):
            async for chunk in TextReceiveStream(server.stderr):
                said += chunk
                if f"listening on port {port}" in said:
                    break
        toolkit = MCPToolkit.http(f"http://127.0.0.1:{port}/mcp", headers={"X-Test": "yes"})
        assert toolkit.label == f"127.0.0.1:{port}"
        model = ScriptedModel(
            [
                [
                    ToolCallPart(name="get-tiny-image", arguments={}),
                    ToolCallPart(name="echo", arguments={"message": "over http"}),
                ],
                "Both worked.",
            ]
        )
        result = await Agent(model, tools=[toolkit], artifacts_dir=tmp_path).run("Go.")
        image, echo = _results(result)
        [png] = [p for p in image.parts if isinstance(p, ImagePart)]
        assert png_size(png.data) == (20, 20) and echo.text == "Echo: over http"
    finally:
        server.kill()
        await server.wait()
        await server.aclose()


def test_cli_lists_a_configured_servers_tools(time_server: str, tmp_path: Path) -> None:
    import os
    import subprocess

    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"clock": {"command": time_server}}}))
    env = {**os.environ, "AGENTSDK_MCP_CONFIG": str(config)}
    done = subprocess.run(
        [sys.executable, "-m", "agentsdk.cli", "mcp", "tools", "mcp:clock", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    specs = {s["name"]: s for s in json.loads(done.stdout)}
    assert set(specs) == {"get_current_time", "convert_time"}
    assert specs["convert_time"]["parameters"]["required"] == [
        "source_timezone",
        "time",
        "target_timezone",
    ]
