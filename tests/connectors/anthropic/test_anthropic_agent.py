"""Whole agent runs through agentsdk.Agent with AnthropicModel on the MockTransport."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from pathlib import Path

import pytest
from agentsdk.events import RunFinished
from anthropic_recordings import MakeModel, answer, message_body
from pydantic import BaseModel

from agentsdk import Agent, Image, ToolContext, tool


def tiny_png(rgb: tuple[int, int, int], size: int = 4) -> bytes:
    """A real, decodable PNG of one colour."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    row = b"\x00" + bytes(rgb) * size
    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * size))
        + chunk(b"IEND", b"")
    )


RED_PNG = tiny_png((255, 0, 0))


@tool
def render_cube(color: str, ctx: ToolContext) -> list[str | Image]:
    """Render a cube and return the picture.

    Args:
        color: The cube's colour.
    """
    return [f"rendered a {color} cube (turn {ctx.turn})", Image(RED_PNG, "image/png")]


TOOL_TURN = message_body(
    [
        {"type": "text", "text": "Rendering it now."},
        {
            "type": "tool_use",
            "id": "toolu_01Render",
            "name": "render_cube",
            "input": {"color": "red"},
        },
    ],
    stop_reason="tool_use",
    usage={"input_tokens": 300, "cache_read_input_tokens": 200, "output_tokens": 30},
)
FINAL_TURN = message_body(
    [{"type": "text", "text": "The cube is red and centred."}],
    usage={"input_tokens": 420, "output_tokens": 9},
)


def _check_image_went_inside_the_tool_result(second_body: dict[str, object]) -> None:
    messages = second_body["messages"]
    assert isinstance(messages, list)
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    (result,) = messages[2]["content"]  # exactly one block: no trailing image message
    assert result["type"] == "tool_result" and result["tool_use_id"] == "toolu_01Render"
    text, image = result["content"]
    assert text == {"type": "text", "text": "rendered a red cube (turn 1)"}
    assert image["type"] == "image" and image["source"]["media_type"] == "image/png"
    assert base64.b64decode(image["source"]["data"]) == RED_PNG


@pytest.mark.anyio
async def test_agent_run_tool_call_image_result_then_final_text(
    make_model: MakeModel, tmp_path: Path
) -> None:
    model, fake = make_model(answer(TOOL_TURN), answer(FINAL_TURN))
    agent = Agent(
        model,
        instructions="You build 3D scenes.",
        tools=[render_cube],
        artifacts_dir=tmp_path,
    )
    result = await agent.run("Make a red cube")

    assert result.output == "The cube is red and centred."
    assert len(fake.requests) == 2
    first = fake.body(0)
    assert first["system"] == [{"type": "text", "text": "You build 3D scenes."}]
    assert [t["name"] for t in first["tools"]] == ["render_cube"]
    assert first["tools"][0]["input_schema"]["properties"]["color"]["type"] == "string"
    _check_image_went_inside_the_tool_result(fake.body(1))
    assert result.usage.input_tokens == 300 + 200 + 420
    assert result.usage.cache_read_tokens == 200
    assert result.usage.output_tokens == 39


@pytest.mark.anyio
async def test_agent_stream_assembles_the_same_run_from_sse(
    make_model: MakeModel, tmp_path: Path
) -> None:
    model, fake = make_model(answer(TOOL_TURN), answer(FINAL_TURN))
    agent = Agent(model, tools=[render_cube], artifacts_dir=tmp_path)
    events = [event async for event in agent.stream("Make a red cube")]

    final = events[-1]
    assert isinstance(final, RunFinished) and final.result is not None
    assert final.result.output == "The cube is red and centred."
    assert all(json.loads(r.content)["stream"] is True for r in fake.requests)
    streamed = "".join(getattr(e, "text", "") for e in events if type(e).__name__ == "TextDelta")
    assert streamed == "Rendering it now.The cube is red and centred."
    _check_image_went_inside_the_tool_result(fake.body(1))


class Forecast(BaseModel):
    city: str
    temp_c: float


@pytest.mark.anyio
async def test_agent_output_type_through_the_forced_output_tool(
    make_model: MakeModel, tmp_path: Path
) -> None:
    reply = message_body(
        [
            {
                "type": "tool_use",
                "id": "toolu_01Out",
                "name": "Forecast",
                "input": {"city": "Oslo", "temp_c": -2.5},
            }
        ],
        stop_reason="tool_use",
    )
    model, fake = make_model(answer(reply))
    agent = Agent(model, output_type=Forecast, artifacts_dir=tmp_path)
    result = await agent.run("Forecast for Oslo?")

    assert result.output == Forecast(city="Oslo", temp_c=-2.5)
    body = fake.body()
    assert body["tool_choice"] == {"type": "tool", "name": "Forecast"}
    assert body["tools"][0]["input_schema"]["required"] == ["city", "temp_c"]
