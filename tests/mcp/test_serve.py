"""Our MCP server, driven by the official ``mcp`` client over stdio and streamable HTTP.

The server is the real command (``agentsdk mcp serve ...``) in a child process, with
the real three.js (Chromium) and finance toolkits behind it.
"""

from __future__ import annotations

import base64
import csv
import gzip
import io
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import mcp.types as mt
import pytest
from agentsdk.mcp import MCPConnectionError, MCPToolkit, create_server
from agentsdk.sandbox import pid_alive
from agentsdk_finance import FinanceToolkit
from agentsdk_threejs import ThreeJSToolkit
from anyio.streams.text import TextReceiveStream
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from agentsdk import plugins, tool

from .helpers import SERVERS, png_size

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leftovers")]

SERVE = [sys.executable, "-m", "agentsdk.cli", "mcp", "serve"]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "XDG_CACHE_HOME")}
    env["PYTHONPATH"] = str(SERVERS)
    env.update(extra)
    return env


def _ibm_closes_2010() -> tuple[float, float]:
    """First and last adjusted close of IBM in 2010, read from the sample file itself."""
    import bokeh_sampledata

    path = Path(bokeh_sampledata.__file__).parent / "_data" / "stocks.csv.gz"
    with gzip.open(path, "rt") as f:
        rows = sorted(
            (r["Date"], float(r["Adj Close"]))
            for r in csv.DictReader(f)
            if r["Ticker"] == "IBM" and r["Date"].startswith("2010-")
        )
    return rows[0][1], rows[-1][1]


def _red_share(png: bytes) -> float:
    """Share of pixels that are clearly red (R high, G and B low)."""
    import numpy as np
    from PIL import Image as PILImage

    pixels = np.asarray(PILImage.open(io.BytesIO(png)).convert("RGB")).astype(int)
    red = (pixels[..., 0] > 120) & (pixels[..., 1] < 80) & (pixels[..., 2] < 80)
    return float(red.mean())


async def _exercise_threejs_and_finance(client: Client) -> None:
    listed = {t.name: t for t in (await client.list_tools()).tools}
    # names, descriptions and JSON schemas are the toolkits' own
    for name in ("threejs", "finance"):
        for ours in plugins.load_toolkit(name).tools():
            theirs = listed[ours.name]
            assert theirs.description == ours.description
            assert theirs.input_schema == ours.parameters

    await client.call_tool("add_light", {"kind": "ambient", "intensity": 1.5})
    crate = {"name": "crate", "shape": "box", "color": "red", "size": [2, 2, 2]}
    rendered = await client.call_tool("add_object", crate)
    if rendered.is_error and "Try the call again" in str(rendered.content):
        rendered = await client.call_tool("add_object", crate)  # as a model would, once
    assert not rendered.is_error, rendered.content
    [image] = [b for b in rendered.content if isinstance(b, mt.ImageContent)]
    png = base64.b64decode(image.data)
    assert image.mime_type == "image/png" and png_size(png)[0] >= 64
    assert _red_share(png) > 0.02  # the red crate is really in the picture
    assert any("crate" in b.text for b in rendered.content if isinstance(b, mt.TextContent))

    history = await client.call_tool(
        "price_history", {"symbol": "IBM", "start": "2010-01-01", "end": "2010-12-31"}
    )
    assert not history.is_error
    data = json.loads(history.content[0].text)  # type: ignore[union-attr]
    first, last = _ibm_closes_2010()
    assert data["first"]["close"] == pytest.approx(first, abs=0.006)
    assert data["last"]["close"] == pytest.approx(last, abs=0.006)

    refused = await client.call_tool("price_history", {"symbol": "NOPE"})
    assert refused.is_error
    assert "NOPE" in refused.content[0].text or "not in" in refused.content[0].text  # type: ignore[union-attr]
    invalid = await client.call_tool("add_object", {"name": "x", "shape": "teapot"})
    assert invalid.is_error and "shape" in invalid.content[0].text  # type: ignore[union-attr]


async def test_stdio_threejs_render_finance_and_errors() -> None:
    params = StdioServerParameters(
        command=SERVE[0], args=[*SERVE[1:], "threejs", "finance"], env=_env()
    )
    with anyio.fail_after(240):
        async with Client(params) as client:
            assert client.server_info is not None and client.server_info.name == "agentsdk"
            # the served toolkits' own instructions are the server's, in the order served
            served = (ThreeJSToolkit.instructions, FinanceToolkit.instructions)
            assert client.instructions == "\n\n".join(str(t).strip() for t in served)
            await _exercise_threejs_and_finance(client)


async def test_blender_render_over_mcp_reports_progress_per_view(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A first-party toolkit's long tool: the real bpy worker renders view by view and
    each finished view is a progress notification; the images arrive as image content.
    Neither side logs anyio's "cancel scope in a different task" on the way out."""
    params = StdioServerParameters(command=SERVE[0], args=[*SERVE[1:], "blender"], env=_env())
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    stderr = tmp_path / "server-stderr.txt"
    with anyio.fail_after(300), stderr.open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:  # type: ignore[arg-type]
            made = await client.call_tool("create_primitive", {"kind": "cube", "name": "Crate"})
            assert not made.is_error, made.content
            views = ["front", "top", "perspective"]
            rendered = await client.call_tool(
                "render", {"views": views, "resolution": [96, 72]}, progress_callback=on_progress
            )
    assert not rendered.is_error, rendered.content
    text = rendered.content[0]
    assert isinstance(text, mt.TextContent) and "Crate" in text.text
    pictures = [c for c in rendered.content if isinstance(c, mt.ImageContent)]
    assert [png_size(base64.b64decode(c.data)) for c in pictures] == [(96, 72)] * 3
    assert progress[0] == (0, 3, "rendering 3 view(s) with workbench")
    assert [(v, t) for v, t, _ in progress[1:]] == [(1, 3), (2, 3), (3, 3)]
    assert [m.split(" in ")[0] for _, _, m in progress[1:] if m] == [
        f"rendered {view}" for view in views
    ]
    logged = stderr.read_text() + "\n".join(r.getMessage() for r in caplog.records)
    assert "cancel scope" not in logged and "Traceback" not in logged, logged[-2000:]


@asynccontextmanager
async def _http_server(*args: str) -> AsyncIterator[str]:
    """``agentsdk mcp serve ... --http`` in a child process; the URL it announces."""
    proc = await anyio.open_process(
        [*SERVE, *args], env=_env(), stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        assert proc.stderr is not None
        said = ""
        with anyio.fail_after(240):
            async for chunk in TextReceiveStream(proc.stderr):
                said += chunk
                if "serving on " in said and said.endswith("\n"):
                    break
        assert "serving on " in said, f"the server stopped: {said}"
        yield said.rsplit("serving on ", 1)[1].split()[0]
    finally:
        with anyio.CancelScope(shield=True):
            if proc.returncode is None:
                os.killpg(proc.pid, signal.SIGTERM)  # the server closes its toolkits on SIGTERM
                with anyio.move_on_after(60) as waited:
                    await proc.wait()
                if waited.cancelled_caught:
                    os.killpg(proc.pid, signal.SIGKILL)
                    await proc.wait()
            await proc.aclose()


async def test_http_with_a_token_threejs_and_finance() -> None:
    args = ("threejs", "finance", "--http", "127.0.0.1:0", "--token", "s3cret")
    async with _http_server(*args) as url:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
        async with httpx2.AsyncClient() as raw:
            denied = await raw.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
            wrong = await raw.post(url, json={}, headers={"Authorization": "Bearer nope"})
        assert denied.status_code == 401 and wrong.status_code == 401
        assert "Bearer" in denied.headers["www-authenticate"]
        async with httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret"}) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                await _exercise_threejs_and_finance(client)
        # our own client, with and without the token
        with pytest.raises(
            MCPConnectionError, match="unauthorized: this MCP server needs the header Authorization"
        ):
            async with MCPToolkit.http(url, connect_timeout=30):
                pass
        authorised = MCPToolkit.http(
            url, headers={"Authorization": "Bearer s3cret"}, tools=["render"]
        )
        async with authorised:
            [render] = authorised.tools()
            outcome = await render.call({})
            assert not outcome.is_error and len(outcome.images) == 1


def test_http_off_loopback_needs_a_token() -> None:
    done = subprocess.run(
        [*SERVE, "counting:CountingToolkit", "--http", "0.0.0.0:0"],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "needs a bearer token" in done.stderr and "0.0.0.0" in done.stderr


async def test_progress_errors_with_images_and_the_toolkit_lifecycle(tmp_path: Path) -> None:
    log = tmp_path / "life.log"
    params = StdioServerParameters(
        command=SERVE[0],
        args=[*SERVE[1:], "counting:CountingToolkit", "--artifacts", str(tmp_path / "out")],
        env=_env(MCP_TEST_LOG=str(log)),
    )
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    stderr = tmp_path / "stderr.txt"
    with anyio.fail_after(120), stderr.open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:  # type: ignore[arg-type]
            counted = await client.call_tool("count_to", {"n": 3}, progress_callback=on_progress)
            assert counted.content[0].text == "counted to 3"  # type: ignore[union-attr]
            assert progress == [(1, 3, "counted 1"), (2, 3, "counted 2"), (3, 3, "counted 3")]

            broken = await client.call_tool("broken_frame", {})
            assert broken.is_error
            text, picture = broken.content
            assert isinstance(text, mt.TextContent) and "all red" in text.text
            assert isinstance(picture, mt.ImageContent)
            assert png_size(base64.b64decode(picture.data)) == (4, 3)

            refused = await client.call_tool("count_to", {"n": 500})
            assert refused.is_error and "try n=10" in refused.content[0].text  # type: ignore[union-attr]
            wrong = await client.call_tool("count_to", {"n": "three"})
            assert wrong.is_error and "n:" in wrong.content[0].text  # type: ignore[union-attr]
            unknown = await client.call_tool("count_to_ten", {})
            assert unknown.is_error and "count_to" in unknown.content[0].text  # type: ignore[union-attr]

            saved = await client.call_tool("save_note", {"text": "hello"})
            path = Path(saved.content[0].text)  # type: ignore[union-attr]
            assert path.parent == tmp_path / "out" and path.read_text() == "hello"
            events = log.read_text().split()
            assert events[0] == "start" and "close" not in events  # started once, still open
            server_pid = int(events[1])
    # stray prints (at import, in start, from a child process, in a tool) went to stderr
    said = stderr.read_text()
    for line in ("imported", "starting", "a child process writes", "counting: 3"):
        assert line in said
    # the client went away: the toolkit was closed, then the server exited
    lines = log.read_text().splitlines()
    assert [line.split()[0] for line in lines] == ["start", "close"]
    assert not pid_alive(server_pid)


async def test_python_api_serves_tool_functions_in_process() -> None:
    @tool
    def area(width: float, height: float) -> float:
        """Area of a rectangle.

        Args:
            width: In metres.
            height: In metres.
        """
        return width * height

    server = create_server([area], name="geometry")
    async with Client(server) as client:
        [listed] = (await client.list_tools()).tools
        assert listed.name == "area" and listed.description == "Area of a rectangle."
        assert listed.input_schema == area.parameters
        result = await client.call_tool("area", {"width": 2.5, "height": 4})
        assert result.content[0].text == "10.0"  # type: ignore[union-attr]


async def test_an_mcp_server_passed_through_keeps_its_images(everything: list[str]) -> None:
    """Our server in front of server-everything: two hops, and the picture is intact."""
    proxy = MCPToolkit.stdio(everything[0], everything[1:])
    server = create_server([proxy], name="proxy")
    async with Client(server) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"echo", "get-tiny-image", "get-sum"} <= names
        result = await client.call_tool("get-tiny-image", {})
        [image] = [b for b in result.content if isinstance(b, mt.ImageContent)]
        assert png_size(base64.b64decode(image.data)) == (20, 20)
        bad = await client.call_tool("get-sum", {"a": "x", "b": 1})
        assert bad.is_error and "a: expected number" in bad.content[0].text  # type: ignore[union-attr]
        # progress notifications travel both hops too
        progress: list[float] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append(value)

        done = await client.call_tool(
            "trigger-long-running-operation",
            {"duration": 1, "steps": 3},
            progress_callback=on_progress,
        )
        assert not done.is_error and progress == [1.0, 2.0, 3.0]
