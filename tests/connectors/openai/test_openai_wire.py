"""What goes over the wire: request bodies, streamed assembly, and the per-message cache."""

from __future__ import annotations

import base64
import gc

import httpx
import pytest
from agentsdk.tools import ToolSpec
from openai_wire_shapes import DONE, Recorder, chunk, completion, mock_model, sse_response

from agentsdk import (
    ImagePart,
    Message,
    ModelProfile,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    StreamDelta,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

PNG = b"\x89PNG\r\n\x1a\n" + b"0" * 16
ADD = ToolSpec(
    name="add",
    description="Add two integers.",
    parameters={
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    },
)
WEATHER = ToolSpec(
    name="weather",
    description="Weather for a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)


def _conversation() -> list[Message]:
    call = ToolCallPart(id="call_1", name="add", arguments={"a": 1, "b": 2})
    return [
        Message.system("Be brief."),
        Message.user("Add 1 and 2, and look at this", ImagePart(data=PNG, media_type="image/png")),
        Message(role="assistant", parts=[call]),
        Message(
            role="tool",
            parts=[
                ToolResultPart(
                    call_id="call_1", name="add", parts=[TextPart(text="3"), ImagePart(data=PNG)]
                )
            ],
        ),
    ]


@pytest.mark.anyio
async def test_request_body_messages_tools_and_settings() -> None:
    recorder = Recorder(httpx.Response(200, json=completion("3")))
    model = mock_model(
        recorder, profile=ModelProfile(image_input=True, images_in_tool_results=True)
    )
    settings = ModelSettings(
        temperature=0,
        max_tokens=50,
        seed=7,
        tool_choice="required",
        parallel_tool_calls=True,
        extra={"top_k": 20},
    )
    await model.request(
        ModelRequest(messages=_conversation(), tools=[ADD, WEATHER], settings=settings)
    )
    (body,) = recorder.bodies()
    request = recorder.requests[0]
    assert request.url == "http://engine.test/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test-secret-123"
    assert body["model"] == "test-model" and body["temperature"] == 0 and body["max_tokens"] == 50
    assert (
        body["seed"] == 7
        and body["tool_choice"] == "required"
        and body["parallel_tool_calls"] is True
    )
    assert body["top_k"] == 20 and "stream" not in body
    assert [t["function"]["name"] for t in body["tools"]] == ["add", "weather"]
    system, user, assistant, tool = body["messages"]
    assert system == {"role": "system", "content": "Be brief."}
    data_url = "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert user["content"] == [
        {"type": "text", "text": "Add 1 and 2, and look at this"},
        {"type": "image_url", "image_url": {"url": data_url}},
    ]
    assert assistant["tool_calls"] == [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "add", "arguments": '{"a":1,"b":2}'},
        }
    ]
    assert tool["role"] == "tool" and tool["tool_call_id"] == "call_1"
    assert tool["content"][1] == {"type": "image_url", "image_url": {"url": data_url}}


@pytest.mark.anyio
async def test_images_are_replaced_by_a_note_when_the_profile_has_no_vision() -> None:
    recorder = Recorder(httpx.Response(200, json=completion("ok")))
    await mock_model(recorder, profile=ModelProfile(image_input=False)).request(
        ModelRequest(messages=_conversation())
    )
    messages = recorder.bodies()[0]["messages"]
    assert "cannot view images" in messages[1]["content"] and "base64" not in str(messages)
    assert messages[3]["content"].startswith("3\n[an image was here")


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", "auto"),
        ("required", "required"),
        ("none", "none"),
        ("weather", {"type": "function", "function": {"name": "weather"}}),
    ],
)
async def test_tool_choice_on_the_wire(choice: str, wire: object) -> None:
    recorder = Recorder(httpx.Response(200, json=completion("ok")))
    request = ModelRequest(
        messages=[Message.user("hi")],
        tools=[ADD, WEATHER],
        settings=ModelSettings(tool_choice=choice),
    )
    await mock_model(recorder).request(request)
    assert recorder.bodies()[0]["tool_choice"] == wire


@pytest.mark.anyio
async def test_json_schema_response_format_only_when_the_profile_supports_it() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    request = ModelRequest(
        messages=[Message.user("hi")], output_schema=schema, output_name="City Answer"
    )
    supported = Recorder(httpx.Response(200, json=completion('{"city": "Paris"}')))
    await mock_model(supported, engine="vllm").request(request)
    assert supported.bodies()[0]["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "City_Answer", "schema": schema, "strict": False},
    }
    unsupported = Recorder(httpx.Response(200, json=completion("{}")))
    await mock_model(unsupported, engine="dashscope").request(request)
    assert "response_format" not in unsupported.bodies()[0]


@pytest.mark.anyio
async def test_non_streamed_tool_calls_and_usage() -> None:
    recorder = Recorder(
        httpx.Response(
            200,
            json=completion(
                "Checking.",
                [("a1", "add", '{"a": 2, "b": 40}'), ("w1", "weather", '{"city": "Oslo"}')],
                finish_reason="tool_calls",
            ),
        )
    )
    response = await mock_model(recorder).request(
        ModelRequest(messages=[Message.user("hi")], tools=[ADD, WEATHER])
    )
    assert response.text == "Checking." and response.finish_reason == "tool_calls"
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [
        ("a1", "add", {"a": 2, "b": 40}),
        ("w1", "weather", {"city": "Oslo"}),
    ]
    assert (
        response.usage.input_tokens,
        response.usage.output_tokens,
        response.usage.cache_read_tokens,
        response.usage.requests,
    ) == (11, 7, 3, 1)
    assert response.model_name == "vllm:test-model"


@pytest.mark.anyio
async def test_streamed_parallel_tool_calls_are_assembled_by_index() -> None:
    events = [
        chunk({"role": "assistant", "content": None}),
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "a1",
                        "type": "function",
                        "function": {"name": "add", "arguments": ""},
                    }
                ]
            }
        ),
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 1,
                        "id": "w1",
                        "type": "function",
                        "function": {"name": "weather", "arguments": '{"ci'},
                    }
                ]
            }
        ),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"a": 2, '}}]}),
        chunk({"tool_calls": [{"index": 1, "function": {"arguments": 'ty": "Oslo"}'}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"b": 40}'}}]}),
        chunk(finish_reason="tool_calls"),
        chunk(usage={"prompt_tokens": 30, "completion_tokens": 12, "total_tokens": 42}),
        DONE,
    ]
    recorder = Recorder(sse_response(*events))
    request = ModelRequest(messages=[Message.user("hi")], tools=[ADD, WEATHER])
    items = [item async for item in mock_model(recorder).stream(request)]
    body = recorder.bodies()[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    deltas = [i for i in items if isinstance(i, StreamDelta)]
    assert [d.tool_name for d in deltas if d.tool_name] == ["add", "weather"]
    assert (
        "".join(d.arguments_delta for d in deltas if d.tool_call_index == 0) == '{"a": 2, "b": 40}'
    )
    final = items[-1]
    assert isinstance(final, ModelResponse) and final.finish_reason == "tool_calls"
    assert [(c.id, c.name, c.arguments) for c in final.tool_calls] == [
        ("a1", "add", {"a": 2, "b": 40}),
        ("w1", "weather", {"city": "Oslo"}),
    ]
    assert (final.usage.input_tokens, final.usage.output_tokens) == (30, 12)


@pytest.mark.anyio
async def test_streamed_text_deltas_in_order() -> None:
    recorder = Recorder(
        sse_response(
            ": keep-alive\n\n",
            chunk({"content": "Hel"}),
            chunk({"content": "lo"}),
            chunk(finish_reason="stop"),
            DONE,
        )
    )
    items = [
        item
        async for item in mock_model(recorder).stream(ModelRequest(messages=[Message.user("hi")]))
    ]
    assert [i.text for i in items if isinstance(i, StreamDelta)] == ["Hel", "lo"]
    assert isinstance(items[-1], ModelResponse) and items[-1].text == "Hello"


@pytest.mark.anyio
async def test_each_message_is_encoded_once_across_turns() -> None:
    recorder = Recorder(httpx.Response(200, json=completion("ok")))
    model = mock_model(recorder)
    history = [Message.user(f"question {i}") for i in range(40)]
    encoder = model._encoder
    calls = 0
    original = encoder.to_wire

    def counting(message: Message) -> list[dict[str, object]]:
        nonlocal calls
        calls += 1
        return original(message)

    encoder.to_wire = counting  # type: ignore[method-assign]
    for turn in range(1, 6):
        history.append(Message.user(f"turn {turn}"))
        await model.request(ModelRequest(messages=list(history)))
    assert calls == 40 + 5  # every message encoded exactly once
    assert [m["content"] for m in recorder.bodies()[-1]["messages"]][-2:] == ["turn 4", "turn 5"]
    del history
    gc.collect()
    assert len(encoder) == 0  # entries die with their messages
